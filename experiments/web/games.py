"""Play mode: the open games a person plays in the web page against the bots.

`OpenGames` keeps them, bounded (finished and idle games go, the oldest past MAX_GAMES), and
checks each request to start one or to move in one; `LiveGame` is one game, its bots moving up
to the human's next decision; `Bots` seats the built-in kinds only (BOT_KINDS), never a file,
module or path a request names.
"""

from __future__ import annotations

import copy
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from agents import is_upper_bound
from envs.belief import informed
from experiments import replay as replay_format
from experiments.web.frames import frame, round_result, shown_move, shows_frame
from experiments.web.http import ApiError, one_line

MAX_GAMES = 64  # open games kept at once
IDLE_S = 30 * 60  # an open game nobody touched for this long is dropped
MAX_SEED = 2**63 - 1
BOT_KINDS = ("random", "heuristic", "ppo")  # all a request may seat: ppo plays a shipped checkpoint
MAX_BOT_STEPS = 100_000  # moves in one request: more is a bug in an engine or a bot


class Bots:
    """The bots a request may seat: the built-in kinds only (BOT_KINDS), never a file, module or
    path named by the request; ppo plays the shipped checkpoint, read once per server."""

    def __init__(self):
        self._ppo: dict[tuple[str, int], Any] = {}
        self._lock = threading.Lock()

    @staticmethod
    def kinds(game: str, players: int) -> list[str]:
        """The kinds that can play `game` with `players`: ppo only where a checkpoint is shipped."""
        from agents.ppo import checkpoint_path

        return [k for k in BOT_KINDS if k != "ppo" or checkpoint_path(game, players).is_file()]

    def make(self, kind: str, game: str, players: int, seed: int):
        from agents import make_agent

        if kind != "ppo":
            return make_agent(kind, game, players, seed=seed)
        with self._lock:
            template = self._ppo.get((game, players))
            if template is None:
                from agents.ppo import PPOAgent

                template = self._ppo[(game, players)] = PPOAgent.for_game(game, players)
        bot = copy.copy(template)  # the weights are shared and only read; the random stream is the bot's own
        bot.seed(seed)
        return bot


class LiveGame:
    def __init__(self, game: str, players: int, human: int, bots: list[str], seed: int, rule_options: dict,
                 maker: Bots, auto_pass: bool = False):
        engine_cls = replay_format.engine_class(game)
        self.engine = engine_cls(players, **rule_options)
        self.game, self.players, self.human, self.seed = game, players, human, seed
        self.kinds = bots
        # Each bot's own stream, from the game's seed: the same seed and the same human moves give the same game.
        self.bots = [None if s == human else maker.make(bots[s], game, players, seed * 7919 + s) for s in range(players)]
        # A bot told its information state gets its information-set key: the engine keeps its history.
        self.engine.keep_history(any(callable(getattr(b, "inform", None)) for b in self.bots if b is not None))
        self.engine.reset(np.random.default_rng(seed))
        self.auto_pass = auto_pass
        self.step = 0
        self.moves: list[tuple[int, int]] = []
        self.frames: list[dict] = []  # every frame the human was shown: a reloaded page gets them again
        self._rounds: list[dict] = []  # round results not yet shown (a round may end on a move the human sees no frame for)
        self.touched = time.monotonic()

    def bots_move(self) -> list[dict]:
        """The bots' moves up to the human's next decision (or the end), one frame each (see
        `shows_frame`); with `auto_pass`, the human's only legal move is played too."""
        e, frames = self.engine, []
        for _ in range(MAX_BOT_STEPS):
            if e.game_over:
                return frames
            seat = e.current_player
            if seat == self.human:
                legal = np.flatnonzero(e.legal_mask())
                if not (self.auto_pass and legal.size == 1):
                    return frames
                action = int(legal[0])
            else:
                bot = self.bots[seat]  # a search agent's information state comes with the move (envs.belief)
                move = informed(bot, e, seat, upper_bound=is_upper_bound(bot))
                action = int(move({"observation": e.observe(seat), "action_mask": e.legal_mask()}))
            shown = self.apply(seat, action)
            if shown is not None:
                if seat == self.human:
                    shown["auto"] = True  # played for the human: its only move
                frames.append(shown)
        raise RuntimeError(f"{self.game}: the bots made {MAX_BOT_STEPS} moves without the game reaching the human")

    def apply(self, seat: int, action: int) -> dict | None:
        """Play a move; the human's frame for it, or None when the human sees no frame for it.

        A move that ends a round (the engine reports a score event) brings the round's result,
        and, in play mode, every hand as it was when the round ended: the round is over, so
        nothing it shows is still hidden. Before that, the human's frames are its seat's view only.
        """
        e = self.engine
        shown = shown_move(e, seat, action, self.human)
        hands = [e.hand_cards(s) for s in range(self.players)]
        event = e.step(action)
        self.moves.append((seat, action))
        if event is not None:
            self._rounds.append(round_result(e, event, hands))
        if not shows_frame(e, shown, self.human):
            return None
        self.step += 1
        out = frame(e, self.human, self.step, shown)
        if self._rounds:
            out["rounds"], self._rounds = self._rounds, []
        self.frames.append(out)
        return out

    def answer(self, gid: str, frames: list[dict]) -> dict:
        e = self.engine
        acting = not e.game_over and e.current_player == self.human
        legal = [{"action": int(a), "name": e.action_name(int(a), self.human), "why": e.explain_action(int(a), self.human)}
                 for a in np.flatnonzero(e.legal_mask())] if acting else []
        out = {
            "id": gid,
            "game": self.game,
            "players": self.players,
            "human": self.human,
            "agents": ["you" if s == self.human else self.kinds[s] for s in range(self.players)],
            "rule_options": replay_format.jsonable(e.options),
            "auto_pass": self.auto_pass,
            "frames": frames,
            "legal": legal,
            "over": bool(e.game_over),
            "result": self.frames[-1]["result"] if e.game_over else None,
        }
        if e.game_over:
            # Once the game is over the deal may be told: its seed, and the game as a replay file.
            out["seed"] = self.seed
            agents = ["human" if s == self.human else self.kinds[s] for s in range(self.players)]
            out["replay"] = replay_format.record(self.game, self.players, self.seed, agents, self.moves, e.scores,
                                                 e.ranks(), e.options).dumps()
        return out


def _int(body: dict, key: str, default: Any = None) -> Any:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ApiError(400, f"{key} must be an integer, got {repr(value)[:40]}")


class OpenGames:
    """The open games, bounded: finished games go at once, idle ones after IDLE_S, the oldest past MAX_GAMES."""

    FIELDS = ("game", "players", "human", "bots", "seed", "rule_options", "auto_pass")

    def __init__(self, max_games: int = MAX_GAMES, idle_s: float = IDLE_S):
        self.games: OrderedDict[str, LiveGame] = OrderedDict()
        self.max_games, self.idle_s = max_games, idle_s
        self.lock = threading.Lock()
        self.bots = Bots()

    def _drop_stale(self) -> None:
        now = time.monotonic()
        for gid in [g for g, live in self.games.items() if now - live.touched > self.idle_s]:
            del self.games[gid]
        while len(self.games) >= self.max_games:
            self.games.popitem(last=False)

    def create(self, body: dict) -> dict:
        import envs

        unknown = sorted(set(body) - set(self.FIELDS))
        if unknown:
            raise ApiError(400, f"unknown field(s) {', '.join(u[:40] for u in unknown[:5])}; valid fields: {', '.join(self.FIELDS)}")
        game = body.get("game")
        if not isinstance(game, str) or game not in envs.available_games():
            raise ApiError(400, f"unknown game {str(game)[:40]!r}; valid games: {', '.join(envs.available_games())}")
        engine_cls = replay_format.engine_class(game)
        options = body.get("rule_options") or {}
        if not isinstance(options, dict):
            raise ApiError(400, f"rule_options must be an object, got {str(options)[:40]}")
        low, high = engine_cls.player_range(options)  # a preset (rules="small") fixes its own count
        players = _int(body, "players", low if low == high else engine_cls.default_players)
        if not low <= players <= high:
            raise ApiError(400, f"{game} takes {low} to {high} players{' with these rule options' if (low, high) != (engine_cls.min_players, engine_cls.max_players) else ''}, got {players}")
        human = _int(body, "human", 0)
        if not 0 <= human < players:
            raise ApiError(400, f"human must be a seat from 0 to {players - 1}, got {human}")
        bots = body.get("bots", "heuristic")
        if isinstance(bots, str):
            bots = [bots] * players
        # The same answer for every string that is not a built-in kind: the server never says
        # whether a file or module of that name exists, and never looks.
        if not (isinstance(bots, list) and len(bots) == players and all(isinstance(b, str) and b in BOT_KINDS for b in bots)):
            raise ApiError(400, f"bots must be one of {', '.join(BOT_KINDS)}, or a list of {players} of them, one per seat")
        if "ppo" in bots and "ppo" not in self.bots.kinds(game, players):
            raise ApiError(400, f"no ppo checkpoint is shipped for {game} with {players} players; bots: {', '.join(self.bots.kinds(game, players))}")
        seed = _int(body, "seed")
        if seed is None:
            seed = secrets.randbits(32)
        if not 0 <= seed <= MAX_SEED:
            raise ApiError(400, f"seed must be an integer from 0 to 2**63 - 1, got {seed}")
        auto_pass = body.get("auto_pass", False)
        if not isinstance(auto_pass, bool):
            raise ApiError(400, f"auto_pass must be true or false, got {repr(auto_pass)[:40]}")
        unknown = sorted(str(k)[:40] for k in options if k not in engine_cls.OPTIONS)
        if unknown:  # before the engine sees them: num_players or self would clash with its own arguments
            raise ApiError(400, f"{game}: unknown rule option(s) {', '.join(unknown)}; valid options: {', '.join(sorted(engine_cls.OPTIONS)) or 'none'}")
        try:
            live = LiveGame(game, players, human, bots, seed, options, self.bots, auto_pass)
        except ValueError as e:  # the engine's rule-option checks
            raise ApiError(400, one_line(e)) from None
        live.frames.append(frame(live.engine, human, 0, None))
        frames = live.frames[:1] + live.bots_move()
        gid = secrets.token_hex(8)
        with self.lock:
            self._drop_stale()
            self.games[gid] = live  # a finished one too: a reloaded page shows its end
        return live.answer(gid, frames)

    def _open(self, gid: str) -> LiveGame:
        live = self.games.get(gid)
        if live is None:
            raise ApiError(404, f"no open game {gid[:40]!r} (finished and idle games are dropped)")
        self.games.move_to_end(gid)
        live.touched = time.monotonic()
        return live

    def show(self, gid: str) -> dict:
        """An open game from the start, as its human has seen it (for a page that was reloaded)."""
        with self.lock:
            live = self._open(gid)
            return live.answer(gid, list(live.frames))

    def picture(self, gid: str, layout: str) -> bytes:
        """The table now as the human's seat sees it, drawn as ``render_mode="rgb_array"`` draws
        it (`envs.picture.table`, in `layout`), as PNG bytes."""
        import io

        from PIL import Image

        from envs.picture import LAYOUTS, table

        if layout not in LAYOUTS:
            raise ApiError(400, f"layout must be one of {sorted(LAYOUTS)}, got {layout[:40]!r}")
        with self.lock:
            live = self._open(gid)
            name = live.engine.display_name or live.game
            img = table(live.engine, live.human, f"{name}: player_{live.human}'s view (you)", layout)
        out = io.BytesIO()
        Image.fromarray(img).save(out, format="PNG")
        return out.getvalue()

    def act(self, gid: str, body: dict) -> dict:
        with self.lock:
            live = self._open(gid)
            e = live.engine
            if e.game_over:
                raise ApiError(400, f"game {gid!r} is over (its seed was {live.seed})")
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
            return live.answer(gid, frames)

