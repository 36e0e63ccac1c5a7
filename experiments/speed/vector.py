"""Speed of the batched engines (`envs.vector_env`), for ``python -m experiments.speed --vector``.

Each game runs ``num_envs`` tables at 4 players on one core (one numba
thread). Only ``venv.step`` is timed: the uniform random choice of a legal
move per table (vectorised numpy) is the player's own time and left out. The
AEC ``env()`` of each game and PettingZoo's leduc_holdem_v4 run in the same
rounds, as in the main table, so the ratios compare like with like on a
shared machine: the repeats are interleaved and each ratio is the median of
the per-round ratios.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba loads: one core

import statistics  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

import envs  # noqa: E402


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of an int8 mask."""
    counts = mask.cumsum(axis=1, dtype=np.int32)
    pick = (rng.random(len(mask)) * counts[:, -1]).astype(np.int32)
    return (counts <= pick[:, None]).sum(axis=1)


def vector_steps_per_second(game: str, num_envs: int, seconds: float, seed: int) -> tuple[float, float]:
    """(agent-steps per CPU-second of venv.step, state bytes per table)."""
    venv = envs.vector_env(game, num_envs=num_envs, num_players=4, seed=seed)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(seed)
    for _ in range(3):  # loads the compiled kernels and touches every array once
        _, mask, *_ = venv.step(random_legal(mask, rng))
    clock = time.process_time
    spent, steps = 0.0, 0
    while spent < seconds:
        actions = random_legal(mask, rng)
        start = clock()
        _, mask, *_ = venv.step(actions)
        spent += clock() - start
        steps += num_envs
    return steps / spent, venv.state_bytes_per_table()


def print_vector_speed(games: list[str], seconds: float, repeats: int, num_envs: int,
                       leduc: Callable | None, aec_steps_per_second: Callable) -> None:
    rows = []  # (name, API, measure(seed) -> steps/s, runs)
    if leduc is not None:
        rows.append(("leduc_holdem_v4 (peer)", "env()", lambda seed: aec_steps_per_second(leduc, seconds, seed), []))
    memory = {}
    for game in games:
        rows.append((game, "env()", lambda seed, g=game: aec_steps_per_second(envs.module(g).env, seconds, seed), []))

        def vector(seed, g=game):
            rate, memory[g] = vector_steps_per_second(g, num_envs, seconds, seed)
            return rate

        rows.append((game, f"vector_env({num_envs})", vector, []))
    for seed in range(repeats):
        for _, _, measure, runs in rows:
            runs.append(measure(seed))
    threads = os.environ.get("NUMBA_NUM_THREADS")
    print(f"\nagent-steps per CPU-second, random legal play, 4 players, one core (NUMBA_NUM_THREADS={threads}),"
          f" median of {repeats} x {seconds:g} s; the random player's own time left out of vector_env")
    print("| env | API | median steps/s | min - max | vs leduc env() | state bytes/table |")
    print("|---|---|---:|---:|---:|---:|")
    for name, label, _, runs in rows:
        ratio = "n/a"
        if leduc is not None:
            ratio = f"{statistics.median(r / l for r, l in zip(runs, rows[0][3])):,.1f}x"
        mem = f"{memory[name]:,.0f}" if label.startswith("vector") else ""
        print(f"| {name} | {label} | {statistics.median(runs):,.0f} | {min(runs):,.0f} - {max(runs):,.0f} | {ratio} | {mem} |")
