// cardzoo's page: watch replays from one seat's view, or play against the bots.
// Plain JavaScript, no build step; the server (experiments/web.py) does the game logic.
"use strict";

const $ = (id) => document.getElementById(id);

const state = {
  mode: "watch",
  setup: null,
  // watch
  replayId: null, replay: null, pos: 0, timer: null, replays: [],
  // play
  game: null, shown: [], queue: [], legal: [], animating: null, busy: false, lastBody: null,
};

async function api(method, url, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(url, opts);
  let data;
  try { data = await res.json(); } catch (e) { throw new Error(`${res.status} ${res.statusText}`); }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function showError(err) { $("error").textContent = err ? String(err.message || err) : ""; }

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const c of children) node.append(c);
  return node;
}

// The game's name for people (the engine's display_name, from /api/setup).
function displayName(game) {
  const g = state.setup && state.setup.games.find((x) => x.game === game);
  return g ? g.display : game.replaceAll("_", " ");
}

function delay() { return Number($("speed").value); }

// The URL keeps what is on screen, so that a reload or a shared link comes back to it.
function setHash(params) {
  const text = new URLSearchParams(params).toString();
  history.replaceState(null, "", text ? `#${text}` : location.pathname);
}

// -- cards -----------------------------------------------------------------------------------
// A card name as the engines write it ("Red 3", "-10", "W", "pass", "Spring"): a coloured
// card for a suit colour, a plain one for a number, a dark one for an action or special card.
const COLOURS = ["red", "blue", "green", "yellow"];

function cardEl(name) {
  const text = String(name);
  const words = text.split(" ");
  const colour = COLOURS.find((c) => words[0].toLowerCase() === c);
  let kind = "special";
  if (colour) kind = colour;
  else if (/^-?\d+$/.test(text)) kind = "number";
  const value = colour ? words.slice(1).join(" ") : text;
  const card = el("span", { className: `card ${kind}`, title: text }, el("b", { textContent: value }));
  if (colour) card.dataset.suit = words[0][0].toUpperCase();  // drawn before the value: the suit without colour
  card.setAttribute("aria-label", text);
  return card;
}

function handRow(label, cards, mine) {
  const row = el("div", { className: "hand" + (mine ? " mine" : "") }, el("span", { className: "who", textContent: label }));
  const box = el("span", { className: "cards" });
  if (!cards.length) box.append(el("span", { className: "note", textContent: "no cards" }));
  for (const c of cards) box.append(cardEl(c));
  row.append(box);
  return row;
}

// -- drawing a frame ---------------------------------------------------------------------
// In play mode the human's entry in `agents` is "you"; in watch mode every seat shows its agent.
function seatLabel(seat, agents) {
  if (seat === null) return "others (secret)";  // decisions whose seat is kept from this view
  const a = Array.isArray(agents) ? agents[seat] : null;
  return a ? `player_${seat} (${a})` : `player_${seat}`;
}

function drawView(frame, you, agents) {
  document.body.classList.add("has-table");
  const view = $("view");
  view.replaceChildren();
  frame.text.split("\n").forEach((line, i) => {
    // The viewer's own line: "player_1 (you): ...", "> player_1: ..." or Neu's "Your hand: ...".
    const bare = line.replace(/^[\s>]+/, "");
    const mine = you !== null && (bare.startsWith(`player_${you} (you)`) || bare.startsWith(`player_${you}:`) || line.startsWith("Your hand"));
    view.append(el("div", { className: (i === 0 ? "head " : "") + (mine ? "you" : ""), textContent: line || " " }));
  });
  const hands = $("hands");
  hands.replaceChildren();
  (frame.hands || []).forEach((cards, s) => {
    if (cards) hands.append(handRow(s === you ? "your hand" : seatLabel(s, agents), cards, s === you));
  });
}

function drawResult(frame, agents, you) {
  const box = $("result");
  box.replaceChildren();
  if (!frame || !frame.result) return;
  const { scores, ranks } = frame.result;
  const order = scores.map((_, s) => s).sort((a, b) => ranks[a] - ranks[b] || a - b);
  const table = el("table", {}, el("tr", {}, el("th", { textContent: "rank" }), el("th", { textContent: "seat" }), el("th", { textContent: "score" })));
  for (const s of order) {
    table.append(el("tr", { className: s === you ? "you" : "" },
      el("td", { textContent: String(ranks[s]) }), el("td", { textContent: seatLabel(s, agents) }), el("td", { textContent: String(scores[s]) })));
  }
  const winners = order.filter((s) => ranks[s] === 1).map((s) => seatLabel(s, agents));
  box.append(el("h2", { textContent: "Final scores and ranks" }),
    el("p", { className: "why", textContent: `The game is over: ${winners.join(" and ")} ${winners.length > 1 ? "share" : "takes"} first place.` }), table);
}

function signed(x) { return x > 0 ? `+${x}` : String(x); }

// A round's end in the game's words: the engine's sentence about it, then each seat's change.
function roundText(r, agents) {
  const changes = r.changes.map((d, s) => (d ? `${seatLabel(s, agents)} ${signed(d)}` : null)).filter(Boolean);
  return `${r.sentence}${changes.length ? ` Scores: ${changes.join(", ")}.` : ""}`;
}

function drawReveal(rounds, agents, you) {
  const box = $("reveal");
  box.replaceChildren();
  if (!rounds || !rounds.length) return;
  const r = rounds[rounds.length - 1];
  box.append(el("h2", { textContent: r.hands ? "Round over: every hand" : "Round over" }), el("p", { className: "why", textContent: roundText(r, agents) }));
  (r.hands || []).forEach((cards, s) => box.append(handRow(s === you ? "you" : seatLabel(s, agents), cards, s === you)));
}

function moveText(frame, agents, you) {
  const moved = frame.move ? `${seatLabel(frame.move.seat, agents)}: ${frame.move.name}` : "start of the game";
  if (frame.to_act === null) return moved;
  return `${moved}  →  ${frame.to_act === you ? "your turn" : `player_${frame.to_act} to act`}`;
}

function logItem(frame, agents, you, onClick) {
  let text = frame.move ? `${seatLabel(frame.move.seat, agents)}: ${frame.move.name}` : "start of the game";
  if (frame.auto) text += " (your only move, played for you)";
  const li = el("li", { textContent: text, value: frame.step });
  for (const r of frame.rounds || []) li.append(el("span", { className: "round", textContent: roundText(r, agents) }));
  if (frame.move && frame.move.seat === you) li.classList.add("mine");
  if (onClick) li.addEventListener("click", onClick);
  return li;
}

function clearTable() {
  document.body.classList.remove("has-table");
  for (const id of ["view", "hands", "moves", "result", "reveal", "legal"]) $(id).replaceChildren();
  $("lastmove").textContent = "";
  $("after-game").classList.add("hidden");
}

// -- watch mode ----------------------------------------------------------------------------
async function loadReplays() {
  const { replays } = await api("GET", "/api/replays");
  state.replays = replays;
  const games = [...new Set(replays.filter((r) => !r.unreadable).map((r) => r.game))].sort();
  const filter = $("r-game");
  const keep = filter.value;
  filter.replaceChildren(el("option", { value: "", textContent: "all games" }), ...games.map((g) => el("option", { value: g, textContent: displayName(g) })));
  filter.value = games.includes(keep) ? keep : "";
  drawReplayList();
}

function drawReplayList() {
  const list = $("replays");
  list.replaceChildren();
  const game = $("r-game").value, words = $("r-filter").value.trim().toLowerCase();
  const shown = state.replays.filter((r) => (!game || r.game === game) &&
    (!words || `${r.id} ${r.game || ""} ${Array.isArray(r.agents) ? r.agents.join(" ") : ""}`.toLowerCase().includes(words)));
  $("no-replays").classList.toggle("hidden", state.replays.length > 0);
  const groups = new Map();
  for (const r of shown) {
    const key = r.unreadable ? "unreadable files" : String(r.game);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  for (const [key, items] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
    const ul = el("ul", {});
    for (const r of items) {
      let b;
      if (r.unreadable) {
        b = el("button", { type: "button", disabled: true, title: r.unreadable }, r.id, el("small", { textContent: r.unreadable }));
      } else {
        const agents = Array.isArray(r.agents) ? r.agents : [];
        const won = Array.isArray(r.winners) && r.winners.length ? `won by ${r.winners.map((s) => seatLabel(s, agents)).join(", ")}` : "";
        b = el("button", { type: "button" }, `${r.players} players · ${agents.join(", ")}`, el("small", { textContent: r.id }), el("small", { className: "won", textContent: won }));
        b.addEventListener("click", () => openReplay(r.id, "0"));
      }
      b.dataset.id = r.id;
      b.classList.toggle("active", r.id === state.replayId);
      ul.append(el("li", {}, b));
    }
    list.append(el("details", { open: true }, el("summary", { textContent: `${displayName(key)} (${items.length})` }), ul));
  }
}

async function openReplay(id, view) {
  stopAutoplay();
  showError(null);
  const keepPos = id === state.replayId ? state.pos : 0;
  let r;
  try {
    r = await api("GET", `/api/replays/${encodeURIComponent(id)}?view=${encodeURIComponent(view)}`);
  } catch (err) {
    // nothing of an earlier replay stays on screen under the error
    state.replay = null; state.replayId = null;
    clearTable();
    $("seat-box").classList.add("hidden"); $("watch-controls").classList.add("hidden");
    $("info").textContent = `Replay ${id} cannot be shown.`;
    for (const b of $("replays").querySelectorAll("button")) b.classList.remove("active");
    showError(err);
    return;
  }
  if (state.mode !== "watch") return;
  state.replay = r; state.replayId = id;
  setHash({ watch: id, view: String(r.view) });
  for (const b of $("replays").querySelectorAll("button")) b.classList.toggle("active", b.dataset.id === id);
  const seat = $("seat");
  seat.replaceChildren();
  for (let s = 0; s < r.players; s++) seat.append(el("option", { value: String(s), textContent: seatLabel(s, r.agents) }));
  seat.append(el("option", { value: "spectator", textContent: "spectator (shows hidden cards)" }));
  seat.value = String(r.view);
  $("seat-box").classList.remove("hidden");
  $("watch-controls").classList.remove("hidden");
  const you = r.view === "spectator" ? null : r.view;
  const what = you === null ? "as a spectator: every hand is shown" : `from player_${you}'s seat: only what that seat may see`;
  $("info").textContent = `${displayName(r.game)} · ${r.players} players · ${r.agents.join(", ")} — watching ${what}`;
  setRules(r.game);
  clearTable();
  const moves = $("moves");
  r.frames.forEach((f, i) => moves.append(logItem(f, r.agents, you, () => { stopAutoplay(); goTo(i); })));
  $("slider").max = String(r.frames.length - 1);
  goTo(Math.min(keepPos, r.frames.length - 1));
}

function goTo(pos) {
  const r = state.replay;
  if (!r) return;
  state.pos = Math.max(0, Math.min(pos, r.frames.length - 1));
  const f = r.frames[state.pos];
  const you = r.view === "spectator" ? null : r.view;
  drawView(f, you, r.agents);
  $("lastmove").textContent = moveText(f, r.agents, you);
  $("slider").value = String(state.pos);
  $("step-label").textContent = `move ${state.pos} / ${r.frames.length - 1}`;
  drawResult(f.over ? f : null, r.agents, you);
  drawReveal(f.rounds, r.agents, you);
  const items = $("moves").children;
  for (let i = 0; i < items.length; i++) {
    items[i].classList.toggle("current", i === state.pos);
    items[i].hidden = i > state.pos;  // no spoilers: the log stops at the move shown
  }
  if (items[state.pos]) scrollLogTo(items[state.pos]);
}

// Bring a log item into view by scrolling the log's own box only: scrollIntoView would scroll
// the whole one-column page at phone width and take the board away.
function scrollLogTo(item) {
  const box = $("log");
  const head = box.querySelector("h2");
  const b = box.getBoundingClientRect();
  const r = item.getBoundingClientRect();
  const top = b.top + (head ? head.offsetHeight : 0);
  if (r.top < top) box.scrollTop -= top - r.top;
  else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
}

function stopAutoplay() {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  $("autoplay").textContent = "▶ play";
}

function autoplayTick() {
  if (!state.replay || state.pos >= state.replay.frames.length - 1) { stopAutoplay(); return; }
  goTo(state.pos + 1);
  state.timer = setTimeout(autoplayTick, delay());
}

function toggleAutoplay() {
  if (state.timer) { stopAutoplay(); return; }
  if (!state.replay) return;
  if (state.pos >= state.replay.frames.length - 1) goTo(0);
  $("autoplay").textContent = "⏸ pause";
  state.timer = setTimeout(autoplayTick, delay());
}

// -- rules -----------------------------------------------------------------------------------
// A small Markdown reader for RULES.md: headings, paragraphs, lists, tables and code blocks as
// elements, with **bold**, *italic* and `code` inline. It builds DOM nodes from text nodes only
// (never innerHTML), so nothing in the text can become markup; links show their words.
function markdownInline(text) {
  const out = [];
  const re = /(\*\*[^*]+\*\*|`[^`]+`|\*[^*\s][^*]*\*|\[[^\]]+\]\([^)]*\))/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    const t = m[0];
    if (t.startsWith("**")) out.push(el("strong", { textContent: t.slice(2, -2) }));
    else if (t.startsWith("`")) out.push(el("code", { textContent: t.slice(1, -1) }));
    else if (t.startsWith("[")) out.push(document.createTextNode(t.slice(1, t.indexOf("]("))));
    else out.push(el("em", { textContent: t.slice(1, -1) }));
    last = m.index + t.length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

function markdownBlocks(md) {
  const blocks = [];
  const lines = md.replace(/\r/g, "").split("\n");
  let i = 0;
  const para = [];
  const flush = () => { if (para.length) blocks.push(el("p", {}, ...markdownInline(para.join(" ")))); para.length = 0; };
  while (i < lines.length) {
    const line = lines[i];
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      blocks.push(el("pre", { textContent: code.join("\n") }));
      i++;
    } else if (h) {
      flush();
      blocks.push(el(`h${Math.min(h[1].length + 1, 6)}`, {}, ...markdownInline(h[2])));
      i++;
    } else if (/^\s*\|/.test(line)) {
      flush();
      const table = el("table", { className: "md" });
      for (; i < lines.length && /^\s*\|/.test(lines[i]); i++) {
        const cells = lines[i].trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
        if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
        const tag = table.rows.length === 0 ? "th" : "td";
        table.append(el("tr", {}, ...cells.map((c) => el(tag, {}, ...markdownInline(c)))));
      }
      blocks.push(table);
    } else if (/^\s*([-*]|\d+\.)\s+/.test(line)) {
      flush();
      const ordered = /^\s*\d+\./.test(line);
      const list = el(ordered ? "ol" : "ul", {});
      for (; i < lines.length && /^\s*([-*]|\d+\.)\s+/.test(lines[i]); i++) {
        let text = lines[i].replace(/^\s*([-*]|\d+\.)\s+/, "");
        while (i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1]) && !/^\s*([-*]|\d+\.)\s+/.test(lines[i + 1])) text += " " + lines[++i].trim();
        list.append(el("li", {}, ...markdownInline(text)));
      }
      blocks.push(list);
    } else if (/^\s*(---+|\*\*\*+)\s*$/.test(line)) {
      flush(); blocks.push(el("hr", {})); i++;
    } else if (line.trim() === "") {
      flush(); i++;
    } else {
      para.push(line.trim().replace(/^>\s?/, "")); i++;
    }
  }
  flush();
  return blocks;
}

function setRules(game) {
  const g = state.setup && state.setup.games.find((x) => x.game === game);
  // How to play; below it, folded, the reference (docs/RULES.md) with every decision the original rules left open.
  const reference = el("details", { id: "rules-reference" },
    el("summary", { textContent: "The full reference (docs/RULES.md), with every decision the original rules left open" }),
    ...markdownBlocks(g ? g.reference : ""));
  $("rules-text").replaceChildren(...markdownBlocks(g ? g.rules : ""), ...(g ? [reference] : []));
  $("rules-title").textContent = g ? `Rules: ${displayName(game)}` : "Rules";
}

// -- play mode -------------------------------------------------------------------------------
async function loadSetup() {
  state.setup = await api("GET", "/api/setup");
  const games = $("p-game");
  for (const g of state.setup.games) games.append(el("option", { value: g.game, textContent: g.display }));
  games.value = state.setup.games.some((g) => g.game === "neu") ? "neu" : state.setup.games[0].game;
  gameChanged();
}

function gameInfo() { return state.setup.games.find((g) => g.game === $("p-game").value); }

function gameChanged() {
  const g = gameInfo();
  const p = $("p-players");
  p.min = g.min_players; p.max = g.max_players; p.value = g.default_players;
  const box = $("p-options");
  box.replaceChildren();
  for (const o of g.rule_options) {
    const input = el("input", { id: `opt-${o.name}`, placeholder: o.default === null ? "default" : JSON.stringify(o.default), title: o.help });
    input.dataset.option = o.name;
    box.append(el("label", { htmlFor: input.id, textContent: o.name.replaceAll("_", " ") }), input, el("small", { className: "note", textContent: o.help }));
  }
  if (!g.rule_options.length) box.append(el("p", { className: "note", textContent: "This game has no rule options." }));
  const rules = document.getElementById("opt-rules");
  if (rules) rules.addEventListener("input", presetChanged);
  playersChanged();
  if (state.mode === "play" && !state.game) setRules(g.game);
}

// A preset of the rule option `rules` fixes the player count (a small preset is two players).
function presetChanged() {
  const g = gameInfo();
  const p = $("p-players");
  const fixed = (g.presets || {})[$("opt-rules").value.trim().replaceAll('"', "")];
  if (fixed) { p.min = p.max = p.value = fixed; } else {
    p.min = g.min_players; p.max = g.max_players;
    if (Number(p.value) < g.min_players || Number(p.value) > g.max_players) p.value = g.default_players;
  }
  playersChanged();
}

function playersChanged() {
  const g = gameInfo();
  const kinds = g.bots[$("p-players").value] || ["random", "heuristic"];
  const bots = $("p-bots");
  const keep = bots.value || "heuristic";
  bots.replaceChildren(...kinds.map((k) => el("option", { value: k, textContent: k })));
  bots.value = kinds.includes(keep) ? keep : "heuristic";
  $("p-seat").max = String(Number($("p-players").value) - 1);
}

function formBody() {
  const seed = $("p-seed").value.trim();
  const options = {};
  for (const input of $("p-options").querySelectorAll("input")) {
    const text = input.value.trim();
    if (text === "") continue;
    try { options[input.dataset.option] = JSON.parse(text); } catch (e) { options[input.dataset.option] = text; }
  }
  return {
    game: $("p-game").value, players: Number($("p-players").value), human: Number($("p-seat").value),
    bots: $("p-bots").value, seed: seed === "" ? null : Number(seed), rule_options: options, auto_pass: $("p-auto").checked,
  };
}

// One request at a time: a second click on Start or on a move while one is under way does nothing.
async function busy(work) {
  if (state.busy) return;
  state.busy = true;
  $("start").disabled = true;
  const thinking = setTimeout(() => $("thinking").classList.remove("hidden"), 150);
  try { await work(); } finally {
    clearTimeout(thinking);
    $("thinking").classList.add("hidden");
    state.busy = false;
    $("start").disabled = false;
  }
}

function startGame(ev, body) {
  if (ev) ev.preventDefault();
  body = body || formBody();
  return busy(async () => {
    showError(null);
    let data;
    try { data = await api("POST", "/api/games", body); } catch (err) { showError(err); return; }
    state.lastBody = body;
    if (state.mode !== "play") return;
    beginGame(data, false);
  });
}

function beginGame(data, instant) {
  clearTimeout(state.animating);
  state.game = data;
  state.shown = []; state.queue = []; state.legal = [];
  clearTable();
  setHash({ play: data.id });
  setRules(data.game);
  // On a narrow screen the New-game form folds away while a game is on (it opens again at the end).
  $("p-fold").open = !(matchMedia("(max-width: 900px)").matches && !data.over);
  $("info").textContent = `${displayName(data.game)} · ${data.players} players · you are player_${data.human}; bots: ${data.agents.filter((a) => a !== "you").join(", ")}`;
  receive(data, instant);
  showPictureLink();
}

// The table as the envs draw it (render_mode="rgb_array"), in the layout that fits this screen.
function showPictureLink() {
  const link = $("picture");
  const open = state.mode === "play" && state.game && state.game.id;
  link.classList.toggle("hidden", !open);
  if (!open) return;
  const layout = matchMedia("(max-width: 900px)").matches ? "portrait" : "landscape";
  link.href = `/api/games/${encodeURIComponent(state.game.id)}/picture?layout=${layout}`;
}

async function resumeGame(id) {
  return busy(async () => {
    let data;
    try { data = await api("GET", `/api/games/${encodeURIComponent(id)}`); } catch (err) {
      setHash({});
      state.game = null;
      $("info").textContent = "That game is no longer open (idle games are dropped). Start another.";
      showError(err);
      return;
    }
    if (state.mode === "play") beginGame(data, true);
  });
}

function receive(data, instant) {
  state.queue.push(...data.frames);
  state.legal = data.legal;
  if (data.over) Object.assign(state.game, { seed: data.seed, replay: data.replay, over: true });
  $("legal").replaceChildren();
  animate(instant);
}

// Bot moves appear one by one; the human's buttons come back once all are shown.
function animate(instant) {
  const g = state.game;
  if (!g) return;
  if (state.queue.length === 0) {
    state.animating = null;
    showLegal();
    return;
  }
  const f = state.queue.shift();
  state.shown.push(f);
  drawView(f, g.human, g.agents);
  $("lastmove").textContent = moveText(f, g.agents, g.human);
  const li = logItem(f, g.agents, g.human, null);
  $("moves").append(li);
  scrollLogTo($("moves").lastChild);
  if (f.rounds) drawReveal(f.rounds, g.agents, g.human);
  else if (f.move && f.move.seat === g.human) $("reveal").replaceChildren();  // your next move clears the last round's hands
  if (f.over) drawResult(f, g.agents, g.human);
  if (instant) { animate(true); return; }
  const wait = f.move && f.move.seat !== g.human && state.queue.length > 0 ? delay() : 0;
  state.animating = setTimeout(animate, wait);
}

function showLegal() {
  const box = $("legal");
  box.replaceChildren();
  const last = state.shown[state.shown.length - 1];
  if (last && last.over) {
    box.append(el("span", { className: "note", textContent: `Game over (seed ${state.game.seed}).` }));
    $("p-fold").open = true;
    $("after-game").classList.remove("hidden");
    return;
  }
  if (state.legal.length) box.append(el("h2", { textContent: "Your move" }));
  const why = el("p", { id: "move-why", className: "why-text hidden" });
  why.setAttribute("role", "status");
  for (const m of state.legal) {
    const text = m.why ? `${m.name}: ${m.why}` : m.name;  // the engine's explain_action
    const b = el("button", { type: "button", textContent: m.name, title: text });
    b.dataset.action = String(m.action);
    b.addEventListener("click", () => act(m.action));
    box.append(el("span", { className: "move" }, b, whyMark(m.name, text, why)));
  }
  if (state.legal.length) box.append(why);
}

// A tooltip never shows on a touch screen: each move has a "?" beside it that says, on a tap
// (or Enter), what the move does, in a line under the moves. Not a <button>: the moves are.
function whyMark(name, text, why) {
  const mark = el("span", { className: "why-mark", textContent: "?", tabIndex: 0 });
  mark.setAttribute("role", "button");
  mark.setAttribute("aria-label", `what "${name}" does`);
  const show = (e) => {
    e.preventDefault();
    const same = !why.classList.contains("hidden") && why.dataset.move === name;
    why.textContent = text;
    why.dataset.move = name;
    why.classList.toggle("hidden", same);  // a second tap on the same "?" hides it again
  };
  mark.addEventListener("click", show);
  mark.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") show(e); });
  return mark;
}

function act(action) {
  return busy(async () => {
    showError(null);
    $("legal").replaceChildren();
    let data;
    try { data = await api("POST", `/api/games/${state.game.id}/act`, { action }); } catch (err) { showError(err); showLegal(); return; }
    if (state.mode === "play" && state.game && data.id === state.game.id) receive(data, false);
  });
}

function saveReplay() {
  const g = state.game;
  if (!g || !g.replay) return;
  const a = el("a", { href: URL.createObjectURL(new Blob([g.replay], { type: "application/jsonl" })), download: `${g.game}-${g.players}p-seed${g.seed}.replay.jsonl` });
  document.body.append(a);
  a.click();
  a.remove();
}

function playAgain() {
  const g = state.game;
  if (!g) return;
  const body = { ...(state.lastBody || { game: g.game, players: g.players, human: g.human, bots: g.agents.find((a) => a !== "you") }), seed: g.seed };
  startGame(null, body);
}

// -- wiring ---------------------------------------------------------------------------------------
function setMode(mode) {
  state.mode = mode;
  stopAutoplay();
  clearTimeout(state.animating);
  state.animating = null; state.queue = [];
  $("tab-watch").classList.toggle("active", mode === "watch");
  $("tab-play").classList.toggle("active", mode === "play");
  $("watch-side").classList.toggle("hidden", mode !== "watch");
  $("play-side").classList.toggle("hidden", mode !== "play");
  for (const id of ["seat-box", "watch-controls"]) $(id).classList.toggle("hidden", mode !== "watch" || !state.replay);
  $("legal").classList.toggle("hidden", mode !== "play");
  showPictureLink();
  clearTable();
  if (mode === "watch") {
    $("info").textContent = "Pick a replay.";
    if (state.replayId) openReplay(state.replayId, $("seat").value); else setHash({});
  } else {
    $("info").textContent = "Choose a game and press Start.";
    // the game under way comes back as it was
    if (state.game) resumeGame(state.game.id); else { setHash({}); if (state.setup) setRules($("p-game").value); }
  }
}

function init() {
  $("tab-watch").addEventListener("click", () => setMode("watch"));
  $("tab-play").addEventListener("click", () => setMode("play"));
  $("seat").addEventListener("change", () => openReplay(state.replayId, $("seat").value));
  $("first").addEventListener("click", () => { stopAutoplay(); goTo(0); });
  $("prev").addEventListener("click", () => { stopAutoplay(); goTo(state.pos - 1); });
  $("next").addEventListener("click", () => { stopAutoplay(); goTo(state.pos + 1); });
  $("last").addEventListener("click", () => { stopAutoplay(); goTo(Infinity); });
  $("autoplay").addEventListener("click", toggleAutoplay);
  $("slider").addEventListener("input", () => { stopAutoplay(); goTo(Number($("slider").value)); });
  // the speed is kept across reloads
  const speed = localStorage.getItem("cardzoo-speed");
  if (speed !== null && [...$("speed").options].some((o) => o.value === speed)) $("speed").value = speed;
  $("speed").addEventListener("change", () => localStorage.setItem("cardzoo-speed", $("speed").value));
  $("r-game").addEventListener("change", drawReplayList);
  $("r-filter").addEventListener("input", drawReplayList);
  $("p-game").addEventListener("change", gameChanged);
  $("p-players").addEventListener("change", playersChanged);
  $("play-side").addEventListener("submit", startGame);
  $("again").addEventListener("click", playAgain);
  $("save").addEventListener("click", saveReplay);
  $("rules-open").addEventListener("click", () => {
    $("rules").showModal();
    $("rules").scrollTop = 0;  // opened at the top, whatever took the focus
  });
  $("rules-close").addEventListener("click", () => $("rules").close());
  document.addEventListener("keydown", (ev) => {
    if (state.mode !== "watch" || !state.replay || ["INPUT", "SELECT"].includes(document.activeElement.tagName)) return;
    const keys = { ArrowLeft: () => goTo(state.pos - 1), ArrowRight: () => goTo(state.pos + 1), Home: () => goTo(0), End: () => goTo(Infinity), " ": toggleAutoplay };
    if (keys[ev.key]) { ev.preventDefault(); if (ev.key !== " ") stopAutoplay(); keys[ev.key](); }
  });
  const hash = new URLSearchParams(location.hash.slice(1));
  Promise.all([loadReplays(), loadSetup()]).catch(showError).then(() => {
    if (hash.get("play")) { state.game = { id: hash.get("play") }; setMode("play"); }
    else if (hash.get("watch")) openReplay(hash.get("watch"), hash.get("view") || "0");
  });
}

init();
