"""Running many games: batches of deals (jobs) played here, in worker processes or as Ray tasks.

Whatever runs them, the records are the same: every game's seeds come from
`seating` alone, agents are seeded and reset before every game, and records
come back in (table, deal, rotation) order.

Tables reach the workers once: through the pool's initializer (inherited
as they are with ``fork``, so classes from ``__main__`` and lambdas work), or
for Ray through the object store, read once per worker process. A job names
only its (table, deal) pairs.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from experiments.tournament import match, seating
from experiments.tournament.cache import cached_agent, env_of
from experiments.tournament.seating import AgentSpec, agent_seed, deal_seed, seat_lineup


@dataclass(frozen=True)
class Job:
    """A batch of deals to play: every rotation of every (table, deal) in `tasks`."""

    game: str
    num_players: int
    rule_options: tuple
    seed: int
    duplicate: bool
    tasks: tuple  # of (table, deal)
    on_error: str = "raise"
    move_timeout: float | None = None
    record_moves: bool = False  # for --save-replays
    vector_tables: frozenset = frozenset()  # tables played on the batched engine (see `experiments.tournament.vector`)
    isolate: bool = False  # every agent in a child process of its own (see `experiments.tournament.isolate`)


ESTIMATORS = ("plain", "duplicate", "adjusted")
_WORKER: dict = {}  # per worker process: the tables, set by the pool's initializer or read once from Ray


def seated_agents(job: Job, t: int, deal: int, rotation: int, lineup: Sequence[AgentSpec]) -> list:
    """The agents of one game, seeded for it and reset."""
    agents = []
    for s, spec in enumerate(lineup):
        a = cached_agent(spec, job.game, job.num_players, s, (job.move_timeout, start_method()) if job.isolate else None)
        if callable(getattr(a, "seed", None)):
            a.seed(agent_seed(job.seed, deal, t, rotation, s))
        if callable(getattr(a, "reset", None)):
            a.reset()
        agents.append(a)
    return agents


def play_job(job: Job, tables: Sequence[Sequence[AgentSpec]]) -> list[dict]:
    """Play every rotation of every (table, deal) of a job; records in a fixed order."""
    n = job.num_players
    by_task: dict[tuple[int, int], list[dict]] = {}
    batched = [task for task in job.tasks if task[0] in job.vector_tables]
    if batched:
        from experiments.tournament import vector

        with collector_paused(len(batched) == len(job.tasks)):
            for rec in vector.play_tasks(job, tables, batched):
                by_task.setdefault((rec["table"], rec["deal"]), []).append(rec)
    env = env_of(job.game, n, job.rule_options) if len(batched) < len(job.tasks) else None
    out = []
    for t, deal in job.tasks:
        if t in job.vector_tables:
            out += by_task[(t, deal)]
            continue
        for r in range(n):
            lineup = seat_lineup(tables[t], r)
            agents = seated_agents(job, t, deal, r, lineup)
            ds = deal_seed(job.seed, deal, r, job.duplicate)
            labels = [s.name for s in lineup]
            if job.record_moves:
                from experiments.replay import MoveRecorder

                agents = MoveRecorder.wrap(agents)
            g = match.play_game(env, agents, ds, labels, f", deal {deal}, rotation {r}", job.on_error, job.move_timeout)
            if job.record_moves:
                g["moves"] = agents[0].moves
            out.append(match.game_record(t, deal, r, ds, labels, g))
    return out


@contextlib.contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Python's cycle collector paused (when `pause`) while batched games' records are made or
    received: thousands of small dicts and lists, none in a cycle, whose full passes took about
    a sixth of a 12,000-game Deadfall tournament on the batched engine. Games on that engine
    make no cycles to collect; the AEC path's envs do, so it keeps the collector."""
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _luck_of(task: tuple) -> list[list[float]]:
    """The luck corrections of a chunk of games (`experiments.tournament.luck.batched_corrections`), from their moves."""
    from experiments.tournament import luck

    game, n, options, games, seed, names = task
    return luck.batched_corrections(game, n, options, games, luck.value_for(game, n, names, options), seed=seed)


def _correct_luck(records: list[dict], game: str, n: int, options: dict, seed: int, workers: int, method: str | None,
                  progress: bool | str, label: str) -> None:
    """Give every record its "luck", after the games and from their moves alone (no agent ever
    sees it), on the batched engine, in chunks of games (in `workers` processes), with a bar
    that moves per game corrected. A game's luck does not depend on its chunk."""
    from tqdm import tqdm

    from experiments.tournament import luck

    games = [{"deal": r["deal"], "deal_seed": r["deal_seed"], "moves": r["moves"], "agents": r["agents"]}
             for r in records if not r["forfeit"]]
    names = frozenset(a for r in records for a in r["agents"])  # the value is chosen once, for every chunk
    bar = tqdm(total=len(records), desc=f"{label} luck corrections", unit="game", disable=not progress, leave=True,
               dynamic_ncols=True)
    pool = workers > 1 and method is not None and len(games) > 1
    size = max(1, min(256, -(-len(games) // (8 * workers)))) if pool else 256
    tasks = [(game, n, options, games[i:i + size], seed, names) for i in range(0, len(games), size)]
    try:
        found = []
        if pool:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=multiprocessing.get_context(method)) as ex:
                for task, value in zip(tasks, ex.map(_luck_of, tasks, chunksize=1)):
                    found += value
                    bar.update(len(task[3]))
        else:
            for task in tasks:
                found += luck.batched_corrections(game, n, options, task[3], luck.value_for(game, n, names, options), seed=seed,
                                                  tick=bar.update)
        it = iter(found)
        for r in records:
            r["luck"] = [0.0] * n if r["forfeit"] else next(it)
            if r["forfeit"]:
                bar.update(1)
    finally:
        bar.close()


# -- worker processes ------------------------------------------------------------
def _one_thread() -> None:
    """Every pool's initializer: one thread per worker (the workers already use every core). A
    forked worker must set this before torch runs anything in parallel: GNU OpenMP's thread pool,
    started in the parent (loading a checkpoint does), does not survive a fork, and the worker's
    first parallel operation would wait for it forever."""
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:  # inherited by fork: the variable alone comes too late
        sys.modules["torch"].set_num_threads(1)


def _start_worker(tables) -> None:
    """The playing pool's initializer: one thread, and the tables."""
    _one_thread()
    _WORKER["tables"] = tables


def _play_in_worker(job: Job) -> list[dict]:
    return play_job(job, _WORKER["tables"])


def _play_ray_job(job: Job, shared_tables: list) -> list[dict]:
    """`play_job` as a Ray task. The tables are read from Ray's object store once per worker
    process and then kept, so that agents given as objects or classes defined in a script are
    built once per worker and seat (as in forked workers), not once per batch of deals."""
    import ray

    key = shared_tables[0].hex()
    if _WORKER.get("ray_tables") != key:
        _WORKER["tables"] = ray.get(shared_tables[0])
        _WORKER["ray_tables"] = key
    return play_job(job, _WORKER["tables"])


def start_method() -> str:
    """How worker processes start. ``fork`` where it is the platform's safe default (Linux):
    workers inherit the agents as they are, so a script with no ``if __name__ == "__main__":``
    guard, ``python -``, a notebook, classes defined in ``__main__`` and lambdas all work.
    Elsewhere ``spawn``: agents must then be importable, and a failure to start says so."""
    return "fork" if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def _pool_map(jobs: Iterable[Job], tables, workers: int, method: str) -> Iterable[tuple[Job, list[dict]]]:
    """`play_job` over `jobs` in worker processes, results in order, a bounded number in flight.

    A pool that breaks (a worker that cannot start or dies) raises one clear
    RuntimeError naming the deals it was playing instead of hanging; Ctrl-C stops the workers at once.
    """
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    it = iter(jobs)
    first = list(itertools.islice(it, 4 * workers))
    workers = max(1, min(workers, len(first)))  # never more processes than jobs
    ex = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method), initializer=_start_worker, initargs=(tables,))
    pending: deque = deque()
    ok = False
    job = None
    try:
        for job in first:
            pending.append((job, ex.submit(_play_in_worker, job)))
        while pending:
            job, fut = pending.popleft()
            yield job, fut.result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt, ex.submit(_play_in_worker, nxt)))
        ok = True
    except BrokenProcessPool:
        where = "" if job is None else " while playing " + ", ".join(f"table {t} deal {d}" for t, d in job.tasks[:3]) + (" ..." if len(job.tasks) > 3 else "")
        raise RuntimeError(
            f"could not run games in {workers} worker processes: a worker died{where} or could not start ({method} start method"
            + (", which re-runs your script: put its code under if __name__ == '__main__':" if method == "spawn" else
               "; an agent may have ended its process")
            + "); use workers=1"
        ) from None
    finally:
        if not ok:
            for p in list(getattr(ex, "_processes", {}).values()):
                p.terminate()
        ex.shutdown(wait=ok, cancel_futures=True)


def _warm(i: int) -> None:
    game, num_players, tables, options = _WORKER["warm"][i]
    try:
        play(game, tables, num_players, range(1), workers=1, progress=False, **options)
    except Exception:  # noqa: BLE001 - the game's own run reports it, with its deal and seat
        pass


def compile_games(items: Sequence[tuple], workers: int) -> None:
    """Compile the batched kernels of several games at once: each of `items` (game, players,
    tables, `play` options) plays its first deal in one of `workers` forked processes, which
    writes numba's on-disk cache; the games' own runs then load the kernels. A machine's first
    run so overlaps the games' compile times (Ma's Jong's alone is over a minute) instead of
    adding them; a later run pays about a second a game to load. Needs fork and two workers."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from envs.vector.compiling import COMPILE_SECONDS

    if workers <= 1 or len(items) < 2 or start_method() != "fork":
        return
    # The longest compile first, so that the others fit beside it.
    _WORKER["warm"] = sorted(items, key=lambda item: -COMPILE_SECONDS.get(item[0], 0))
    ex = ProcessPoolExecutor(min(workers, len(items)), mp_context=multiprocessing.get_context("fork"), initializer=_one_thread)
    ok = False
    try:
        list(ex.map(_warm, range(len(items))))
        ok = True
    except BrokenProcessPool:  # a process that died: the game's own run says why
        ok = True
    finally:
        if not ok:  # Ctrl-C: stop compiling now
            for p in list(getattr(ex, "_processes", {}).values()):
                p.terminate()
        ex.shutdown(wait=ok, cancel_futures=True)
        _WORKER.pop("warm", None)


def _batches(deals: Iterable[int], tables: range, chunk: int, vector_tables: frozenset, vector_chunk: int) -> Iterable[tuple]:
    """(table, deal) pairs in deal-major order, so that whatever is done when a deadline passes is whole deals;
    tables on the batched engine go in larger batches of their own."""
    aec: list[tuple[int, int]] = []
    vec: list[tuple[int, int]] = []
    for d in deals:
        for t in tables:
            (vec if t in vector_tables else aec).append((t, d))
        if len(aec) >= chunk:
            yield tuple(aec)
            aec = []
        if len(vec) >= vector_chunk:
            yield tuple(vec)
            vec = []
    for rest in (aec, vec):
        if rest:
            yield tuple(rest)


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
    engine: str = "auto",
    isolate: bool = False,
    luck: bool = False,
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
    ``engine``: "auto" plays a table on the batched engine when every agent at
    it has ``act_batch`` (`experiments.tournament.vector`), "vector" insists on
    it, "aec" plays one env per game; the records are the same.
    ``isolate=True`` plays every agent in a child process of its own, which the
    move time limit can kill (`experiments.tournament.isolate`; AEC path only).
    ``luck=True`` gives every record "luck": per seat, the luck of its chance events, taken
    from its moves after the game (`experiments.tournament.luck`).
    """
    seating.check_settings(seed=seed, workers=workers, on_error=on_error, move_timeout=move_timeout, backend=backend, engine=engine)
    tables = seating.check_tables(tables, num_players)
    from experiments.tournament import vector

    vector_tables = vector.choose_tables(game, tables, num_players, engine, move_timeout=move_timeout, isolate=isolate)
    if luck:
        from experiments.tournament import luck as luck_module

        names = {spec.name for table in tables for spec in table}
        luck_module.value_for(game, num_players, names, rule_options)  # a bad value file is refused before any game
    total = len(deals) if hasattr(deals, "__len__") else None  # type: ignore[arg-type]
    opts = tuple(sorted((rule_options or {}).items()))
    if backend == "ray":
        from train.distributed import cluster_cpus, connect

        workers = cluster_cpus(connect(ray_address))  # batch sizes only; the records do not depend on them
    n_tasks = total * len(tables) if total is not None else 50 * workers * 8
    chunk = max(1, min(50, n_tasks // (max(workers, 1) * 8) or 1))
    vector_chunk = max(1, vector.ROWS_PER_BATCH // num_players)  # fixed, so that batches do not depend on workers
    method = start_method() if workers > 1 and backend == "local" else None
    make_job = functools.partial(Job, game, num_players, opts, seed, duplicate, on_error=on_error, move_timeout=move_timeout,
                                 record_moves=save_replays is not None or luck, vector_tables=vector_tables, isolate=isolate)
    deals = iter(deals)
    first = next(deals, None)
    deals = itertools.chain([] if first is None else [first], deals)
    jobs = (make_job(tasks=b) for b in _batches(deals, range(len(tables)), chunk, vector_tables, vector_chunk))

    from tqdm import tqdm

    # No tqdm monitor thread: a thread alive when workers are forked could hold a lock they need.
    tqdm.monitor_interval = 0
    label = progress if isinstance(progress, str) else f"{game} {num_players}p"
    bar_total = total * len(tables) * num_players if total is not None else None
    bar = tqdm(total=bar_total, desc=label, unit="game", disable=not progress, leave=True, dynamic_ncols=True)
    records: list[dict] = []
    done = 0
    try:
        if backend == "ray":
            import ray

            from train import distributed

            shared_tables = [ray.put(tables)]  # in a list, so that each task gets the reference, not a fresh copy
            results: Iterable[tuple[Job, list[dict]]] = distributed.ray_map(_play_ray_job, jobs, ray_address, args=(shared_tables,),
                                                                            what="a batch of deals")
        elif workers <= 1:
            results = ((j, play_job(j, tables)) for j in jobs)
        else:
            if method == "fork" and vector_tables and first is not None:
                # Compile the batched kernels here, once, before the workers fork: they inherit them
                # (numba compiles per process), so a first run compiles once and says so once. The
                # first deal at each batched table, its records dropped (agents are seeded per game).
                play_job(make_job(tasks=tuple((t, first) for t in sorted(vector_tables))), tables)
            results = _pool_map(jobs, tables, workers, method)
        # Every table batched: the records arrive in thousands, with nothing in a cycle among them
        with collector_paused(backend == "local" and len(vector_tables) == len(tables)):
            for job, recs in results:
                records += recs
                done += len(job.tasks)
                bar.update(len(job.tasks) * num_players)
                if deadline is not None and done >= len(tables) and time.perf_counter() > deadline:
                    break
    finally:
        bar.close()
    records = _whole_deals(records, len(tables))
    if luck:
        _correct_luck(records, game, num_players, dict(opts), seed, workers, method if backend == "local" else None,
                      progress, label)
    if luck and save_replays is None:
        for r in records:
            r.pop("moves", None)
    if save_replays is not None:
        from experiments.replay import save_records

        save_records(records, save_replays, game, num_players, rule_options)
    return records


def _whole_deals(records: list[dict], num_tables: int) -> list[dict]:
    """Only deals finished at every table, in (table, deal order, rotation) order."""
    finished: dict[int, int] = {}
    for r in records:
        if r["rotation"] == 0:
            finished[r["deal"]] = finished.get(r["deal"], 0) + 1
    kept = {d for d, k in finished.items() if k == num_tables}
    records = [r for r in records if r["deal"] in kept]
    position: dict[int, int] = {}
    for r in records:
        position.setdefault(r["deal"], len(position))
    records.sort(key=lambda r: (r["table"], position[r["deal"]], r["rotation"]))
    return records


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
    engine: str = "auto",
    isolate: bool = False,
    estimator: str | None = None,
) -> dict:
    """Play a tournament and return its summary (plus "records", one per game).

    ``estimator``: "plain" (an independent deal per game, as ``duplicate=False``),
    "duplicate" (every deal in every rotation; the default) or "adjusted" (duplicate deals,
    and each pair's difference also from luck-adjusted scores, `experiments.tournament.luck`).

    ``agents`` are specs (see `agents.spec`): names such as "heuristic" or
    "bots.py:Greedy", classes, factories, agent objects (copied per seat) or
    `AgentSpec` for a name of your choosing. An agent that fails raises
    `AgentError` naming it, its seat, deal and move, or with
    ``on_error="forfeit"`` loses that game and play goes on.
    """
    from experiments.tournament import stats

    seating.check_settings(deals=deals, first_deal=first_deal)  # play() checks the others
    if estimator is not None:
        if estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {estimator!r}; valid: {', '.join(ESTIMATORS)}")
        duplicate = estimator != "plain"
    num_players = seating.check_game(game, num_players, rule_options)
    tables = make_tables_checked(agents, game, num_players, mode)
    t0 = time.perf_counter()
    records = play(game, tables, num_players, range(first_deal, first_deal + deals), seed, workers, duplicate, rule_options, progress,
                   on_error=on_error, move_timeout=move_timeout, save_replays=save_replays, backend=backend, ray_address=ray_address,
                   engine=engine, isolate=isolate, luck=estimator == "adjusted")
    wall = time.perf_counter() - t0
    from experiments.tournament import vector

    path = vector.path_name(game, tables, num_players, engine, move_timeout, isolate)
    result = stats.summarize(records, tables, game, num_players, deals=deals, seed=seed, duplicate=duplicate, workers=workers,
                             rule_options=dict(rule_options or {}), wall_s=wall, backend=backend, engine=path,
                             estimator=estimator or ("duplicate" if duplicate else "plain"))
    result["records"] = records
    return result


def make_tables_checked(agents: Sequence[Any], game: str, num_players: int, mode: str | None) -> list[tuple[AgentSpec, ...]]:
    """The tables, with every agent built once here so that a missing one fails before any game."""
    tables = seating.make_tables(agents, num_players, mode)
    seating.check_agents((s for t in tables for s in t), game, num_players)
    return tables

