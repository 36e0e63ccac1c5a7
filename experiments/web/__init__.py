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

The server is split by job: `experiments.web.http` guards every request,
`experiments.web.frames` makes one seat's view, `experiments.web.replays` lists and
caches the replay files, `experiments.web.games` keeps the open games against the bots;
this module routes the API to them and runs the server.

Only this server's own page may drive it: `experiments.web.http` checks the
``Host``, ``Origin`` and ``Content-Type`` of every request and bounds its body.
Bots are the built-in kinds only (BOT_KINDS); a request never names a file,
a module or a checkpoint path.

API (JSON; errors are ``{"error": "<one line>"}`` with a 4xx status: 400 for
a bad request, 403 for another site, 404 for an unknown id, 411/413/415 for a
body without a length, too long, or not JSON):

* ``GET /api/setup`` -> the games (with their player counts, rule options,
  bot kinds per player count and rules).
* ``GET /api/replays`` -> ``{"replays": [{"id", "game", "players", "agents",
  "winners"} or {"id", "unreadable": "<why>"}, ...], "max_bytes"}``: a file over
  MAX_REPLAY_BYTES or with a header that does not check is never parsed.
* ``GET /api/replays/<id>?view=<seat>|spectator`` (default seat 0) -> the
  game's header and ``frames``: one before the first move and one after each
  move, each ``{"step", "move": {"seat", "name"} | null, "text", "hands",
  "to_act", "over", "result": {"scores", "ranks"} | null}`` (``hands``: the
  card names this view may see, null for the others). Decisions whose taker is
  a secret (the engine's ``secret_actions``) come without seats, as one frame per discard,
  and ``to_act`` is null while they are pending.
* ``POST /api/games`` with ``{"game", "players", "human", "bots", "seed",
  "rule_options", "auto_pass"}`` (all but ``game`` optional; ``bots`` is one
  of BOT_KINDS or one per seat) starts a game; the bots play up to the human's
  first decision (with ``auto_pass``, past the human's moves that are its only
  legal one).
* ``POST /api/games/<id>/act`` with ``{"action": <int>}`` or ``{"name":
  "play 5"}`` plays the human's move, then the bots' moves up to the human's
  next decision.
* ``GET /api/games/<id>`` -> the game from its start, for a reloaded page.

  All three answer ``{"id", "frames": [the new frames], "legal": [{"action",
  "name"}], "over", "result"}`` from the human's seat. The frame of a move that
  ends a round carries ``rounds``: the round's result and every hand as it
  was when the round ended. A finished game's last answer carries its seed
  and the game as replay text; it takes no more moves. Games go when idle
  for ``IDLE_S`` seconds, and the oldest when more than ``MAX_GAMES`` are open.
* ``GET /api/games/<id>/picture?layout=landscape|portrait`` -> the table now
  as the human's seat sees it, as a PNG: the picture ``render_mode="rgb_array"``
  draws (`envs.picture`), so the page and the envs share one drawing.
"""

from __future__ import annotations

from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import SplitResult, parse_qs

from experiments import replay as replay_format
from experiments.cli import ArgumentParser
from experiments.play import rules_for_players, rules_text  # what the terminal's 'rules' and 'rules full' print
from experiments.web.games import BOT_KINDS, Bots, OpenGames
from experiments.web.http import LOOPBACK, GuardedHandler, allowed_hosts
from experiments.web.replays import MAX_REPLAY_BYTES, ReplayFolder

STATIC = Path(__file__).with_name("static")
STATIC_FILES = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8"),
                # Browsers ask for /favicon.ico whatever the page links; both names serve the same picture.
                "/favicon.svg": ("favicon.svg", "image/svg+xml"), "/favicon.ico": ("favicon.svg", "image/svg+xml")}


def setup() -> dict:
    """What the page's play form offers: each game with its player counts, its rule options
    and the bot kinds per player count."""
    import envs

    games = []
    for g in envs.available_games():
        cls = replay_format.engine_class(g)
        options = [{"name": name, "default": replay_format.jsonable(default), "help": help}
                   for name, (default, _, help) in cls.OPTIONS.items()]
        counts = sorted(set(range(cls.min_players, cls.max_players + 1)) | set(cls.PRESET_PLAYERS.values()))
        bots = {n: Bots.kinds(g, n) for n in counts}
        # presets: the player count each value of the rule option `rules` fixes (a small preset is two players)
        games.append({"game": g, "display": cls.display_name or g, "min_players": cls.min_players, "max_players": cls.max_players,
                      "default_players": cls.default_players, "presets": dict(cls.PRESET_PLAYERS),
                      "rule_options": options, "bots": bots,
                      "rules": rules_for_players(g), "reference": rules_text(g)})
    return {"games": games, "bots": list(BOT_KINDS)}


class Handler(GuardedHandler):
    """The page and its API: each path to the replay folder, the open games or the setup."""

    server: "WebServer"

    def answer(self, method: str, url: SplitResult, parts: list[str], body: dict | None) -> None:
        if method == "GET" and url.path in STATIC_FILES:
            name, ctype = STATIC_FILES[url.path]
            self._send(200, (STATIC / name).read_bytes(), ctype)
        elif method == "GET" and parts == ["api", "setup"]:
            self._json(200, self.server.setup)
        elif method == "GET" and parts == ["api", "replays"]:
            self._json(200, {"replays": self.server.replays.listing(), "max_bytes": MAX_REPLAY_BYTES})
        elif method == "GET" and len(parts) >= 3 and parts[:2] == ["api", "replays"]:
            query = parse_qs(url.query)
            view = query.get("view", [None])[-1]
            self._json(200, self.server.replays.get("/".join(parts[2:]), view))
        elif method == "GET" and len(parts) == 3 and parts[:2] == ["api", "games"]:
            self._json(200, self.server.games.show(parts[2]))
        elif method == "GET" and len(parts) == 4 and parts[:2] == ["api", "games"] and parts[3] == "picture":
            layout = parse_qs(url.query, keep_blank_values=True).get("layout", ["landscape"])[-1]  # "layout=" is refused
            self._send(200, self.server.games.picture(parts[2], layout), "image/png")
        elif method == "POST" and parts == ["api", "games"]:
            self._json(200, self.server.games.create(body))
        elif method == "POST" and len(parts) == 4 and parts[:2] == ["api", "games"] and parts[3] == "act":
            self._json(200, self.server.games.act(parts[2], body))
        else:
            super().answer(method, url, parts, body)


class WebServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, replays: str | Path | None = None, host: str = "127.0.0.1", port: int = 8000, verbose: bool = False):
        super().__init__((host, port), Handler)
        self.replays = ReplayFolder(replays)
        self.games = OpenGames()
        self.verbose = verbose
        self.hosts = allowed_hosts(host, self.server_address[1])
        self.setup = setup()

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
    loopback = args.host in LOOPBACK
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

