"""Tournament harness: any agents, any game, any player count, duplicate deals.

    python -m experiments.tournament --game neu --players 4 --agents heuristic,random --deals 2000
    python -m experiments.tournament --game neu --agents mine=bots.py:Greedy,heuristic --db results.sqlite

As a library (runs as written in a plain script or ``python -``, workers included):

    from experiments.tournament import markdown, run_tournament
    result = run_tournament("neu", ["heuristic", "random"], num_players=4, deals=50, workers=2)
    print(markdown([result]))

Agents are any spec of `agents.spec`: ``random``, ``heuristic``, ``ppo``,
``ppo:PATH``, ``FILE.py:Name``, ``package.module:Name``, ``label=SPEC``; from
Python also a class, a factory or an agent object (copied per seat). An agent
that raises, returns anything but a legal integer action, or exceeds
``--move-timeout`` stops the run with an error naming it, its seat, the deal and
the move; ``--on-error forfeit`` scores that game as lost by it and goes on.

## Tables: who sits where
A *table* is a lineup of one agent per seat. The agents you give become
tables by one of three modes (``--mode``):

* ``fill`` (default when you give at most as many agents as seats): the list
  is the lineup, and **the last agent fills the seats left over**.
  ``heuristic,random`` at 4 players is one heuristic against three randoms;
  ``ppo,heuristic`` is one PPO against three heuristics;
  ``heuristic,random,random,random`` says the same seat by seat.
* ``round-robin`` (default when you give more agents than seats): one table
  for every set of ``num_players`` distinct agents.
* ``one-vs-rest``: one table for every ordered pair (X, Y) of distinct
  agents: one X against ``num_players - 1`` Ys. This is what
  ``experiments.compare`` plays, so that every pair meets in both roles.

The same agent in several seats shares one name and one row of statistics;
each seat gets its own agent object (agents may keep memory).

## Duplicate deals
A table plays ``deals`` deals. Deal ``i`` has one seed, derived from
``(seed, i)`` only, and is replayed once for each cyclic rotation of the
seats: in rotation ``r`` the lineup's agent ``j`` sits in seat ``(j + r) % n``.
So over one deal every agent sits in every seat with the same cards, and
different tables share the same deals too. Agents are seeded from
``(seed, deal, table, rotation, seat)`` and ``reset()`` before every game,
which makes a game's result independent of the process that plays it:
``--workers K`` gives identical results for every K.

``--plain`` plays the same number of games with an independent deal per game
(the usual design), for measuring what duplicate deals buy.

## Statistics
The unit of the statistics is a deal at one table: for each agent, its mean
over all its seats in all rotations of that deal. Reported per agent, pooled
over tables (each deal of each table counts once) and per table:

* ``score`` — the game's own currency (``infos["final_scores"]``);
* ``reward`` — the sum of the env's rewards over the game;
* ``win`` — first place, ties shared (two players ranked 1 get 1/2 each);
* ``rank`` — final rank (1 = best, ``infos["final_ranks"]``);

each with a 95% confidence interval, normal on the per-deal means:
``mean ± 1.96 · sd / sqrt(deals)``.

Pairwise, for every two agents that meet: the mean score difference (same
deals, paired) with its CI, how often one finishes ahead of the other
(ties 1/2; the heat map), and what duplicate deals buy (``variance_reduction``
in results.json, "plain deals need ×k games" in results.md): with ``D_g`` the
score difference in game ``g`` and ``d_i`` its mean over the ``n`` rotations
of deal ``i``, the estimate's variance is ``var(d_i) / deals`` with duplicate
deals and ``var(D_g) / games`` with an independent deal per game; their ratio
k is how many times the games independent deals would need for the same
confidence interval (k > 1: duplicate deals help; k < 1: they cost precision).

OpenSkill (Plackett–Luce) ratings are fitted over every game, in a fixed
order, when the tournament has more than two agents: each game ranks the
distinct agents at the table by their mean rank there.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from experiments.cli import ArgumentParser

Z95 = 1.959963984540054  # two-sided 95% normal quantile
MODES = ("fill", "round-robin", "one-vs-rest")
BACKENDS = ("local", "ray")  # where deals are played: worker processes here, or Ray tasks on a cluster
STATS = ("score", "reward", "win", "rank")
MAX_STEPS = 200_000  # a game longer than this is a bug in an engine or agent


# -- agents and tables ---------------------------------------------------------
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
        return self.name == other.name and self.kwargs == other.kwargs and (self.kind is other.kind or _same(self.kind, other.kind))

    def __hash__(self) -> int:
        return hash(self.name)


def _same(a: Any, b: Any) -> bool:
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
    """Lineups (one spec per seat) from a list of agents; see the module docstring."""
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


def deal_seed(seed: int, deal: int, rotation: int = 0, duplicate: bool = True) -> int:
    """One seed per deal (per game with plain deals); it depends on nothing else."""
    return _seed(seed, deal) if duplicate else _seed(seed, deal, rotation, 1)


def agent_seed(seed: int, deal: int, table: int, rotation: int, seat: int) -> int:
    return _seed(seed, deal, table, rotation, seat, 2)


# -- playing -------------------------------------------------------------------
ON_ERROR = ("raise", "forfeit")


class AgentError(RuntimeError):
    """An agent raised, returned an action that is not a legal integer, or took too long."""


class MoveTimeout(Exception):
    pass


@dataclass(frozen=True)
class Job:
    game: str
    num_players: int
    rule_options: tuple
    tables: tuple | None  # lineups of AgentSpec; None when workers inherit them (fork)
    seed: int
    duplicate: bool
    tasks: tuple  # of (table, deal)
    on_error: str = "raise"
    move_timeout: float | None = None
    record_moves: bool = False  # for --save-replays


_CACHE: dict = {}  # per process: envs and agent objects, reused across games
_SHARED: dict = {}  # tables handed to forked workers without pickling them (classes from __main__, lambdas)


def _env(game: str, num_players: int, rule_options: tuple):
    key = ("env", game, num_players, rule_options)
    if key not in _CACHE:
        import envs

        _CACHE[key] = envs.make_raw(game, num_players=num_players, **dict(rule_options))
    return _CACHE[key]


def _agent(spec: AgentSpec, game: str, num_players: int, seat: int):
    # A string spec is its own key; any other is known by identity (kept alive in the cache, so its id is never reused).
    kind = spec.kind if isinstance(spec.kind, str) else id(spec.kind)
    key = ("agent", spec.name, kind, spec.kwargs, game, num_players, seat)
    if key not in _CACHE:
        _CACHE[key] = (spec, spec.make(game, num_players, seed=0))
    return _CACHE[key][1]


def _on_alarm(signum, frame):
    raise MoveTimeout


def _act(agent, obs: dict, move_timeout: float | None):
    if not move_timeout:
        return agent.act(obs)
    import signal

    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, move_timeout)
    try:
        return agent.act(obs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _check_action(action: Any, mask: np.ndarray) -> str | None:
    """Why `action` is not a legal move, or None."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return f"returned {action!r} ({type(action).__name__}), not an integer action"
    if not 0 <= int(action) < len(mask):
        return f"returned action {int(action)}, outside 0..{len(mask) - 1}"
    if not mask[int(action)]:
        return f"returned action {int(action)}, which the action mask rules out"
    return None


def play_game(env, agents: Sequence[Any], seed: int, labels: Sequence[str] | None = None, where: str = "",
              on_error: str = "raise", move_timeout: float | None = None) -> dict:
    """Play one game; per seat: final score, summed reward, final rank.

    An agent that raises, returns something other than a legal integer action,
    or takes more than `move_timeout` seconds raises `AgentError` naming it, its
    seat and the move; with ``on_error="forfeit"`` the game ends there as lost by
    that seat instead (see `forfeit_record`).
    """
    n = len(agents)
    labels = list(labels) if labels is not None else [type(a).__name__ for a in agents]
    env.reset(seed=seed)
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    rewards = [0.0] * n
    final = None
    for steps, name in enumerate(env.agent_iter()):
        if steps >= MAX_STEPS:
            raise RuntimeError(f"game with seed {seed} did not end in {MAX_STEPS} steps")
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            action = None
        else:
            s = seat[name]
            problem = None
            try:
                action = _act(agents[s], obs, move_timeout)
            except MoveTimeout:
                problem = f"took more than {move_timeout:g} s to move"
            except Exception as e:
                problem = f"raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")
            if problem is None:
                problem = _check_action(action, obs["action_mask"])
            if problem is not None:
                msg = f"agent {labels[s]!r} (seat {s}{where}, move {steps}) {problem}"
                if on_error == "forfeit":
                    return forfeit_record(n, s, msg)
                raise AgentError(msg)
            action = int(action)
        env.step(action)
        # The adapter clears rewards at the next step, so summing after every step counts each once.
        for a, r in env.rewards.items():
            rewards[seat[a]] += r
        if final is None:
            for info in env.infos.values():
                if info["illegal_move"] >= 0:
                    raise RuntimeError(f"{env.possible_agents[info['illegal_move']]} made an illegal move (game seed {seed})")
                if any(info["final_ranks"]):
                    final = info
                    break
    if final is None:
        raise RuntimeError(f"game with seed {seed} ended without final scores")
    return {
        "scores": [int(x) for x in final["final_scores"]],
        "ranks": [int(x) for x in final["final_ranks"]],
        "rewards": [float(r) for r in rewards],
        "forfeit": None,
    }


def forfeit_record(n: int, seat: int, error: str) -> dict:
    """A game lost by forfeit: that seat ranks last with reward -1, every other seat
    shares first place with reward 1/(n-1) (zero-sum, like the games' own rewards);
    scores are 0, as no score was reached."""
    return {
        "scores": [0] * n,
        "ranks": [n if s == seat else 1 for s in range(n)],
        "rewards": [-1.0 if s == seat else 1.0 / (n - 1) for s in range(n)],
        "forfeit": {"seat": seat, "error": error},
    }


def _worker_init() -> None:
    # One thread per worker process: the workers already use every core.
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:  # inherited by fork: the variable alone comes too late
        sys.modules["torch"].set_num_threads(1)


def play_job(job: Job) -> list[dict]:
    """Play every rotation of every (table, deal) of a job; records in a fixed order."""
    env = _env(job.game, job.num_players, job.rule_options)
    tables = job.tables if job.tables is not None else _SHARED["tables"]
    n = job.num_players
    out = []
    for t, deal in job.tasks:
        table = tables[t]
        for r in range(n):
            lineup = seat_lineup(table, r)
            agents = []
            for s, spec in enumerate(lineup):
                a = _agent(spec, job.game, n, s)
                if callable(getattr(a, "seed", None)):
                    a.seed(agent_seed(job.seed, deal, t, r, s))
                if callable(getattr(a, "reset", None)):
                    a.reset()
                agents.append(a)
            ds = deal_seed(job.seed, deal, r, job.duplicate)
            labels = [s.name for s in lineup]
            if job.record_moves:
                from experiments.replay import MoveRecorder

                agents = MoveRecorder.wrap(agents)
            g = play_game(env, agents, ds, labels, f", deal {deal}, rotation {r}", job.on_error, job.move_timeout)
            if job.record_moves:
                g["moves"] = agents[0].moves
            if g["forfeit"]:
                g["forfeit"]["agent"] = labels[g["forfeit"]["seat"]]
            out.append({"table": t, "deal": deal, "rotation": r, "deal_seed": ds, "agents": labels, **g})
    return out


def _play_ray_job(job: Job, shared_tables: list) -> list[dict]:
    """`play_job` as a Ray task. The tables are read from Ray's object store once per worker
    process and then kept, so that agents given as objects or classes defined in a script are
    built once per worker and seat (as in forked workers), not once per batch of deals."""
    import ray

    key = shared_tables[0].hex()
    if _SHARED.get("ray_tables") != key:
        _SHARED["tables"] = ray.get(shared_tables[0])
        _SHARED["ray_tables"] = key
    return play_job(job)


def start_method() -> str:
    """How worker processes start. ``fork`` where it is the platform's safe default (Linux):
    workers inherit the agents as they are, so a script with no ``if __name__ == "__main__":``
    guard, ``python -``, a notebook, classes defined in ``__main__`` and lambdas all work.
    Elsewhere ``spawn``: agents must then be importable, and a failure to start says so."""
    return "fork" if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def check_game(game: str, num_players: int | None) -> int:
    """The player count to use; ValueError names the valid games or counts."""
    import envs

    mod = envs.module(game)
    engine = mod.raw_env.engine_cls
    if num_players is None:
        return engine.default_players
    if not engine.min_players <= num_players <= engine.max_players:
        raise ValueError(f"{game}: players must be from {engine.min_players} to {engine.max_players}, got {num_players}")
    return num_players


def play(
    game: str,
    tables: Sequence[Sequence[Any]],
    num_players: int,
    deals: Iterable[int],
    seed: int = 0,
    workers: int = 1,
    duplicate: bool = True,
    rule_options: dict | None = None,
    progress: bool | str = True,
    deadline: float | None = None,
    on_error: str = "raise",
    move_timeout: float | None = None,
    save_replays: str | Path | None = None,
    backend: str = "local",
    ray_address: str | None = None,
) -> list[dict]:
    """Play `deals` (deal indices) at every table; one record per game, in (table, deal, rotation) order.

    Deals are taken one by one (a ``range(10**9)`` costs no memory up front).
    With a `deadline` (a `time.perf_counter()` value) play stops once it has
    passed, and only the deals finished at every table are kept: a prefix of
    `deals`, so the records are exactly those of a run over that prefix.
    With `save_replays` (a folder) every kept game is also written there as a
    replay file (`experiments.replay`).
    ``backend="ray"`` plays the batches of deals as Ray tasks on the cluster at
    `ray_address` (None: a Ray instance started here) instead of `workers`
    processes (`train.distributed.ray_map`); the records are the same.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    tables = tuple(tuple(AgentSpec.of(s) for s in t) for t in tables)
    for t in tables:
        if len(t) != num_players:
            raise ValueError(f"a table has {len(t)} seats, the game has {num_players}")
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    if move_timeout is not None:
        import signal
        import threading

        if not (math.isfinite(move_timeout) and move_timeout > 0):
            raise ValueError(f"move_timeout must be a positive number of seconds, got {move_timeout!r}")
        if not hasattr(signal, "setitimer"):
            raise ValueError("move_timeout needs POSIX interval timers, which this platform lacks")
        if backend == "local" and workers <= 1 and threading.current_thread() is not threading.main_thread():
            raise ValueError("move_timeout with workers=1 works only from the main thread; use workers=2 or more")
    total = len(deals) if hasattr(deals, "__len__") else None  # type: ignore[arg-type]
    opts = tuple(sorted((rule_options or {}).items()))
    if backend == "ray":
        from train.distributed import cluster_cpus, connect

        workers = cluster_cpus(connect(ray_address))  # batch sizes only; the records do not depend on them
    n_tasks = total * len(tables) if total is not None else 50 * workers * 8
    chunk = max(1, min(50, n_tasks // (max(workers, 1) * 8) or 1))
    method = start_method() if workers > 1 and backend == "local" else None
    shared = method == "fork" or backend == "ray"  # Ray: the tables travel once, see _play_ray_job

    def jobs() -> Iterable[Job]:
        # Deal-major order, so that whatever is done when the deadline passes is whole deals.
        batch: list[tuple[int, int]] = []
        for d in deals:
            for t in range(len(tables)):
                batch.append((t, d))
                if len(batch) == chunk:
                    yield Job(game, num_players, opts, None if shared else tables, seed, duplicate, tuple(batch), on_error, move_timeout,
                              save_replays is not None)
                    batch = []
        if batch:
            yield Job(game, num_players, opts, None if shared else tables, seed, duplicate, tuple(batch), on_error, move_timeout,
                              save_replays is not None)

    from tqdm import tqdm

    # No tqdm monitor thread: a thread alive when workers are forked could hold a lock they need.
    tqdm.monitor_interval = 0
    label = progress if isinstance(progress, str) else f"{game} {num_players}p"
    bar_total = total * len(tables) * num_players if total is not None else None
    bar = tqdm(total=bar_total, desc=label, unit="game", disable=not progress, leave=True, dynamic_ncols=True)
    records: list[dict] = []
    done = 0
    _SHARED["tables"] = tables
    try:
        if backend == "ray":
            from train.distributed import ray_map

            import ray

            shared_tables = [ray.put(tables)]  # in a list, so that each task gets the reference, not a fresh copy
            results: Iterable[tuple[Job, list[dict]]] = ray_map(_play_ray_job, jobs(), ray_address, args=(shared_tables,),
                                                                 what="a batch of deals")
        elif workers <= 1:
            results = ((j, play_job(j)) for j in jobs())
        else:
            results = _pool_map(jobs(), workers, method)
        for job, recs in results:
            records += recs
            done += len(job.tasks)
            bar.update(len(job.tasks) * num_players)
            if deadline is not None and done >= len(tables) and time.perf_counter() > deadline:
                break
    finally:
        bar.close()
        _SHARED.pop("tables", None)
    # Only deals finished at every table count.
    finished: dict[int, int] = {}
    for r in records:
        if r["rotation"] == 0:
            finished[r["deal"]] = finished.get(r["deal"], 0) + 1
    kept = {d for d, k in finished.items() if k == len(tables)}
    records = [r for r in records if r["deal"] in kept]
    position: dict[int, int] = {}
    for r in records:
        position.setdefault(r["deal"], len(position))
    records.sort(key=lambda r: (r["table"], position[r["deal"]], r["rotation"]))
    if save_replays is not None:
        from experiments.replay import save_records

        save_records(records, save_replays, game, num_players, rule_options)
    return records


def _pool_map(jobs: Iterable[Job], workers: int, method: str) -> Iterable[tuple[Job, list[dict]]]:
    """`play_job` over `jobs` in worker processes, results in order, a bounded number in flight.

    A pool that breaks (a worker that cannot start or dies) raises one clear
    RuntimeError instead of hanging; Ctrl-C stops the workers at once.
    """
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ex = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method), initializer=_worker_init)
    pending: deque = deque()
    it = iter(jobs)
    ok = False
    try:
        for job in itertools.islice(it, 4 * workers):
            pending.append((job, ex.submit(play_job, job)))
        while pending:
            job, fut = pending.popleft()
            yield job, fut.result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt, ex.submit(play_job, nxt)))
        ok = True
    except BrokenProcessPool as e:
        raise RuntimeError(
            f"could not run games in {workers} worker processes: a worker died or could not start ({method} start method"
            + (", which re-runs your script: put its code under if __name__ == '__main__':" if method == "spawn" else "")
            + "); use workers=1"
        ) from None
    finally:
        if not ok:
            for p in list(getattr(ex, "_processes", {}).values()):
                p.terminate()
        ex.shutdown(wait=ok, cancel_futures=True)


# -- statistics ----------------------------------------------------------------
def mean_ci(values: Sequence[float]) -> dict:
    """Mean and 95% normal CI of the mean: mean ± 1.96 · sd(ddof=1) / sqrt(n)."""
    x = np.asarray(values, dtype=float)
    m = len(x)
    mean = float(x.mean()) if m else float("nan")
    half = float(Z95 * x.std(ddof=1) / math.sqrt(m)) if m > 1 else float("nan")
    return {"mean": mean, "ci_low": mean - half, "ci_high": mean + half, "half_width": half, "n": m}


def win_shares(ranks: Sequence[int]) -> list[float]:
    """First place, ties shared: each of k players ranked best gets 1/k."""
    best = min(ranks)
    k = sum(1 for r in ranks if r == best)
    return [1.0 / k if r == best else 0.0 for r in ranks]


def _per_game(rec: dict) -> dict[str, dict[str, float]]:
    """Per agent name in one game: its mean over its seats of score, reward, win, rank."""
    wins = win_shares(rec["ranks"])
    out: dict[str, dict[str, list[float]]] = {}
    for s, name in enumerate(rec["agents"]):
        d = out.setdefault(name, {k: [] for k in STATS})
        d["score"].append(rec["scores"][s])
        d["reward"].append(rec["rewards"][s])
        d["win"].append(wins[s])
        d["rank"].append(rec["ranks"][s])
    return {name: {k: float(np.mean(v)) for k, v in d.items()} for name, d in out.items()}


def _units(records: Sequence[dict]) -> dict[tuple[int, int], list[dict]]:
    units: dict[tuple[int, int], list[dict]] = {}
    for rec in records:
        units.setdefault((rec["table"], rec["deal"]), []).append(rec)
    return units


def agent_stats(records: Sequence[dict]) -> dict[str, dict]:
    """Per agent: each statistic's mean and CI over (table, deal) units."""
    per_unit: dict[str, dict[str, list[float]]] = {}
    games: dict[str, int] = {}
    for recs in _units(records).values():
        acc: dict[str, dict[str, list[float]]] = {}
        for rec in recs:
            for name, v in _per_game(rec).items():
                games[name] = games.get(name, 0) + 1
                d = acc.setdefault(name, {k: [] for k in STATS})
                for k in STATS:
                    d[k].append(v[k])
        for name, d in acc.items():
            u = per_unit.setdefault(name, {k: [] for k in STATS})
            for k in STATS:
                u[k].append(float(np.mean(d[k])))
    return {name: {**{k: mean_ci(u[k]) for k in STATS}, "games": games[name]} for name, u in per_unit.items()}


def variance_reduction(var_plain: float, var_duplicate: float) -> float:
    """var_plain / var_duplicate; infinite when the per-deal differences cancel exactly (two agents
    that make the same moves: only rounding is left of var_duplicate), NaN when undefined."""
    if not var_plain > 0:
        return float("nan")
    return float("inf") if var_duplicate <= 1e-12 * var_plain else var_plain / var_duplicate


def pairwise(records: Sequence[dict], names: Sequence[str]) -> dict:
    """For every ordered pair that met: score difference (paired by deal) with CI,
    share of finishing ahead (ties 1/2), and the variance reduction of duplicate deals."""
    diff_unit: dict[tuple[str, str], list[float]] = {}
    diff_game: dict[tuple[str, str], list[float]] = {}
    ahead: dict[tuple[str, str], list[float]] = {}
    for recs in _units(records).values():
        acc: dict[tuple[str, str], list[float]] = {}
        for rec in recs:
            pg = _per_game(rec)
            for a, b in itertools.permutations(pg, 2):
                d = pg[a]["score"] - pg[b]["score"]
                acc.setdefault((a, b), []).append(d)
                diff_game.setdefault((a, b), []).append(d)
            for i, j in itertools.permutations(range(len(rec["agents"])), 2):
                a, b = rec["agents"][i], rec["agents"][j]
                if a != b:
                    ri, rj = rec["ranks"][i], rec["ranks"][j]
                    ahead.setdefault((a, b), []).append(1.0 if ri < rj else 0.5 if ri == rj else 0.0)
        for k, v in acc.items():
            diff_unit.setdefault(k, []).append(float(np.mean(v)))
    out = {}
    for (a, b), units in diff_unit.items():
        per_game = np.asarray(diff_game[(a, b)])
        u = np.asarray(units)
        var_dup = float(u.var(ddof=1) / len(u)) if len(u) > 1 else float("nan")
        var_plain = float(per_game.var(ddof=1) / len(per_game)) if len(per_game) > 1 else float("nan")
        out[f"{a} vs {b}"] = {
            "a": a,
            "b": b,
            "score_diff": mean_ci(u),
            "ahead": float(np.mean(ahead[(a, b)])) if (a, b) in ahead else float("nan"),
            "var_duplicate": var_dup,
            "var_plain": var_plain,
            "variance_reduction": variance_reduction(var_plain, var_dup),
        }
    return out


def openskill_ratings(records: Sequence[dict], names: Sequence[str], min_agents: int = 3) -> dict | None:
    """Plackett–Luce ratings over all games in record order; None with fewer than `min_agents` agents
    (two agents are compared by their score table instead)."""
    if len(names) < min_agents:
        return None
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in names}
    for rec in records:
        mean_rank: dict[str, list[int]] = {}
        for name, r in zip(rec["agents"], rec["ranks"]):
            mean_rank.setdefault(name, []).append(r)
        present = list(mean_rank)
        if len(present) < 2:
            continue
        new = model.rate([[ratings[n]] for n in present], ranks=[float(np.mean(mean_rank[n])) for n in present])
        for n, team in zip(present, new):
            ratings[n] = team[0]
    return {n: {"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())} for n, r in ratings.items()}


def summarize(records: Sequence[dict], tables: Sequence[Sequence[AgentSpec]], game: str, num_players: int, **config: Any) -> dict:
    names = [s.name for s in distinct(s for t in tables for s in t)]
    per_table = []
    for t, table in enumerate(tables):
        recs = [r for r in records if r["table"] == t]
        per_table.append({"lineup": [s.name for s in table], "agents": agent_stats(recs), "pairwise": pairwise(recs, names)})
    return {
        "game": game,
        "num_players": num_players,
        "agents": names,
        "games_played": len(records),
        **config,
        "overall": agent_stats(records),
        "pairwise": pairwise(records, names),
        "openskill": openskill_ratings(records, names),
        "forfeits": forfeits(records, names),
        "tables": per_table,
    }


def forfeits(records: Sequence[dict], names: Sequence[str]) -> dict[str, int]:
    """Games each agent lost by forfeit (with ``on_error="forfeit"``)."""
    out = {n: 0 for n in names}
    for r in records:
        if r.get("forfeit"):
            out[r["forfeit"]["agent"]] = out.get(r["forfeit"]["agent"], 0) + 1
    return out


def run_tournament(
    game: str,
    agents: Sequence[AgentSpec | str],
    num_players: int | None = None,
    deals: int = 100,
    seed: int = 0,
    workers: int = 1,
    mode: str | None = None,
    duplicate: bool = True,
    rule_options: dict | None = None,
    progress: bool | str = True,
    first_deal: int = 0,
    on_error: str = "raise",
    move_timeout: float | None = None,
    save_replays: str | Path | None = None,
    backend: str = "local",
    ray_address: str | None = None,
) -> dict:
    """Play a tournament and return its summary (plus "records", one per game).

    ``agents`` are specs (see `agents.spec`): names such as "heuristic" or
    "bots.py:Greedy", classes, factories, agent objects (copied per seat) or
    `AgentSpec` for a name of your choosing. An agent that fails raises
    `AgentError` naming it, its seat, deal and move, or with
    ``on_error="forfeit"`` loses that game and play goes on.
    """
    for what, v, low in (("deals", deals, 1), ("workers", workers, 1), ("first_deal", first_deal, 0), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{what} must be an integer of at least {low}, got {v!r}")
    num_players = check_game(game, num_players)
    tables = make_tables(agents, num_players, mode)
    for spec in distinct(s for t in tables for s in t):
        spec.make(game, num_players, seed=0)  # fail early, in this process, on a missing agent
    t0 = time.perf_counter()
    records = play(game, tables, num_players, range(first_deal, first_deal + deals), seed, workers, duplicate, rule_options, progress,
                   on_error=on_error, move_timeout=move_timeout, save_replays=save_replays, backend=backend, ray_address=ray_address)
    wall = time.perf_counter() - t0
    result = summarize(records, tables, game, num_players, deals=deals, seed=seed, duplicate=duplicate, workers=workers,
                       rule_options=dict(rule_options or {}), wall_s=wall, backend=backend)
    result["records"] = records
    return result


# -- reports -------------------------------------------------------------------
def _fmt(s: dict, digits: int = 2) -> str:
    if math.isnan(s["half_width"]):
        return f"{s['mean']:.{digits}f}"
    return f"{s['mean']:.{digits}f} ± {s['half_width']:.{digits}f}"


COLUMN_NOTES = """\
What the columns mean:

- **score / game**: the game's own final score (chips, points, tokens: `infos["final_scores"]`), an absolute amount.
- **reward / game**: the sum of the env's rewards, each a score change minus the table's mean change, so rewards
  sum to zero at every table: an agent can end with a positive score and a negative reward when the others did better, or the reverse.
- **win rate**: share of games finished first (ties shared); **mean rank**: 1 = best.
- **OpenSkill μ ± σ**: a Plackett–Luce rating fitted over every game (σ is one standard deviation, as in the plot).
  It rewards finishing above *everyone* at the table, so with 3+ players it can order two agents differently from their
  head-to-head: an agent that beats B when they meet may still rank below B if B finishes above the others more often.
- **games**: games the agent played (every seat of every deal).
- **score diff A − B**: mean over deals of A's score minus B's, on the same cards (paired).
- **A ahead of B**: share of games where A finished above B (ties count 1/2).
- **plain deals need ×k games**: to reach the CI of this duplicate-deal design, independent deals would need k times as many
  games; k > 1 means duplicate deals help, k < 1 that they cost precision for this pair; ∞: the pair's differences
  cancel exactly on every deal (two agents that make the same moves), so any number of plain deals is worse.
- ± is a 95% confidence interval (normal, over per-deal means); every agent sits in every seat of every deal.
"""


def markdown(results: Sequence[dict], notes: bool = True) -> str:
    """One table for all results: a row per game, player count and agent, plus pairwise score differences,
    then what each column means."""
    lines = [
        "| game | players | agent | score / game | reward / game | win rate | mean rank | OpenSkill μ ± σ | games |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        skill = res.get("openskill") or {}
        lost = res.get("forfeits") or {}
        for name in res["agents"]:
            s = res["overall"][name]
            sk = f"{skill[name]['mu']:.1f} ± {skill[name]['sigma']:.1f}" if name in skill else "–"
            games = f"{s['games']}" + (f" ({lost[name]} forfeited)" if lost.get(name) else "")
            lines.append(
                f"| {res['game']} | {res['num_players']} | {name} | {_fmt(s['score'])} | {_fmt(s['reward'])} | "
                f"{_fmt(s['win'])} | {_fmt(s['rank'])} | {sk} | {games} |"
            )
    lines += ["", "| game | players | A vs B | score diff A − B | A ahead of B | plain deals need ×k games | deals × tables |", "|---|---|---|---|---|---|---|"]
    for res in results:
        names = res["agents"]
        for a, b in itertools.combinations(names, 2):
            p = res["pairwise"].get(f"{a} vs {b}")
            if p is None:
                continue
            d = p["score_diff"]
            k = p["variance_reduction"]
            lines.append(
                f"| {res['game']} | {res['num_players']} | {a} vs {b} | {_fmt(d)} | {p['ahead']:.1%} | "
                f"{'–' if k is None or math.isnan(k) else '∞' if math.isinf(k) else f'×{k:.2f}'} | {d['n']} |"
            )
    lines.append("")
    if notes:
        lines.append(COLUMN_NOTES)
    return "\n".join(lines).rstrip("\n") + "\n"


def _csv_rows(res: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["game", "players", "table", "agent", "games"] + [f"{k}_{p}" for k in STATS for p in ("mean", "ci_low", "ci_high")] + ["openskill_mu", "openskill_sigma"])
    skill = res.get("openskill") or {}
    blocks = [("all", res["overall"])] + [(" ".join(t["lineup"]), t["agents"]) for t in res["tables"]]
    for label, stats in blocks:
        for name, s in stats.items():
            sk = skill.get(name, {}) if label == "all" else {}
            w.writerow(
                [res["game"], res["num_players"], label, name, s["games"]]
                + [f"{s[k][p]:.6g}" for k in STATS for p in ("mean", "ci_low", "ci_high")]
                + [f"{sk['mu']:.6g}" if sk else "", f"{sk['sigma']:.6g}" if sk else ""]
            )
    return buf.getvalue()


def _games_csv(res: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    n = res["num_players"]
    w.writerow(["table", "deal", "rotation", "deal_seed"] + [f"{k}_{s}" for k in ("agent", "score", "reward", "rank") for s in range(n)])
    for r in res["records"]:
        w.writerow([r["table"], r["deal"], r["rotation"], r["deal_seed"]] + r["agents"] + r["scores"] + [f"{x:.6g}" for x in r["rewards"]] + r["ranks"])
    return buf.getvalue()


def _tick_label(name: str, width: int = 14) -> str:
    """Long labels (``ppo:runs/x/final.pt``) broken over lines so that ticks never overlap."""
    import textwrap

    if len(name) <= width:
        return name
    return "\n".join(textwrap.wrap(name.replace("/", "/ "), width, break_long_words=True)).replace("/ ", "/")


def plot(res: dict, out: Path) -> list[Path]:
    """Ratings (OpenSkill μ ± σ, as in the table, or mean score ± 95% CI with two agents) and the pairwise heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = f"{res['game']}_{res['num_players']}p"
    names = res["agents"]
    ticks = [_tick_label(n) for n in names]
    lines = max(t.count("\n") + 1 for t in ticks)
    paths = []
    fig, ax = plt.subplots(figsize=(max(4.5, 1.5 + 1.3 * len(names)), 3.4 + 0.25 * lines), layout="constrained")
    if res.get("openskill"):
        mu = [res["openskill"][n]["mu"] for n in names]
        err = [res["openskill"][n]["sigma"] for n in names]
        ax.set_ylabel("OpenSkill μ ± σ")
    else:
        mu = [res["overall"][n]["score"]["mean"] for n in names]
        err = [0.0 if math.isnan(h := res["overall"][n]["score"]["half_width"]) else h for n in names]
        ax.set_ylabel("score / game (± 95% CI)")
    ax.errorbar(range(len(names)), mu, yerr=err, fmt="o", capsize=4)
    ax.set_xticks(range(len(names)), ticks, fontsize=9)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{res['game']}, {res['num_players']} players", fontsize=11)
    p = out / f"{stem}_ratings.png"
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)

    k = len(names)
    m = np.full((k, k), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            pw = res["pairwise"].get(f"{a} vs {b}")
            if pw is not None and pw["ahead"] is not None and not math.isnan(pw["ahead"]):
                m[i, j] = pw["ahead"]
    fig, ax = plt.subplots(figsize=(max(5.0, 2.6 + 1.0 * k), max(4.0, 2.0 + 0.8 * k + 0.2 * lines)), layout="constrained")
    cmap = plt.get_cmap("RdBu")
    im = ax.imshow(m, vmin=0, vmax=1, cmap=cmap)
    for i in range(k):
        for j in range(k):
            if not np.isnan(m[i, j]):
                r, g, b, _ = cmap(m[i, j])
                dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # perceived brightness of the cell
                ax.text(j, i, f"{m[i, j]:.0%}", ha="center", va="center", color="white" if dark else "black")
    ax.set_xticks(range(k), ticks, fontsize=9)
    ax.set_yticks(range(k), ticks, fontsize=9)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(f"{res['game']}, {res['num_players']} players:\nshare of games the row finished ahead of the column", fontsize=10)
    fig.colorbar(im, ax=ax, shrink=0.8, label="row ahead of column")
    p = out / f"{stem}_winrate.png"
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)
    return paths


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def write_reports(results: Sequence[dict], out: Path, plots: bool = True, metadata: dict | None = None,
                  header: str = "", notes: Sequence[str] = ()) -> list[Path]:
    """results.json, per game <game>_<n>p.csv (summary) and _games.csv (every game), results.md, PNGs.

    ``metadata`` (`experiments.cli.run_metadata`: command, seed, versions, commit)
    is stored with every result in results.json under "run"."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    summary = [{**{k: v for k, v in r.items() if k != "records"}, **({"run": metadata} if metadata else {})} for r in results]
    p = out / "results.json"
    p.write_text(json.dumps(_jsonable(summary), indent=1) + "\n")
    written.append(p)
    for res in results:
        stem = f"{res['game']}_{res['num_players']}p"
        p = out / f"{stem}.csv"
        p.write_text(_csv_rows(res))
        written.append(p)
        if "records" in res:
            p = out / f"{stem}_games.csv"
            p.write_text(_games_csv(res))
            written.append(p)
        if plots:
            written += plot(res, out)
    p = out / "results.md"
    p.write_text(header + markdown(results) + "".join(f"\nNote: {x}" for x in notes) + ("\n" if notes else ""))
    written.append(p)
    return written


# -- command line --------------------------------------------------------------
def parse_agents(text: str, parser: argparse.ArgumentParser) -> list[AgentSpec]:
    """--agents: comma-separated specs; each must build (so a typo fails before any game)."""
    from agents import AGENT_KINDS

    items = [a.strip() for a in text.split(",") if a.strip()]
    if not items:
        parser.error(f"--agents is empty; valid agents: {', '.join(AGENT_KINDS)}, ppo:PATH, FILE.py:Name, package.module:Name, label=SPEC")
    specs = [AgentSpec.of(a) for a in items]
    try:
        distinct(specs)
    except ValueError as e:
        parser.error(str(e))
    return specs


def check_agents(specs: Sequence[AgentSpec], game: str, num_players: int, parser: argparse.ArgumentParser) -> None:
    from agents import AGENT_KINDS

    for s in distinct(specs):
        try:
            s.make(game, num_players, seed=0)
        except Exception as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            if isinstance(s.kind, str) and "unknown agent kind" in msg:
                parser.error(f"unknown agent {s.kind!r}; valid agents: {', '.join(AGENT_KINDS)}, ppo:PATH, FILE.py:Name, package.module:Name")
            parser.error(f"--agents {s.kind!r}: {msg}")


def add_run_flags(p: argparse.ArgumentParser, workers_default: int) -> None:
    """The flags `tournament` and `compare` share."""
    from experiments import cli

    p.add_argument("--seed", type=cli.seed, default=0, help="base seed of every deal and agent")
    p.add_argument("--workers", type=cli.count, default=workers_default, help="parallel processes (results do not depend on it)")
    p.add_argument("--db", default=None, help="append every game to this SQLite file (see experiments.record)")
    p.add_argument("--on-error", choices=ON_ERROR, default="raise",
                   help="an agent that fails: stop with an error naming it, or forfeit that game and go on")
    p.add_argument("--move-timeout", type=cli.positive_seconds, default=None, help="seconds an agent may take per move (default: no limit)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--backend", default="local", choices=BACKENDS,
                   help="local: --workers processes on this machine; ray: Ray tasks on a cluster (see docs/distributed.md)")
    p.add_argument("--ray-address", default=None,
                   help="with --backend ray: HOST:PORT of a running cluster's head, or 'auto' to join the one this machine "
                        "belongs to (default: start Ray on this machine, every core)")


def check_backend(p: argparse.ArgumentParser, args: argparse.Namespace, specs: Sequence[AgentSpec], game: str, num_players: int) -> None:
    """With --backend ray: join the cluster and make sure every agent reaches its workers (one-line errors, exit 2)."""
    if args.backend != "ray":
        if args.ray_address is not None:
            p.error("--ray-address needs --backend ray")
        return
    import functools

    from train.distributed import check_travel, connect

    try:
        connect(args.ray_address)
        check_travel({s.name: s for s in distinct(specs)}, functools.partial(AgentSpec.make, game=game, num_players=num_players, seed=0))
    except (ImportError, ConnectionError, ValueError) as e:
        p.error(str(e))


def finish_run(results: list[dict], args: argparse.Namespace, out, metadata: dict, prefix: str, link_latest: bool,
               header: str = "", notes: Sequence[str] = ()):
    """Write the reports into a fresh folder, record the run in --db, then move the folder into place."""
    from experiments import cli, record

    with cli.ReportFolder(out, prefix=prefix, link_latest=link_latest) as folder:
        write_reports(results, folder.path, plots=not args.no_plots, metadata=metadata, header=header, notes=notes)
        if args.db:
            record.write_run(args.db, results, metadata)
        return folder.commit()


def run_cli(main_body) -> int:
    """Run a command: an agent failure or a failure to start workers is one line and exit 1, Ctrl-C exit 130."""
    try:
        return main_body()
    except (AgentError, RuntimeError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; nothing was written\n")
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    import envs
    from experiments import cli, record

    p = ArgumentParser(prog="python -m experiments.tournament", description="Duplicate-deal tournament between agents.")
    p.add_argument("--game", default="neu", help=f"one of: {', '.join(envs.GAMES)}")
    p.add_argument("--players", type=cli.count, default=None, help="player count (default: the game's default)")
    p.add_argument("--agents", default="heuristic,random",
                   help="comma-separated agents (see --mode): random, heuristic, ppo, ppo:PATH, FILE.py:Name, package.module:Name, label=SPEC")
    p.add_argument("--mode", default=None, choices=MODES, help="how agents become tables (default: fill, or round-robin for more agents than seats)")
    p.add_argument("--deals", type=cli.count, default=500, help="deals per table; each is played once per seat rotation")
    add_run_flags(p, workers_default=1)
    p.add_argument("--plain", action="store_true", help="an independent deal per game instead of duplicate deals")
    p.add_argument("--out", default=None, help="new folder for JSON/CSV/Markdown/PNG (default: results/tournament-<time>)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--save-replays", default=None, metavar="DIR", help="also write every game as DIR/*.replay.jsonl (see experiments.replay)")
    p.add_argument("--games", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.games is not None:
        p.error("a tournament plays one game, --game NAME; the number of deals is --deals N")

    available = envs.available_games()
    if args.game not in available:
        hint = " (the number of deals is --deals)" if args.game.isdigit() else ""
        p.error(f"unknown game {args.game!r}; valid games: {', '.join(available)}{hint}")
    specs = parse_agents(args.agents, p)
    try:
        n = check_game(args.game, args.players)
        make_tables(specs, n, args.mode)
    except ValueError as e:
        p.error(str(e))
    check_agents(specs, args.game, n, p)
    check_backend(p, args, specs, args.game, n)
    out = cli.check_out(args.out, p)
    if args.db and (why := record.check_db(args.db)):
        p.error(why)
    metadata = cli.run_metadata(cli.command_line("python -m experiments.tournament", argv), args.seed, deals=args.deals)

    def body() -> int:
        res = run_tournament(args.game, specs, n, args.deals, args.seed, args.workers, args.mode, not args.plain,
                             progress=not args.quiet, on_error=args.on_error, move_timeout=args.move_timeout,
                             save_replays=args.save_replays, backend=args.backend, ray_address=args.ray_address)
        final = finish_run([res], args, out, metadata, prefix="tournament-", link_latest=False)
        print(markdown([res], notes=False), end="")
        print(f"{res['games_played']} games in {res['wall_s']:.1f} s; wrote {final}/" + (f" and {args.db}" if args.db else ""))
        return 0

    return run_cli(body)


if __name__ == "__main__":
    sys.exit(main())
