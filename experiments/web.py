"""Watch recorded games and play against the bots in the browser.

    python -m experiments.tournament --game neu --deals 5 --save-replays replays/
    python -m experiments.web --replays replays/          # then open http://127.0.0.1:8000/

A small server on the standard library's ``http.server``: the games are turn
based, so the bots move on the server inside a request and no other service
is needed. It binds to loopback (127.0.0.1) unless ``--host`` says otherwise.

What a seat sees is what the terminal player shows a human at that seat: the
engine's ``view(seat)`` (its own hand and the public table), its own moves by
name and everyone else's moves as the table sees them
(``public_action_name``: a face-down door card stays face down, the number in
a For You offer stays secret). The spectator view (``render()``: every hand)
is sent only when asked for by name, and a seat's view never carries the
replay's seed or its actions, which would give the deal away.

API (JSON; errors are ``{"error": "<one line>"}`` with status 400, or 404 for
an unknown id):

* ``GET /api/setup`` -> the games (with their player counts) and bot kinds.
* ``GET /api/replays`` -> ``{"replays": [{"id", "game", "players", "agents"}, ...]}``
* ``GET /api/replays/<id>?view=<seat>|spectator`` (default seat 0) -> the
  game's header and ``frames``: one before the first move and one after each
  move, each ``{"step", "move": {"seat", "name"} | null, "text", "to_act",
  "over", "result": {"scores", "ranks"} | null}``. In a seat's view, the
  others' steal decisions in Not Your Ma's Jong (where being asked means
  holding a legal steal) come without seats, as one frame per discard, and
  ``to_act`` is null while they are pending.
* ``POST /api/games`` with ``{"game", "players", "human", "bots", "seed",
  "rule_options"}`` (all but ``game`` optional; ``bots`` is an agent kind or
  one kind per seat) starts a game; the bots play up to the human's first
  decision.
* ``POST /api/games/<id>/act`` with ``{"action": <int>}`` or ``{"name":
  "play 5"}`` plays the human's move, then the bots' moves up to the human's
  next decision.

  Both answer ``{"id", "frames": [the new frames], "legal": [{"action",
  "name"}], "over", "result"}`` from the human's seat. A finished game is
  dropped at once (its seed comes with the last answer); an idle one after
  ``IDLE_S`` seconds, and the oldest when more than ``MAX_GAMES`` are open.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from experiments import replay as replay_format
from experiments.cli import ArgumentParser

STATIC = Path(__file__).with_name("web_static")
STATIC_FILES = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8")}
MAX_GAMES = 64  # open games kept at once
IDLE_S = 30 * 60  # an open game nobody touched for this long is dropped
MAX_BODY = 64 * 1024
MAX_REPLAYS = 5000  # files listed from one folder
FRAME_CACHE = 16  # (replay, view) frame lists kept
MAX_BOT_STEPS = 100_000  # moves in one request: more is a bug in an engine or a bot


class ApiError(Exception):
    """An answer other than 200: status and a one-line reason."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


# -- frames: one seat's view of a game ---------------------------------------------------
def parse_view(text: str | None, num_players: int) -> int | str:
    """A seat number (``"2"`` or ``"player_2"``) or ``"spectator"``; seat 0 when not given."""
    if text is None:
        return 0
    t = text.strip().lower()
    if t == "spectator":
        return "spectator"
    if t.startswith("player_"):
        t = t[len("player_"):]
    if t.isdigit() and int(t) < num_players:
        return int(t)
    raise ApiError(400, f"view must be a seat from 0 to {num_players - 1} or 'spectator', got {text!r}")


# Public move names of decisions where *who* is asked may be a secret: in Not Your Ma's Jong a
# player may be asked about a discard only when it holds a legal steal. A seat's view shows
# such decisions of the others without their seats, merged into one step per discard, and
# never says who is to act while they are pending.
SECRET_DECISIONS = {"decides on the steal"}


def secret_turn(engine) -> bool:
    """The player to act makes a decision whose seat is kept from the others."""
    if engine.game_over:
        return False
    legal = np.flatnonzero(engine.legal_mask())
    return legal.size > 0 and engine.public_action_name(int(legal[0]), engine.current_player) in SECRET_DECISIONS


def shown_move(engine, seat: int, action: int, view: int | str) -> dict:
    """`seat`'s move as `view` sees it, named from the table *before* the move (Not For Me's offer
    counts the cards it takes): by its full name for the one who made it and for the spectator,
    by its public name for the others, without the seat for a secret decision (``"seat": None``)."""
    if view == "spectator" or view == seat:
        return {"seat": seat, "name": engine.action_name(action, seat)}
    name = engine.public_action_name(action, seat)
    return {"seat": None if name in SECRET_DECISIONS else seat, "name": name}


def shows_frame(engine_after, move: dict, view: int | str) -> bool:
    """Whether `view` gets a frame for `move`: another seat's secret decision shows only once
    the decisions on that discard are over (its outcome), not one frame per player asked."""
    return move["seat"] is not None or not secret_turn(engine_after)


def frame(engine, view: int | str, step: int, move: dict | None) -> dict:
    """What `view` sees at its `step`-th frame; `move` (from `shown_move`) is the move that led here."""
    over = bool(engine.game_over)
    hide_actor = view != "spectator" and secret_turn(engine)
    return {
        "step": step,
        "move": move,
        "text": engine.render() if view == "spectator" else engine.view(view),
        "to_act": None if over or hide_actor else int(engine.current_player),
        "over": over,
        "result": {"scores": [int(s) for s in engine.scores], "ranks": [int(r) for r in engine.ranks()]} if over else None,
    }


def replay_frames(rep: replay_format.Replay, view: int | str) -> list[dict]:
    frames, shown = [], None
    for step, (engine, _) in enumerate(rep.states()):
        if shown is None or shows_frame(engine, shown, view):
            frames.append(frame(engine, view, len(frames), shown))
        if step < len(rep.moves):
            shown = shown_move(engine, *rep.moves[step], view)  # the next move, named before it is made
    return frames


# -- replays on disk -------------------------------------------------------------------
class ReplayFolder:
    """The replay files under one folder, by id (the path below the folder, without the suffix)."""

    def __init__(self, folder: str | Path | None):
        self.folder = Path(folder) if folder is not None else None
        self._headers: dict[Path, tuple[float, dict | None]] = {}
        self._frames: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def index(self) -> dict[str, Path]:
        if self.folder is None or not self.folder.is_dir():
            return {}
        paths = sorted(self.folder.rglob("*" + replay_format.SUFFIX))[:MAX_REPLAYS]
        return {p.relative_to(self.folder).as_posix()[: -len(replay_format.SUFFIX)]: p for p in paths}

    def header(self, path: Path) -> dict | None:
        mtime = path.stat().st_mtime
        cached = self._headers.get(path)
        if cached is None or cached[0] != mtime:
            try:
                head = replay_format.read_header(path)
            except (OSError, ValueError, UnicodeDecodeError):
                head = None  # not a replay: left out of the list
            cached = self._headers[path] = (mtime, head)
        return cached[1]

    def listing(self) -> list[dict]:
        out = []
        with self._lock:
            for rid, path in self.index().items():
                head = self.header(path)
                if head is None:
                    continue
                # No seed here: a seat's viewer must not be handed the deal.
                out.append({"id": rid, "game": head.get("game"), "players": head.get("num_players"), "agents": head.get("agents")})
        return out

    def get(self, rid: str, view_text: str | None) -> dict:
        path = self.index().get(rid)
        if path is None:
            raise ApiError(404, f"no replay {rid!r}")
        try:
            rep = replay_format.read(path)
        except (OSError, ValueError, UnicodeDecodeError) as e:
            raise ApiError(400, f"replay {rid!r} cannot be read: {e}") from None
        view = parse_view(view_text, rep.num_players)
        key = (path, path.stat().st_mtime, view)
        with self._lock:
            frames = self._frames.get(key)
            if frames is not None:
                self._frames.move_to_end(key)
        if frames is None:
            try:
                frames = replay_frames(rep, view)
            except ValueError as e:
                raise ApiError(400, f"replay {rid!r} does not replay: {e}") from None
            with self._lock:
                self._frames[key] = frames
                while len(self._frames) > FRAME_CACHE:
                    self._frames.popitem(last=False)
        out = {
            "id": rid,
            "game": rep.game,
            "env": f"{rep.game}_v0",
            "players": rep.num_players,
            "agents": rep.agents,
            "rule_options": replay_format.jsonable(rep.rule_options),
            "view": view,
            "frames": frames,
        }
        if view == "spectator":
            out["seed"] = rep.seed
        return out


# -- games against the bots --------------------------------------------------------------
class LiveGame:
    def __init__(self, game: str, players: int, human: int, bots: list[str], seed: int, rule_options: dict):
        from agents import make_agent

        engine_cls = replay_format.engine_class(game)
        self.engine = engine_cls(players, **rule_options)
        self.engine.reset(np.random.default_rng(seed))
        self.game, self.players, self.human, self.seed = game, players, human, seed
        self.kinds = bots
        # Each bot's own stream, from the game's seed: the same seed and the same human moves give the same game.
        self.bots = [None if s == human else make_agent(bots[s], game, players, seed=seed * 7919 + s) for s in range(players)]
        self.step = 0
        self.touched = time.monotonic()

    def bots_move(self) -> list[dict]:
        """The bots' moves up to the human's next decision (or the end), one frame each (see `shows_frame`)."""
        e, frames = self.engine, []
        for _ in range(MAX_BOT_STEPS):
            if e.game_over or e.current_player == self.human:
                return frames
            seat = e.current_player
            action = int(self.bots[seat].act({"observation": e.observe(seat), "action_mask": e.legal_mask()}))
            shown = self.apply(seat, action)
            if shown is not None:
                frames.append(shown)
        raise RuntimeError(f"{self.game}: the bots made {MAX_BOT_STEPS} moves without the game reaching the human")

    def apply(self, seat: int, action: int) -> dict | None:
        """Play a move; the human's frame for it, or None when the human sees no frame for it."""
        shown = shown_move(self.engine, seat, action, self.human)
        self.engine.step(action)
        if not shows_frame(self.engine, shown, self.human):
            return None
        self.step += 1
        return frame(self.engine, self.human, self.step, shown)

    def answer(self, gid: str, frames: list[dict]) -> dict:
        e = self.engine
        acting = not e.game_over and e.current_player == self.human
        legal = [{"action": int(a), "name": e.action_name(int(a), self.human)} for a in np.flatnonzero(e.legal_mask())] if acting else []
        out = {
            "id": gid,
            "game": self.game,
            "players": self.players,
            "human": self.human,
            "agents": ["you" if s == self.human else self.kinds[s] for s in range(self.players)],
            "frames": frames,
            "legal": legal,
            "over": bool(e.game_over),
            "result": frames[-1]["result"] if frames and e.game_over else None,
        }
        if e.game_over:
            out["seed"] = self.seed  # the deal may be told once the game is over
        return out


def _int(body: dict, key: str, default: Any = None) -> Any:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ApiError(400, f"{key} must be an integer, got {value!r}")


class GameTable:
    """The open games, bounded: finished games go at once, idle ones after IDLE_S, the oldest past MAX_GAMES."""

    FIELDS = ("game", "players", "human", "bots", "seed", "rule_options")

    def __init__(self, max_games: int = MAX_GAMES, idle_s: float = IDLE_S):
        self.games: OrderedDict[str, LiveGame] = OrderedDict()
        self.max_games, self.idle_s = max_games, idle_s
        self.lock = threading.Lock()

    def _drop_stale(self) -> None:
        now = time.monotonic()
        for gid in [g for g, live in self.games.items() if now - live.touched > self.idle_s]:
            del self.games[gid]
        while len(self.games) >= self.max_games:
            self.games.popitem(last=False)

    def create(self, body: dict) -> dict:
        import envs
        from agents import AGENT_KINDS

        unknown = sorted(set(body) - set(self.FIELDS))
        if unknown:
            raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; valid fields: {', '.join(self.FIELDS)}")
        game = body.get("game")
        if not isinstance(game, str) or game not in envs.available_games():
            raise ApiError(400, f"unknown game {game!r}; valid games: {', '.join(envs.available_games())}")
        engine_cls = replay_format.engine_class(game)
        players = _int(body, "players", engine_cls.default_players)
        if not engine_cls.min_players <= players <= engine_cls.max_players:
            raise ApiError(400, f"{game} takes {engine_cls.min_players} to {engine_cls.max_players} players, got {players}")
        human = _int(body, "human", 0)
        if not 0 <= human < players:
            raise ApiError(400, f"human must be a seat from 0 to {players - 1}, got {human}")
        bots = body.get("bots", "heuristic")
        if isinstance(bots, str):
            bots = [bots] * players
        if not (isinstance(bots, list) and len(bots) == players and all(isinstance(b, str) for b in bots)):
            raise ApiError(400, f"bots must be an agent kind ({', '.join(AGENT_KINDS)}) or a list of {players}, one per seat")
        seed = _int(body, "seed")
        if seed is None:
            seed = secrets.randbits(32)
        if seed < 0:
            raise ApiError(400, f"seed must be a non-negative integer, got {seed}")
        options = body.get("rule_options") or {}
        if not isinstance(options, dict):
            raise ApiError(400, f"rule_options must be an object, got {options!r}")
        try:
            live = LiveGame(game, players, human, bots, seed, options)
        except (ValueError, TypeError, FileNotFoundError, ImportError) as e:
            raise ApiError(400, " ".join(str(e).split()) or type(e).__name__) from None
        frames = [frame(live.engine, human, 0, None)] + live.bots_move()
        gid = secrets.token_hex(8)
        with self.lock:
            if not live.engine.game_over:
                self._drop_stale()
                self.games[gid] = live
        return live.answer(gid, frames)

    def act(self, gid: str, body: dict) -> dict:
        with self.lock:
            live = self.games.get(gid)
            if live is None:
                raise ApiError(404, f"no open game {gid!r} (finished and idle games are dropped)")
            self.games.move_to_end(gid)
            live.touched = time.monotonic()
            e = live.engine
            unknown = sorted(set(body) - {"action", "name"})
            if unknown or len(body) != 1:
                raise ApiError(400, "send one of {\"action\": <int>} or {\"name\": \"<move name>\"}")
            if "name" in body:
                if not isinstance(body["name"], str):
                    raise ApiError(400, f"name must be a string, got {body['name']!r}")
                try:
                    action = e.action_from_name(body["name"], live.human)
                except ValueError as err:
                    raise ApiError(400, str(err)) from None
            else:
                action = _int(body, "action")
                if action is None:
                    raise ApiError(400, "action must be an integer, got null")
            legal = e.legal_mask()
            if not 0 <= action < e.num_actions or not legal[action]:
                names = ", ".join(repr(e.action_name(int(a), live.human)) for a in np.flatnonzero(legal))
                shown = f"{action} ({e.action_name(action, live.human)!r})" if 0 <= action < e.num_actions else str(action)
                raise ApiError(400, f"move {shown} is not legal now; legal: {names}")
            frames = [live.apply(live.human, action)] + live.bots_move()
            if e.game_over:
                del self.games[gid]
            return live.answer(gid, frames)


def setup() -> dict:
    """What the page's play form offers: the games with their player counts, and the bot kinds."""
    import envs
    from agents import AGENT_KINDS

    games = []
    for g in envs.available_games():
        cls = replay_format.engine_class(g)
        games.append({"game": g, "min_players": cls.min_players, "max_players": cls.max_players, "default_players": cls.default_players})
    return {"games": games, "bots": list(AGENT_KINDS)}


# -- HTTP ------------------------------------------------------------------------------
class Handler(BaseHTTPRequestHandler):
    server: "WebServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, separators=(",", ":")).encode(), "application/json")

    def _route(self, method: str) -> None:
        try:
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/")[1:]]
            if method == "GET" and url.path in STATIC_FILES:
                name, ctype = STATIC_FILES[url.path]
                self._send(200, (STATIC / name).read_bytes(), ctype)
            elif method == "GET" and parts == ["api", "setup"]:
                self._json(200, setup())
            elif method == "GET" and parts == ["api", "replays"]:
                self._json(200, {"replays": self.server.replays.listing()})
            elif method == "GET" and len(parts) >= 3 and parts[:2] == ["api", "replays"]:
                query = parse_qs(url.query)
                view = query.get("view", [None])[-1]
                self._json(200, self.server.replays.get("/".join(parts[2:]), view))
            elif method == "POST" and parts == ["api", "games"]:
                self._json(200, self.server.games.create(self._body()))
            elif method == "POST" and len(parts) == 4 and parts[:2] == ["api", "games"] and parts[3] == "act":
                self._json(200, self.server.games.act(parts[2], self._body()))
            else:
                raise ApiError(404, f"nothing at {method} {url.path}")
        except ApiError as e:
            self._json(e.status, {"error": str(e)})
        except Exception as e:  # a bug in an engine or a bot: say so in one line, keep serving
            import traceback

            traceback.print_exc()
            self._json(500, {"error": f"internal error: {type(e).__name__}: {' '.join(str(e).split())}"})

    def _body(self) -> dict:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ApiError(400, "bad Content-Length") from None
        if length > MAX_BODY:
            raise ApiError(400, f"request body over {MAX_BODY} bytes")
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"request body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "request body must be a JSON object")
        return body

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")


class WebServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, replays: str | Path | None = None, host: str = "127.0.0.1", port: int = 8000, verbose: bool = False):
        super().__init__((host, port), Handler)
        self.replays = ReplayFolder(replays)
        self.games = GameTable()
        self.verbose = verbose

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="python -m experiments.web", description="Watch replays and play against the bots in the browser.")
    p.add_argument("--replays", default=None, metavar="DIR", help="folder of *.replay.jsonl files (from --save-replays)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    p.add_argument("--verbose", action="store_true", help="log every request")
    args = p.parse_args(argv)
    if args.replays is not None and not Path(args.replays).is_dir():
        p.error(f"--replays {args.replays!r} is not a folder")
    if not 0 <= args.port <= 65535:
        p.error(f"--port must be from 0 to 65535, got {args.port}")
    try:
        server = WebServer(args.replays, args.host, args.port, args.verbose)
    except OSError as e:
        p.error(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}")
    loopback = args.host in ("127.0.0.1", "localhost", "::1")
    where = "loopback only" if loopback else f"on {args.host}: anyone who can reach it can watch replays and play"
    count = len(server.replays.index())
    print(f"cardzoo web: serving {count} replay(s) at {server.url} ({where}); Ctrl-C stops", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
