"""Random-play speed of every env, with PettingZoo's leduc_holdem_v4 as a peer in the same run.

    python -m experiments.speed                     # all games, 5 repeats of 1 s each
    python -m experiments.speed --games neu --seconds 2 --repeats 7
    python -m experiments.speed --single-agent      # make_single_agent's overhead instead
    python -m experiments.speed --vector            # the batched engines (envs.vector_env) instead
    python -m experiments.speed --tournament        # tournaments: games/s on the AEC path and on the batched engine
    python -m experiments.speed --agents            # PPO: act and act_batch µs per decision, beside torch
    python -m experiments.speed --search            # the belief sampler and pimc (experiments/speed/search.py)

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


def single_agent_overhead(game: str, opponents: str, seconds: float, repeats: int) -> list[tuple[float, float, int]]:
    """CPU seconds for the same games through `envs.make_single_agent` and through the AEC env, per repeat.

    The learner (seat 0) plays uniformly random legal moves; both loops use the
    same deals, opponent seeds and learner choices, so they play identical games
    and the time ratio is the single-agent env's own overhead. The AEC loop stops
    where the single-agent episode stops (the game's end, or seat 0 going out).
    An untimed first pass picks about `seconds` worth of games and warms the
    heuristics' caches, so that neither loop pays for them; the order of the two
    loops then alternates. Returns (single-agent s, AEC s, learner steps) per repeat.
    """
    from agents import make_single_agent
    from agents.opponents import make_opponents
    from envs.single_agent import opponent_seeds

    clock = time.process_time
    single = make_single_agent(game, num_players=4, seat=0, opponents=opponents)

    def play_single(seeds) -> tuple[float, int]:
        steps, start = 0, clock()
        for seed in seeds:
            rnd = random.Random(seed)
            _, info = single.reset(seed=seed)
            while True:
                legal = info["action_mask"].nonzero()[0]
                _, _, term, trunc, info = single.step(int(legal[int(rnd.random() * len(legal))]))
                steps += 1
                if term or trunc:
                    break
        return clock() - start, steps

    env = envs.make(game, num_players=4)
    me, engine = env.possible_agents[0], env.game
    bots = dict(zip(range(1, 4), make_opponents(game, 4, opponents, 3)))
    act = {env.possible_agents[s]: bot.act for s, bot in bots.items()}

    def play_aec(seeds) -> tuple[float, int]:
        steps, start = 0, clock()
        for seed in seeds:
            rnd = random.Random(seed)
            env.reset(seed=seed)
            for s, seat_seed in opponent_seeds(seed, 4, 0).items():
                bots[s].seed(seat_seed)
                bots[s].reset()
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    if agent == me:
                        break
                    action = None
                elif agent == me:
                    legal = obs["action_mask"].nonzero()[0]
                    action = int(legal[int(rnd.random() * len(legal))])
                    steps += 1
                else:
                    action = act[agent](obs)
                env.step(action)
                if engine.out[0]:
                    break
        return clock() - start, steps

    seeds, start = [], clock()
    while clock() - start < seconds:
        seeds.append(len(seeds))
        play_single(seeds[-1:])
    play_aec(seeds)
    runs = []
    for r in range(repeats):
        if r % 2:
            (aec_time, aec_steps), (single_time, steps) = play_aec(seeds), play_single(seeds)
        else:
            (single_time, steps), (aec_time, aec_steps) = play_single(seeds), play_aec(seeds)
        if aec_steps != steps:
            raise RuntimeError(f"{game}: the two loops played different games ({steps} vs {aec_steps} learner steps)")
        runs.append((single_time, aec_time, steps))
    return runs


def print_single_agent_overhead(games: list[str], seconds: float, repeats: int) -> None:
    print(f"\nmake_single_agent vs the AEC env, 4 players, seat 0 playing random legal moves, the same games in both;"
          f" median of {repeats} x ~{seconds:g} s")
    print("| game | opponents | AEC learner-steps/s | single-agent steps/s | overhead (min - max) |")
    print("|---|---|---:|---:|---:|")
    for game in games:
        for opponents in ("random", "heuristic"):
            runs = single_agent_overhead(game, opponents, seconds, repeats)
            over = [s / a - 1 for s, a, _ in runs]
            single_rate = statistics.median(n / s for s, _, n in runs)
            aec_rate = statistics.median(n / a for _, a, n in runs)
            print(f"| {game} | {opponents} | {aec_rate:,.0f} | {single_rate:,.0f} | "
                  f"{statistics.median(over):+.1%} ({min(over):+.1%} - {max(over):+.1%}) |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m experiments.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", "--game", default=",".join(envs.available_games()), help="comma-separated games")
    parser.add_argument("--seconds", type=cli.positive_seconds, default=1.0, help="length of one timed repeat")
    parser.add_argument("--repeats", type=cli.count, default=5, help="timed repeats per env (the median is reported)")
    parser.add_argument("--single-agent", action="store_true", help="measure make_single_agent's overhead over the AEC env instead")
    parser.add_argument("--vector", action="store_true", help="time envs.vector_env (batched, one numba thread) instead")
    parser.add_argument("--num-envs", type=cli.count, default=4096, help="tables per vector env (with --vector), batch rows (with --agents)")
    parser.add_argument("--tournament", action="store_true",
                        help="time heuristic-vs-random tournaments on the AEC path and on the batched engine instead")
    parser.add_argument("--deals", type=cli.count, default=500, help="deals per tournament (with --tournament)")
    parser.add_argument("--workers", type=cli.workers, default=2, help="worker processes per tournament (with --tournament)")
    parser.add_argument("--search", action="store_true", help="time the belief sampler and pimc instead")
    parser.add_argument("--agents", action="store_true",
                        help="time PPOAgent.act and act_batch per decision for the games' shipped checkpoints instead")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    valid = envs.available_games()
    bad = [g for g in games if g not in valid]
    if bad:
        parser.error(f"unknown game(s) {', '.join(bad)}; valid games: {', '.join(valid)}")
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")
    warnings.simplefilter("ignore")
    if args.single_agent:
        print_single_agent_overhead(games, args.seconds, args.repeats)
        return 0
    if args.search:
        from experiments.speed.search import print_search_speed

        print_search_speed(games, args.repeats)
        return 0
    if args.tournament:
        from experiments.speed.tournament import print_tournament_speed

        print_tournament_speed(games, args.deals, args.workers, args.repeats)
        return 0
    if args.agents:
        from experiments.speed.agents import print_agent_speed

        print_agent_speed(games, args.repeats, args.num_envs)
        return 0
    if args.vector:
        from experiments.speed.vector import print_vector_speed

        print_vector_speed(games, args.seconds, args.repeats, args.num_envs, leduc_maker(), steps_per_second)
        return 0

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

