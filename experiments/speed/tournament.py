"""Tournament speed on each path, for ``python -m experiments.speed --tournament``.

Each game plays heuristic against random at 4 players (one heuristic, three
randoms: `--mode fill`) over the same deals twice in every round: on the AEC
path (``engine="aec"``, one env per game, one ``act`` call per move) and on
the batched engine (``engine="vector"``). The rounds are interleaved (round r
times every game on both paths, then round r+1), and each ratio is the median
of the rounds' own ratios, so a change of load hits both paths alike. Both
paths must return the same records in every round, or the run fails.

Two figures per path: games per second of wall time (what a user waits for,
with ``workers`` processes) and games per CPU-second (this process and its
worker processes together, so other load on a shared machine distorts it
less). The kernels are compiled, and the agents built, in an untimed round
first.
"""

from __future__ import annotations

import resource
import statistics
import time

PATHS = ("aec", "vector")


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime  # children: the workers, once joined


def time_tournament(game: str, deals: int, workers: int, engine: str, seed: int = 0) -> tuple[float, float, list[dict]]:
    """Wall seconds, CPU-seconds and the records of one heuristic-against-random tournament."""
    from experiments.tournament import run_tournament

    cpu, wall = _cpu_seconds(), time.perf_counter()
    res = run_tournament(game, ["heuristic", "random"], 4, deals=deals, seed=seed, workers=workers, progress=False, engine=engine)
    return time.perf_counter() - wall, _cpu_seconds() - cpu, res["records"]


def print_tournament_speed(games: list[str], deals: int, workers: int, repeats: int) -> None:
    for game in games:  # untimed: compile the kernels, load the agents
        for engine in PATHS:
            time_tournament(game, 2, 1, engine)
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {(g, e): [] for g in games for e in PATHS}
    for r in range(repeats):
        for game in games:
            records = {}
            for engine in PATHS:
                wall, cpu, records[engine] = time_tournament(game, deals, workers, engine)
                runs[(game, engine)].append((len(records[engine]) / wall, len(records[engine]) / cpu))
            if records["aec"] != records["vector"]:
                raise RuntimeError(f"{game}: the two paths played different games")
    print(f"\nheuristic vs random at 4 players, {deals} deals x 4 rotations = {4 * deals} games per run, "
          f"{workers} worker(s), median of {repeats}; both paths played the same games in every round")
    print("| game | path | games/s (wall) | games per CPU-second | vector / aec (wall) | vector / aec (CPU) |")
    print("|---|---|---:|---:|---:|---:|")
    for game in games:
        aec = runs[(game, "aec")]
        for engine in PATHS:
            rs = runs[(game, engine)]
            wall, cpu = statistics.median(x[0] for x in rs), statistics.median(x[1] for x in rs)
            if engine == "aec":
                ratios = ("1.0x", "1.0x")
            else:
                ratios = tuple(f"{statistics.median(v[i] / a[i] for v, a in zip(rs, aec)):.1f}x" for i in (0, 1))
            print(f"| {game} | {engine} | {wall:,.0f} | {cpu:,.0f} | {ratios[0]} | {ratios[1]} |")
