"""Moves per second of each heuristic kernel against its readable heuristic, in one process.

    python -m agents.heuristic.kernels [--players 4] [--tables 1024] [--repeats 5]

Positions come from heuristic-against-random games on `envs.vector_env` (the
heuristic on even seats). The kernel decides whole batches of ``--tables``
rows; the readable heuristic decides a sample of the same positions, one
``act()`` call each. Both are timed ``--repeats`` times; the medians are shown.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import envs
from agents import RandomAgent, make_agent
from agents.heuristic import HEURISTICS


def positions(game: str, num_players: int, tables: int, batches: int, seed: int = 0):
    """`batches` snapshots (obs, mask, seat) of `tables` games, 25 moves apart."""
    venv = envs.vector_env(game, tables, num_players, seed=seed)
    bot = make_agent("heuristic", game, num_players, seed=0)
    rnd = RandomAgent(game, num_players, seed=seed)
    obs, mask, seat = venv.reset()
    out = []
    for step in range(25 * batches):
        if step % 25 == 24:
            out.append((obs, mask, seat))
        moves = np.where(seat % 2 == 0, bot.act_batch(obs, mask, seat), rnd.act_batch(obs, mask, seat))
        obs, mask, seat, _, _ = venv.step(moves)
    return out


def measure(game: str, num_players: int = 4, tables: int = 1024, batches: int = 4, sample: int = 2000, repeats: int = 5) -> dict:
    """Median moves/s of the kernel (whole batches) and of the readable act() (one by one)."""
    bot = make_agent("heuristic", game, num_players, seed=0)
    snaps = positions(game, num_players, tables, batches)
    bot.act_batch(*snaps[0])  # compiled (or loaded from the cache) before timing
    rows = [(o[t], m[t]) for o, m, _ in snaps for t in range(o.shape[0])][:sample]
    kernel, readable = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for snap in snaps:
            bot.act_batch(*snap)
        kernel.append(tables * len(snaps) / (time.perf_counter() - start))
        start = time.perf_counter()
        for o, m in rows:
            bot.act({"observation": o, "action_mask": m})
        readable.append(len(rows) / (time.perf_counter() - start))
    k, r = statistics.median(kernel), statistics.median(readable)
    return {"game": game, "players": num_players, "kernel_moves_per_s": k, "readable_moves_per_s": r, "ratio": k / r}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m agents.heuristic.kernels", description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--tables", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    print(f"{'game':<20}{'kernel moves/s':>16}{'readable moves/s':>18}{'ratio':>8}")
    for game in HEURISTICS:
        m = measure(game, args.players, args.tables, repeats=args.repeats)
        print(f"{game:<20}{m['kernel_moves_per_s']:>16,.0f}{m['readable_moves_per_s']:>18,.0f}{m['ratio']:>7.0f}x")


if __name__ == "__main__":
    main()
