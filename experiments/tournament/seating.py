"""Who sits where, and which seed every game and agent gets: agent specs, tables, rotations, seeds.

A *table* is a lineup of agents at one game, one spec per seat (see the
package docstring for the three modes). Nothing here plays a game.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

MODES = ("fill", "round-robin", "one-vs-rest")
BACKENDS = ("local", "ray")  # where deals are played: worker processes here, or Ray tasks on a cluster
ENGINES = ("auto", "vector", "aec")  # the batched engine when every agent at a table acts in batches, or one env per game
ON_ERROR = ("raise", "forfeit")


@dataclass(frozen=True, eq=False)
class AgentSpec:
    """An agent in a tournament: its display name, and what builds it (any `agents.spec` spec) with kwargs."""

    name: str
    kind: Any
    kwargs: tuple = field(default=())  # (key, value) pairs

    @classmethod
    def of(cls, x: Any) -> "AgentSpec":
        if isinstance(x, AgentSpec):
            return x
        from agents import spec_label

        return cls(name=spec_label(x), kind=x)

    def make(self, game: str, num_players: int, seed: int | None = None):
        from agents import make_agent

        return make_agent(self.kind, game, num_players, seed=seed, **dict(self.kwargs))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentSpec):
            return NotImplemented
        return self.name == other.name and self.kwargs == other.kwargs and (self.kind is other.kind or _equal_kinds(self.kind, other.kind))

    def __hash__(self) -> int:
        return hash(self.name)


def _equal_kinds(a: Any, b: Any) -> bool:
    # A user's agent object may define __eq__ that raises or returns an array.
    try:
        return bool(a == b)
    except Exception:
        return False


def distinct(specs: Iterable[AgentSpec]) -> list[AgentSpec]:
    """Specs in first-seen order, each name once."""
    seen: dict[str, AgentSpec] = {}
    for s in specs:
        if s.name in seen and seen[s.name] != s:
            raise ValueError(f"two different agents are both named {s.name!r}; name them apart with label=SPEC")
        seen.setdefault(s.name, s)
    return list(seen.values())


def make_tables(specs: Sequence[AgentSpec | str], num_players: int, mode: str | None = None) -> list[tuple[AgentSpec, ...]]:
    """Lineups (one spec per seat) from a list of agents; see the package docstring."""
    specs = [AgentSpec.of(s) for s in specs]
    if not specs:
        raise ValueError("a tournament needs at least one agent")
    uniq = distinct(specs)
    if mode is None:
        mode = "fill" if len(specs) <= num_players else "round-robin"
    if mode == "fill":
        if len(specs) > num_players:
            raise ValueError(f"mode 'fill' takes at most {num_players} agents for {num_players} seats, got {len(specs)}")
        return [tuple(specs) + (specs[-1],) * (num_players - len(specs))]
    if mode == "round-robin":
        if len(uniq) < num_players:
            raise ValueError(f"mode 'round-robin' needs at least {num_players} distinct agents, got {len(uniq)}")
        return [tuple(c) for c in itertools.combinations(uniq, num_players)]
    if mode == "one-vs-rest":
        if len(uniq) < 2:
            raise ValueError("mode 'one-vs-rest' needs at least 2 distinct agents")
        # At 2 players (x, y) and (y, x) are the same table up to rotation.
        pairs = itertools.combinations(uniq, 2) if num_players == 2 else itertools.permutations(uniq, 2)
        return [(x,) + (y,) * (num_players - 1) for x, y in pairs]
    raise ValueError(f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}")


def seat_lineup(table: Sequence[Any], rotation: int) -> list[Any]:
    """Who sits where in a rotation: lineup entry j goes to seat (j + rotation) % n."""
    n = len(table)
    return [table[(s - rotation) % n] for s in range(n)]


def _seed(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, dtype=np.uint32)[0])


# numpy's SeedSequence constants (numpy/random/bit_generator.pyx), for `seeds_of`.
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715


def seeds_of(*words: Any) -> np.ndarray:
    """`_seed` for many rows at once: each argument is an int (the same for every row) or an int array
    (one per row); the result is ``_seed(*row)`` for every row, computed as numpy's SeedSequence
    computes it (a test checks them against each other), about a hundred times faster than one by one."""
    rows = max((np.size(w) for w in words if np.ndim(w)), default=1)
    columns: list[np.ndarray] = []
    for w in words:
        if np.ndim(w) == 0:
            n = int(w)
            while True:  # an int is its 32-bit words, lowest first (0 is one word)
                columns.append(np.full(rows, n & 0xFFFFFFFF, np.uint32))
                n >>= 32
                if not n:
                    break
        else:
            a = np.asarray(w, np.int64)
            if a.size and (a.min() < 0 or a.max() >= 2**32):
                return np.array([_seed(*r) for r in zip(*(np.broadcast_to(x, rows) for x in words))], np.int64)
            columns.append(a.astype(np.uint32))
    u = np.uint32
    h = u(_INIT_A)
    with np.errstate(over="ignore"):
        def hashmix(v):
            nonlocal h
            v = v ^ h
            h = u(h * u(_MULT_A))
            v = v * h
            return v ^ (v >> u(16))

        def mix(x, y):
            r = u(_MIX_L) * x - u(_MIX_R) * y
            return r ^ (r >> u(16))

        zero = np.zeros(rows, np.uint32)
        pool = [hashmix(columns[i] if i < len(columns) else zero) for i in range(4)]
        for src in range(4):
            for dst in range(4):
                if src != dst:
                    pool[dst] = mix(pool[dst], hashmix(pool[src]))
        for src in range(4, len(columns)):
            for dst in range(4):
                pool[dst] = mix(pool[dst], hashmix(columns[src]))
        out = (pool[0] ^ u(_INIT_B)) * u(u(_INIT_B) * u(_MULT_B))
        return (out ^ (out >> u(16))).astype(np.int64)


def deal_seed(seed: int, deal: int, rotation: int = 0, duplicate: bool = True) -> int:
    """One seed per deal (per game with plain deals); it depends on nothing else."""
    return _seed(seed, deal) if duplicate else _seed(seed, deal, rotation, 1)


def agent_seed(seed: int, deal: int, table: int, rotation: int, seat: int) -> int:
    return _seed(seed, deal, table, rotation, seat, 2)


def batch_seed(seed: int, first_deal: int, table: int) -> int:
    """The seed of a batched agent without per-row streams, for a batch that starts at `first_deal`."""
    return _seed(seed, first_deal, table, 3)


# -- the one check of a tournament's settings ----------------------------------
def check_game(game: str, num_players: int | None, rule_options: dict | None = None) -> int:
    """The player count to use (a preset's own, such as a small preset's two, with `rule_options`);
    ValueError names the valid games or counts."""
    import envs

    available = envs.available_games()
    if game not in available:
        hint = " (the number of deals is --deals)" if str(game).isdigit() else ""
        raise ValueError(f"unknown game {game!r}; valid games: {', '.join(available)}{hint}")
    engine = envs.module(game).raw_env.engine_cls
    low, high = engine.player_range(rule_options)
    if num_players is None:
        return low if low == high else engine.default_players
    if not low <= num_players <= high:
        raise ValueError(f"{game}: players must be from {low} to {high}, got {num_players}")
    return num_players


def _whole(what: str, v: Any, low: int) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{what} must be an integer of at least {low}, got {v!r}")


def check_settings(*, seed: int = 0, workers: int = 1, on_error: str = "raise", move_timeout: float | None = None,
                   backend: str = "local", engine: str = "auto", deals: int = 1, first_deal: int = 0) -> None:
    """Every setting of a run, checked once before any game; ValueError says what is wrong."""
    for what, v, low in (("deals", deals, 1), ("workers", workers, 1), ("first_deal", first_deal, 0), ("seed", seed, 0)):
        _whole(what, v, low)
    for what, v, valid in (("backend", backend, BACKENDS), ("engine", engine, ENGINES), ("on_error", on_error, ON_ERROR)):
        if v not in valid:
            raise ValueError(f"unknown {what} {v!r}; valid: {', '.join(valid)}")
    if backend == "local":  # a Ray cluster sizes its own pool
        from train.cli import check_workers

        check_workers(workers, "workers")
    if move_timeout is not None:
        import signal
        import threading

        if isinstance(move_timeout, bool) or not isinstance(move_timeout, (int, float)) or not (math.isfinite(move_timeout) and move_timeout > 0):
            raise ValueError(f"move_timeout must be a positive number of seconds, got {move_timeout!r}")
        if not hasattr(signal, "setitimer"):
            raise ValueError("move_timeout needs POSIX interval timers, which this platform lacks")
        if backend == "local" and workers <= 1 and threading.current_thread() is not threading.main_thread():
            raise ValueError("move_timeout with workers=1 works only from the main thread; use workers=2 or more")


def check_tables(tables: Sequence[Sequence[Any]], num_players: int) -> tuple[tuple[AgentSpec, ...], ...]:
    tables = tuple(tuple(AgentSpec.of(s) for s in t) for t in tables)
    for t in tables:
        if len(t) != num_players:
            raise ValueError(f"a table has {len(t)} seats, the game has {num_players}")
    distinct(s for t in tables for s in t)
    return tables


def check_agents(specs: Iterable[AgentSpec], game: str, num_players: int) -> None:
    """Build every agent once, here, so that a typo or a missing file fails before any game (ValueError)."""
    from agents import AGENT_KINDS
    from envs.move_guard import AgentExit, guarded_act

    for s in distinct(specs):
        try:  # under the move guard: a constructor that calls os._exit is named, not obeyed
            guarded_act(lambda _: s.make(game, num_players, seed=0), None)
        except AgentExit as e:
            raise ValueError(f"agent {s.name!r} could not be built: {e}") from None
        except Exception as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            if isinstance(s.kind, str) and "unknown agent kind" in msg:
                raise ValueError(f"unknown agent {s.kind!r}; valid agents: {', '.join(AGENT_KINDS)}, ppo:PATH, FILE.py:Name, "
                                 "package.module:Name") from None
            raise ValueError(f"--agents {s.kind!r}: {msg}" if isinstance(s.kind, str) else f"agent {s.name!r}: {msg}") from None
