"""Replay files: one recorded game per ``*.replay.jsonl`` file.

    python -m experiments.tournament --game neu --deals 5 --save-replays replays/
    python -m experiments.web --replays replays/          # watch them in the browser

A replay is JSON Lines. The first line is a header, every further line one
move, and the last line the recorded result::

    {"format": "cardzoo-replay", "version": 1, "env": "neu_v0", "game": "neu", "num_players": 4,
     "rule_options": {}, "seed": 123, "agents": ["heuristic", "random", ...], "cardzoo": "0.1.0",
     "move": ["step", "seat", "action"]}
    [0, 0, 17]
    [1, 1, 3]
    ...
    {"result": {"scores": [0, 0, 2, 0], "ranks": [3, 2, 1, 4]}}

The seed and the actions are the source of truth: the engine is reset with
``numpy.random.default_rng(seed)`` (what ``env.reset(seed=seed)`` does) and
the actions are applied in order, which gives back the whole game, every
hidden card included. ``rule_options`` are the engine's resolved options
(defaults filled in), so a later change of a default does not change old
replays. `load` replays the moves and checks that every move was legal and
that the final scores and ranks are the recorded ones.

A replay holds the whole deal (through the seed): it is a spectator's record.
`experiments.web` shows it from one seat's view without sending the seed or
the actions to that seat.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

FORMAT = "cardzoo-replay"
VERSION = 1
SUFFIX = ".replay.jsonl"
MOVE_FIELDS = ["step", "seat", "action"]


def package_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("cardzoo")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def engine_class(game: str):
    import envs

    return envs.module(game).raw_env.engine_cls


def jsonable(x: Any) -> Any:
    """Rule options as JSON writes them (tuples become lists)."""
    if isinstance(x, (tuple, list)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    return x


@dataclass
class Replay:
    """One recorded game: enough to play it again exactly."""

    game: str
    num_players: int
    seed: int
    agents: list[str]
    rule_options: dict = field(default_factory=dict)
    moves: list[tuple[int, int]] = field(default_factory=list)  # (seat, action) in order
    result: dict | None = None  # {"scores": [...], "ranks": [...]} as recorded
    cardzoo: str = ""

    def new_engine(self):
        """A fresh engine for this game, reset with the recorded seed (before the first move)."""
        engine = engine_class(self.game)(self.num_players, **self.rule_options)
        engine.reset(np.random.default_rng(self.seed))
        return engine

    def states(self) -> Iterator[tuple[Any, tuple[int, int] | None]]:
        """(engine, the move that led there) before the first move and after each move.

        The same engine object is yielded every time, stepped in place; a
        move that does not fit (wrong seat, illegal action, game already
        over) raises ValueError naming the step.
        """
        for engine, move, _ in self.steps():
            yield engine, move

    def steps(self) -> Iterator[tuple[Any, tuple[int, int] | None, Any]]:
        """As `states`, with the engine's score event of each move (None when it scored nothing)."""
        engine = self.new_engine()
        yield engine, None, None
        for step, (seat, action) in enumerate(self.moves):
            if engine.game_over:
                raise ValueError(f"{self.game} replay: move {step} comes after the end of the game")
            if seat != engine.current_player:
                raise ValueError(f"{self.game} replay: move {step} is by player_{seat}, but player_{engine.current_player} is to act")
            if not 0 <= action < engine.num_actions or not engine.legal_mask()[action]:
                raise ValueError(f"{self.game} replay: move {step} (action {action}) is not legal for player_{seat}")
            event = engine.step(action)
            yield engine, (seat, action), event

    def final(self) -> dict:
        """Play every move again; the final scores and ranks (ValueError when the game does not end)."""
        engine = None
        for engine, _ in self.states():
            pass
        if not engine.game_over:
            raise ValueError(f"{self.game} replay: the game has not ended after its {len(self.moves)} moves")
        return {"scores": [int(s) for s in engine.scores], "ranks": [int(r) for r in engine.ranks()]}

    def check(self) -> None:
        """ValueError unless playing the moves again ends with the recorded result."""
        got = self.final()
        if self.result is not None and got != self.result:
            raise ValueError(f"{self.game} replay: playing the moves again gives {got}, the file recorded {self.result}")

    # -- text ---------------------------------------------------------------------
    def header(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "env": f"{self.game}_v0",
            "game": self.game,
            "num_players": self.num_players,
            "rule_options": jsonable(self.rule_options),
            "seed": int(self.seed),
            "agents": list(self.agents),
            "cardzoo": self.cardzoo or package_version(),
            "move": MOVE_FIELDS,
        }

    def dumps(self) -> str:
        lines = [json.dumps(self.header(), separators=(",", ":"))]
        lines += [f"[{i},{s},{a}]" for i, (s, a) in enumerate(self.moves)]
        if self.result is not None:
            lines.append(json.dumps({"result": self.result}, separators=(",", ":")))
        return "\n".join(lines) + "\n"


def record(game: str, num_players: int, seed: int, agents: Sequence[str], moves: Sequence[tuple[int, int]],
           scores: Sequence[int], ranks: Sequence[int], rule_options: dict | None = None) -> Replay:
    """A Replay of a game just played, with the engine's resolved rule options."""
    options = engine_class(game)(num_players, **(rule_options or {})).options
    return Replay(
        game=game,
        num_players=num_players,
        seed=int(seed),
        agents=[str(a) for a in agents],
        rule_options=dict(options),
        moves=[(int(s), int(a)) for s, a in moves],
        result={"scores": [int(x) for x in scores], "ranks": [int(x) for x in ranks]},
        cardzoo=package_version(),
    )


def write(path: str | Path, replay: Replay) -> Path:
    """Write a replay file; FileExistsError when `path` exists (a replay is never overwritten).

    The text goes to a temporary file that is then linked to `path`: the link
    fails when `path` exists, and an interrupted write leaves no half-written replay.
    """
    path = Path(path)
    if not path.name.endswith(SUFFIX):
        path = path.with_name(path.name + SUFFIX)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(replay.dumps())
        os.link(tmp, path)  # atomic, and refuses an existing name
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_new(folder: Path, stem: str, replay: Replay) -> Path:
    """Write under ``<stem>.replay.jsonl`` or, when that is taken, the first free ``<stem>-2``, ``-3``, ..."""
    for k in range(1, 100_000):
        try:
            return write(folder / f"{stem}{'' if k == 1 else f'-{k}'}{SUFFIX}", replay)
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no free name for {stem}{SUFFIX}")


def loads(text: str, where: str = "replay") -> Replay:
    """Parse a replay file's text; ValueError with the line number for anything malformed."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ValueError(f"{where}: empty file")

    def bad(i: int, what: str) -> ValueError:
        return ValueError(f"{where}:{i + 1}: {what}")

    try:
        head = json.loads(lines[0])
    except (json.JSONDecodeError, RecursionError):
        raise bad(0, "the header is not JSON") from None
    rep = from_header(head, f"{where}:1")
    for i, line in enumerate(lines[1:], start=1):
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            raise bad(i, "not JSON") from None
        if isinstance(item, dict) and "result" in item and i == len(lines) - 1:
            res = item["result"]
            if not (isinstance(res, dict) and isinstance(res.get("scores"), list) and isinstance(res.get("ranks"), list)):
                raise bad(i, "the result needs lists 'scores' and 'ranks'")
            rep.result = {"scores": [int(x) for x in res["scores"]], "ranks": [int(x) for x in res["ranks"]]}
            continue
        if not (isinstance(item, list) and len(item) == 3 and all(type(x) is int for x in item)):
            raise bad(i, "a move is [step, seat, action], three integers")
        step, seat, action = item
        if step != len(rep.moves):
            raise bad(i, f"move numbered {step}, expected {len(rep.moves)}")
        rep.moves.append((seat, action))
    return rep


def read(path: str | Path) -> Replay:
    path = Path(path)
    return loads(path.read_text(encoding="utf-8"), where=str(path))


def from_header(head: Any, where: str = "replay") -> Replay:
    """A Replay without moves from a parsed header line; ValueError naming the first field that does not fit."""
    import envs

    def bad(what: str) -> ValueError:
        return ValueError(f"{where}: {what}")

    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise bad(f"not a {FORMAT} header")
    if head.get("version") != VERSION:
        raise bad(f"format version {head.get('version')!r}; this cardzoo reads version {VERSION}")
    game, n, seed, agents, options = (head.get(k) for k in ("game", "num_players", "seed", "agents", "rule_options"))
    if game not in envs.available_games():
        raise bad(f"header field game is {str(game)[:40]!r}, not one of {', '.join(envs.available_games())}")
    cls = engine_class(game)
    low, high = cls.player_range(options if isinstance(options, dict) else None)  # a preset fixes its own count
    if type(n) is not int or not low <= n <= high:
        raise bad(f"header field num_players must be an integer from {low} to {high}")
    if type(seed) is not int or seed < 0:
        raise bad("header field seed must be a non-negative integer")
    if not (isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)):
        raise bad(f"header field agents must be a list of {n} strings, one per seat")
    if options is not None and not isinstance(options, dict):
        raise bad("header field rule_options must be an object")
    return Replay(game=game, num_players=n, seed=seed, agents=list(agents), rule_options=dict(options or {}),
                  cardzoo=str(head.get("cardzoo", "")))


def read_header(path: str | Path) -> Replay:
    """Only the first line, checked (cheap, for listing a folder of replays); a Replay without moves."""
    with open(path, encoding="utf-8") as f:
        line = f.readline()
    try:
        head = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        raise ValueError(f"{path}:1: the header is not JSON") from None
    return from_header(head, f"{path}:1")


def load(path: str | Path) -> Replay:
    """Read a replay and check that it replays to its recorded result."""
    rep = read(path)
    rep.check()
    return rep


class MoveRecorder:
    """An agent that plays as the wrapped one and appends each (seat, action) it plays to a list
    shared by the whole table: what `experiments.tournament` wraps its agents in to save replays."""

    def __init__(self, agent: Any, seat: int, moves: list):
        self.agent, self.seat, self.moves = agent, seat, moves

    @classmethod
    def wrap(cls, agents: Sequence[Any]) -> list["MoveRecorder"]:
        moves: list[tuple[int, Any]] = []
        return [cls(a, s, moves) for s, a in enumerate(agents)]

    def act(self, observation: dict) -> Any:
        action = self.agent.act(observation)
        self.moves.append((self.seat, action))
        return action

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)


def save_records(records: list[dict], folder: str | Path, game: str, num_players: int,
                 rule_options: dict | None = None) -> list[Path]:
    """Write the tournament records that carry "moves" as replay files (the moves are taken out of the records).

    One file per game, named ``<game>-<n>p-t<table>-d<deal>-r<rotation>.replay.jsonl``; a name
    already taken (an earlier run into the same folder) gets ``-2``, ``-3``, ... before the suffix.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for r in records:
        moves = r.pop("moves", None)
        if moves is None or r.get("forfeit"):
            continue  # a game an agent forfeited does not replay to an end
        rep = record(game, num_players, r["deal_seed"], r["agents"], moves, r["scores"], r["ranks"], rule_options)
        written.append(write_new(folder, f"{game}-{num_players}p-t{r['table']}-d{r['deal']}-r{r['rotation']}", rep))
    return written
