"""``python -m experiments.speed --search``: the belief sampler and the search agents' speed.

Per game, on the same decisions (states with a choice, from random play, seed 0): sampled
worlds per second (`envs.belief.sample_world`), `pimc`'s play-out agent-steps per second
and its milliseconds per decision at its default budget; in Neu also the
readable search of experiments/research/headroom.py (`RolloutSearch`, the same number of
redeals) per decision, and the ratio. Times are this process's CPU time (per core), the
median over repeats.
"""

from __future__ import annotations

import random
import statistics
import time

import numpy as np

import envs
from agents.search import PIMCAgent
from agents.search.pimc import DEFAULTS
from envs.belief import sample_world


def decisions(game: str, count: int, seed: int = 0) -> list:
    """Copies of engines at decisions with a choice, from random play."""
    import copy

    e = envs.engine_class(game)(4)
    e.reset(np.random.default_rng(seed))
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        if e.game_over:
            e.reset(np.random.default_rng(seed + len(out) + 1))
        legal = np.flatnonzero(e.legal_mask())
        if legal.size > 1 and rnd.random() < 0.2:
            out.append(copy.deepcopy(e))
        e.step(int(rnd.choice(legal)))
    return out


def _pimc_time(game: str, states: list, worlds: int) -> tuple[float, int]:
    agent = PIMCAgent(game, 4, seed=0, worlds=worlds)
    start, steps = time.process_time(), agent.steps
    for e in states:
        s = e.current_player
        agent.inform(e.information_state(s))
        agent.act({"observation": e.observe(s), "action_mask": e.legal_mask()})
    return time.process_time() - start, agent.steps - steps


def _readable_time(game: str, states: list, worlds: int) -> float | None:
    from experiments.research import headroom

    # Neu only: Ma's Jong's readable search searches its steal decisions alone
    make = {"neu": headroom.NeuSearch}.get(game)
    if make is None:
        return None
    start = time.process_time()
    for e in states:
        s = e.current_player
        agent = make(s, e, worlds)
        agent.act({"observation": e.observe(s), "action_mask": e.legal_mask()})
    return time.process_time() - start


def print_search_speed(games, repeats: int = 3, count: int = 10) -> None:
    worlds = DEFAULTS["worlds"]
    print(f"search speed, {count} decisions per game, pimc at worlds={worlds} (CPU time per core, median of {repeats})")
    print("| game | sampled worlds/s | pimc play-out steps/s | pimc ms/decision | RolloutSearch ms/decision | ratio |")
    print("|---|---|---|---|---|---|")
    for game in games:
        states = decisions(game, count)
        _pimc_time(game, states[:1], 1)  # compile the rollout kernels first
        rng = np.random.default_rng(0)
        infos = [e.information_state(e.current_player) for e in states]
        samples, pimc, rates, readable = [], [], [], []
        for _ in range(repeats):
            start = time.process_time()
            for info in infos:
                for _ in range(20):
                    sample_world(info, rng)
            samples.append(20 * len(infos) / (time.process_time() - start))
            t, steps = _pimc_time(game, states, worlds)
            pimc.append(1000 * t / len(states))
            rates.append(steps / t)
            r = _readable_time(game, states, worlds)
            if r is not None:
                readable.append(1000 * r / len(states))
        med = statistics.median
        ratio = f"{med(readable) / med(pimc):.2f}x" if readable else "-"
        rs = f"{med(readable):.1f}" if readable else "-"
        print(f"| {game} | {med(samples):,.0f} | {med(rates):,.0f} | {med(pimc):.1f} | {rs} | {ratio} |")
