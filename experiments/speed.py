"""Random-play speed of every env, with PettingZoo's leduc_holdem_v4 as a peer in the same run.

    python -m experiments.speed                     # all games, 5 repeats of 1 s each
    python -m experiments.speed --games neu --seconds 2 --repeats 7

Every env is driven by the same loop: ``agent_iter`` / ``last`` / a uniform
legal action / ``step``, resetting when a game ends, on one core. It prints
agent-steps per second (median over repeats, with min-max) for each game's
``env()`` and ``raw_env``, and the ratio to leduc_holdem_v4's ``env()``.
Time is this process's CPU time, so the figure is per core even when other
processes share the machine.
Machines are shared and noisy: compare medians and ratios, not single runs.
The repeats are interleaved (round r times leduc, then every env, then round
r+1), and the ratio is the median of each round's own ratio, so a change of
load during the run hits the peer and the games alike.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
import warnings
from typing import Callable

import envs
from experiments import cli
from experiments.cli import ArgumentParser


def steps_per_second(make: Callable, seconds: float, seed: int) -> float:
    env = make()
    env.reset(seed=seed)
    rnd = random.Random(seed)
    steps = 0
    # CPU time of this process, not wall time: on a shared machine the other
    # processes' load then changes the numbers much less.
    clock = time.process_time
    start = clock()
    deadline = start + seconds
    while True:
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]  # cheaper than np.flatnonzero for a 1-D mask
                action = int(legal[int(rnd.random() * len(legal))])
            env.step(action)
            steps += 1
        if clock() >= deadline:
            return steps / (clock() - start)
        env.reset()


def leduc_maker() -> Callable | None:
    try:
        from pettingzoo.classic import leduc_holdem_v4
    except Exception:  # the classic extra (rlcard) is optional
        return None
    return leduc_holdem_v4.env


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m experiments.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", "--game", default=",".join(envs.available_games()), help="comma-separated games")
    parser.add_argument("--seconds", type=cli.positive_seconds, default=1.0, help="length of one timed repeat")
    parser.add_argument("--repeats", type=cli.count, default=5, help="timed repeats per env (the median is reported)")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    valid = envs.available_games()
    bad = [g for g in games if g not in valid]
    if bad:
        parser.error(f"unknown game(s) {', '.join(bad)}; valid games: {', '.join(valid)}")
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")
    warnings.simplefilter("ignore")

    rows = []  # (env name, API, maker, one steps/s figure per round)
    leduc = leduc_maker()
    if leduc is not None:
        rows.append(("leduc_holdem_v4 (peer)", "env()", leduc, []))
    else:
        print("leduc_holdem_v4 not available (pip install 'pettingzoo[classic]'); no peer ratio.")
    for game in games:
        mod = envs.module(game)
        rows += [(game, "env()", mod.env, []), (game, "raw_env", mod.raw_env, [])]
    for seed in range(args.repeats):
        for _, _, make, runs in rows:
            runs.append(steps_per_second(make, args.seconds, seed))

    print(f"\nagent-steps per CPU-second, random legal play, one core, median of {args.repeats} x {args.seconds:g} s")
    print("| env | API | median steps/s | min - max | vs leduc env() |")
    print("|---|---|---:|---:|---:|")
    for name, label, _, runs in rows:
        med = statistics.median(runs)
        ratio = "n/a"
        if leduc is not None:
            ratio = f"{statistics.median(r / l for r, l in zip(runs, rows[0][3])):.1f}x"  # median of per-round ratios
        print(f"| {name} | {label} | {med:,.0f} | {min(runs):,.0f} - {max(runs):,.0f} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
