// cardzoo's page: watch replays from one seat's view, or play against the bots.
// Plain JavaScript, no build step; the server (experiments/web.py) does the game logic.
"use strict";

const $ = (id) => document.getElementById(id);

const state = {
  mode: "watch",
  // watch
  replayId: null, replay: null, pos: 0, timer: null,
  // play
  game: null, shown: [], queue: [], legal: [], result: null, animating: null,
};

async function api(method, url, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(url, opts);
  const data = await res.json();
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

function delay() { return Number($("speed").value); }

// -- drawing a frame ---------------------------------------------------------------------
// In play mode the human's entry in `agents` is "you"; in watch mode every seat shows its agent.
function seatLabel(seat, agents) {
  if (seat === null) return "others (secret)";  // decisions whose seat is kept from this view
  return agents && agents[seat] ? `player_${seat} (${agents[seat]})` : `player_${seat}`;
}

function drawView(frame, you) {
  const view = $("view");
  view.replaceChildren();
  frame.text.split("\n").forEach((line, i) => {
    // The viewer's own line: "player_1 (you): ...", "> player_1: ..." or Neu's "Your hand: ...".
    const bare = line.replace(/^[\s>]+/, "");
    const mine = you !== null && (bare.startsWith(`player_${you} (you)`) || bare.startsWith(`player_${you}:`) || line.startsWith("Your hand"));
    view.append(el("div", { className: (i === 0 ? "head " : "") + (mine ? "you" : ""), textContent: line || " " }));
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
  box.append(el("h2", { textContent: "Final scores and ranks" }), table);
}

function moveText(frame, agents, you) {
  const moved = frame.move ? `${seatLabel(frame.move.seat, agents)}: ${frame.move.name}` : "start of the game";
  if (frame.to_act === null) return moved;
  return `${moved}  →  ${frame.to_act === you ? "your turn" : `player_${frame.to_act} to act`}`;
}

function logItem(frame, agents, you, onClick) {
  const li = el("li", { textContent: frame.move ? `${seatLabel(frame.move.seat, agents)}: ${frame.move.name}` : "start of the game", value: frame.step });
  if (frame.move && frame.move.seat === you) li.classList.add("mine");
  if (onClick) li.addEventListener("click", onClick);
  return li;
}

// -- watch mode ----------------------------------------------------------------------------
async function loadReplays() {
  const { replays } = await api("GET", "/api/replays");
  const list = $("replays");
  list.replaceChildren();
  $("no-replays").classList.toggle("hidden", replays.length > 0);
  for (const r of replays) {
    const b = el("button", { type: "button" }, `${r.game} · ${r.players} players`, el("small", { textContent: r.id }), el("small", { textContent: (r.agents || []).join(", ") }));
    b.dataset.id = r.id;
    b.addEventListener("click", () => openReplay(r.id, "0"));
    list.append(el("li", {}, b));
  }
}

async function openReplay(id, view) {
  stopAutoplay();
  showError(null);
  const keepPos = id === state.replayId ? state.pos : 0;
  try {
    state.replay = await api("GET", `/api/replays/${encodeURIComponent(id)}?view=${encodeURIComponent(view)}`);
  } catch (err) { showError(err); return; }
  state.replayId = id;
  for (const b of $("replays").querySelectorAll("button")) b.classList.toggle("active", b.dataset.id === id);
  const r = state.replay;
  const seat = $("seat");
  seat.replaceChildren();
  for (let s = 0; s < r.players; s++) seat.append(el("option", { value: String(s), textContent: `player_${s} (${r.agents[s]})` }));
  seat.append(el("option", { value: "spectator", textContent: "spectator (shows hidden cards)" }));
  seat.value = String(r.view);
  $("seat-box").classList.remove("hidden");
  $("watch-controls").classList.remove("hidden");
  const you = r.view === "spectator" ? null : r.view;
  const what = you === null ? "as a spectator: every hand is shown" : `from player_${you}'s seat: only what that seat may see`;
  $("info").textContent = `${r.game} · ${r.players} players · ${r.agents.join(", ")} — watching ${what}`;
  const moves = $("moves");
  moves.replaceChildren();
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
  drawView(f, you);
  $("lastmove").textContent = moveText(f, r.agents, you);
  $("slider").value = String(state.pos);
  $("step-label").textContent = `move ${state.pos} / ${r.frames.length - 1}`;
  drawResult(f.over ? f : null, r.agents, you);
  const items = $("moves").children;
  for (let i = 0; i < items.length; i++) items[i].classList.toggle("current", i === state.pos);
  if (items[state.pos]) items[state.pos].scrollIntoView({ block: "nearest" });
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

// -- play mode -------------------------------------------------------------------------------
async function loadSetup() {
  const setup = await api("GET", "/api/setup");
  const games = $("p-game");
  for (const g of setup.games) {
    const o = el("option", { value: g.game, textContent: g.game.replaceAll("_", " ") });
    Object.assign(o.dataset, { min: g.min_players, max: g.max_players, def: g.default_players });
    games.append(o);
  }
  for (const b of setup.bots) $("p-bots").append(el("option", { value: b, textContent: b, selected: b === "heuristic" }));
  games.value = setup.games.some((g) => g.game === "neu") ? "neu" : setup.games[0].game;
  gameChanged();
}

function gameChanged() {
  const o = $("p-game").selectedOptions[0];
  const p = $("p-players");
  p.min = o.dataset.min; p.max = o.dataset.max; p.value = o.dataset.def;
}

async function startGame(ev) {
  ev.preventDefault();
  showError(null);
  const seed = $("p-seed").value.trim();
  const body = {
    game: $("p-game").value, players: Number($("p-players").value), human: Number($("p-seat").value),
    bots: $("p-bots").value, seed: seed === "" ? null : Number(seed),
  };
  let data;
  try { data = await api("POST", "/api/games", body); } catch (err) { showError(err); return; }
  clearTimeout(state.animating);
  state.game = data;
  state.shown = []; state.queue = []; state.legal = []; state.result = null;
  $("moves").replaceChildren();
  $("result").replaceChildren();
  $("info").textContent = `${data.game} · ${data.players} players · you are player_${data.human}; bots: ${data.agents.filter((a) => a !== "you").join(", ")}`;
  receive(data);
}

function receive(data) {
  state.queue.push(...data.frames);
  state.legal = data.legal;
  if (data.over) state.game.seed = data.seed;
  $("legal").replaceChildren();
  animate();
}

// Bot moves appear one by one; the human's buttons come back once all are shown.
function animate() {
  const g = state.game;
  if (state.queue.length === 0) {
    state.animating = null;
    showLegal();
    return;
  }
  const f = state.queue.shift();
  state.shown.push(f);
  drawView(f, g.human);
  $("lastmove").textContent = moveText(f, g.agents, g.human);
  const li = logItem(f, g.agents, g.human, null);
  $("moves").append(li);
  li.scrollIntoView({ block: "nearest" });
  if (f.over) drawResult(f, g.agents, g.human);
  const wait = f.move && f.move.seat !== g.human && state.queue.length > 0 ? delay() : 0;
  state.animating = setTimeout(animate, wait);
}

function showLegal() {
  const box = $("legal");
  box.replaceChildren();
  const last = state.shown[state.shown.length - 1];
  if (last && last.over) {
    box.append(el("span", { className: "note", textContent: `Game over (seed ${state.game.seed}). Start another on the left.` }));
    return;
  }
  if (state.legal.length) box.append(el("h2", { textContent: "Your move" }));
  for (const m of state.legal) {
    const b = el("button", { type: "button", textContent: m.name });
    b.dataset.action = String(m.action);
    b.addEventListener("click", () => act(m.action));
    box.append(b);
  }
}

async function act(action) {
  showError(null);
  $("legal").replaceChildren();
  let data;
  try { data = await api("POST", `/api/games/${state.game.id}/act`, { action }); } catch (err) { showError(err); showLegal(); return; }
  receive(data);
}

// -- wiring ---------------------------------------------------------------------------------------
function setMode(mode) {
  state.mode = mode;
  stopAutoplay();
  $("tab-watch").classList.toggle("active", mode === "watch");
  $("tab-play").classList.toggle("active", mode === "play");
  $("watch-side").classList.toggle("hidden", mode !== "watch");
  $("play-side").classList.toggle("hidden", mode !== "play");
  for (const id of ["seat-box", "watch-controls"]) $(id).classList.toggle("hidden", mode !== "watch" || !state.replay);
  $("legal").classList.toggle("hidden", mode !== "play");
  $("view").replaceChildren(); $("moves").replaceChildren(); $("result").replaceChildren(); $("lastmove").textContent = "";
  $("info").textContent = mode === "watch" ? "Pick a replay on the left." : "Choose a game on the left and press Start.";
  if (mode === "watch" && state.replayId) openReplay(state.replayId, $("seat").value);
  clearTimeout(state.animating);
  state.animating = null; state.queue = []; state.game = null;
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
  $("p-game").addEventListener("change", gameChanged);
  $("play-side").addEventListener("submit", startGame);
  document.addEventListener("keydown", (ev) => {
    if (state.mode !== "watch" || !state.replay || ["INPUT", "SELECT"].includes(document.activeElement.tagName)) return;
    const keys = { ArrowLeft: () => goTo(state.pos - 1), ArrowRight: () => goTo(state.pos + 1), Home: () => goTo(0), End: () => goTo(Infinity), " ": toggleAutoplay };
    if (keys[ev.key]) { ev.preventDefault(); if (ev.key !== " ") stopAutoplay(); keys[ev.key](); }
  });
  loadReplays().catch(showError);
  loadSetup().catch(showError);
}

init();
