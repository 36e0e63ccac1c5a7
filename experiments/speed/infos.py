"""What ``minimal_infos=True`` saves per step of the parallel env, bare and under a wrapper that copies every info key.

    python -m experiments.speed.infos --games neu --seconds 1 --repeats 5

The same games (seeds, random legal moves) are played with full and with
minimal infos in the same process, alternating, ``repeats`` times; the table
gives the median CPU microseconds per step and the ratio minimal / full. "copied"
adds what a wrapper such as TorchRL's ``PettingZooWrapper`` does with infos on
every step: one array per key per agent.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import envs
from experiments.cli import ArgumentParser


def copy_infos(infos: dict) -> dict:
    """Every key of every agent's infos turned into an array, as a replay-buffer wrapper does."""
    return {a: {k: np.asarray(v) for k, v in info.items()} for a, info in infos.items()}


def time_steps(env, seeds, copy: bool) -> tuple[float, int]:
    """Seconds and steps for the games of `seeds`, the acting seat playing random legal moves."""
    steps, start = 0, time.process_time()
    for seed in seeds:
        rng = np.random.default_rng(seed)
        obs, infos = env.reset(seed=seed)
        while env.agents:
            acting = env.possible_agents[infos[env.agents[0]]["acting_seat"]]
            legal = np.flatnonzero(obs[acting]["action_mask"])
            obs, _, _, _, infos = env.step({acting: int(legal[int(rng.random() * len(legal))])})
            if copy:
                copy_infos(infos)
            steps += 1
    return time.process_time() - start, steps


def measure(game: str, seconds: float, repeats: int) -> dict[str, tuple[float, float]]:
    """{"bare"|"copied": (full us/step, minimal us/step)}, medians over the repeats."""
    full = envs.module(game).parallel_env(num_players=4)
    minimal = envs.module(game).parallel_env(num_players=4, minimal_infos=True)
    seeds, spent = [], 0.0
    while spent < seconds:  # an untimed pass picks about `seconds` worth of games
        spent += time_steps(full, [len(seeds)], False)[0]
        seeds.append(len(seeds))
    out = {}
    for copy in (False, True):
        rows = []
        for r in range(repeats):
            pair = [full, minimal] if r % 2 == 0 else [minimal, full]
            t = {id(e): time_steps(e, seeds, copy) for e in pair}
            rows.append(tuple(1e6 * t[id(e)][0] / t[id(e)][1] for e in (full, minimal)))
        out["copied" if copy else "bare"] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m experiments.speed.infos", description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(envs.available_games()), help="comma-separated games")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds of games per measurement (default 1)")
    parser.add_argument("--repeats", type=int, default=5, help="alternating repeats, median reported (default 5)")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",")]
    for g in games:
        envs.module(g)
    print(f"parallel env, 4 players, random legal moves; median of {args.repeats} x ~{args.seconds:g} s; us per step")
    print("| game | infos | full | minimal | minimal / full |")
    print("|---|---|---:|---:|---:|")
    for g in games:
        for kind, (full, minimal) in measure(g, args.seconds, args.repeats).items():
            print(f"| {g} | {kind} | {full:.1f} | {minimal:.1f} | {minimal / full:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
