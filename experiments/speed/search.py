"""``python -m experiments.speed --search``: the belief sampler, the evaluators and pimc's speed.

Per game (4 players), on the same decisions (states with a choice, from random play, seed 0):

* sampled worlds per second (`envs.belief.sample_world`);
* play-out agent-steps per second of both evaluators (`agents.search.evaluators`) on the
  same worlds and seeds (64 worlds per decision drawn from the seat's information state,
  every legal move, heuristic play-outs to the round's end): the readable one (readable
  engines, the heuristic's kernel in lockstep: how pimc played out before the batched
  evaluator), the batched one stepped from Python (`VectorEnv.load_rows`, then one
  ``step(rows=...)`` and one ``act_batch`` per step), the batched one with the whole play-out
  in one compiled call (`VectorEnv.play_out`), and that one as pimc runs it, the worlds drawn
  straight into batch rows (`VectorEnv.sample_rows`: the same worlds, drawing included in
  the time); the values must agree;
* `pimc`'s milliseconds per decision at 8 and 64 worlds with each evaluator, everything
  counted (sampling the worlds included).

Times are this process's CPU time (no kernel here runs threads, so one core), the median
over repeats.
"""

from __future__ import annotations

import copy
import random
import statistics
import time

import numpy as np

import envs
from agents.search import PIMCAgent
from agents.search.evaluators import BatchedEvaluator, ReadableEvaluator
from envs.belief import sample_world

PLAY_OUT_WORLDS = 64
PIMC_WORLDS = (8, 64)


def decisions(game: str, count: int, seed: int = 0) -> list:
    """Copies of engines at decisions with a choice, from random play."""
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


def _jobs(states: list, worlds: int, seed: int = 0) -> list:
    """(worlds, seat, moves, seeds) per decision, drawn from the seat's information state."""
    rng = np.random.default_rng(seed)
    out = []
    for e in states:
        seat = e.current_player
        info = e.information_state(seat)
        out.append(([sample_world(info, rng) for _ in range(worlds)], seat, np.flatnonzero(e.legal_mask()),
                    rng.integers(2**62, size=worlds)))
    return out


def _play_out_rate(evaluator, jobs: list) -> tuple[float, list]:
    """Agent-steps per CPU-second of `evaluator` over the jobs, and its values."""
    start, steps = time.process_time(), evaluator.steps
    values = [evaluator.evaluate(*job) for job in jobs]
    return (evaluator.steps - steps) / (time.process_time() - start), values


def _sampled_rate(evaluator, states: list, seed: int = 0) -> tuple[float, list]:
    """`_play_out_rate` of `evaluate_sampled`: the worlds of `_jobs` (the same draws), drawn into
    rows, the drawing counted in the time."""
    rng = np.random.default_rng(seed)
    start, steps = time.process_time(), evaluator.steps
    values = []
    for e in states:
        seat = e.current_player
        values.append(evaluator.evaluate_sampled(e.information_state(seat), seat, np.flatnonzero(e.legal_mask()),
                                                 PLAY_OUT_WORLDS, rng))
    return (evaluator.steps - steps) / (time.process_time() - start), values


def _pimc_ms(game: str, states: list, worlds: int, evaluator: str) -> float:
    agent = PIMCAgent(game, 4, seed=0, worlds=worlds, evaluator=evaluator)
    start = time.process_time()
    for e in states:
        s = e.current_player
        agent.inform(e.information_state(s))
        agent.act({"observation": e.observe(s), "action_mask": e.legal_mask()})
    return 1000 * (time.process_time() - start) / len(states)


def print_search_speed(games, repeats: int = 3, count: int = 10) -> None:
    print(f"search speed, {count} decisions per game, 4 players (CPU time, one core, median of {repeats}); play-outs: "
          f"{PLAY_OUT_WORLDS} worlds x every legal move, heuristic, to the round's end")
    print("| game | sampled worlds/s | play-out steps/s readable | batched, stepped from Python | batched "
          "| batched, worlds drawn in rows | batched in rows / readable "
          "| pimc ms/decision, 8 worlds: readable | batched | 64 worlds: readable | batched |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    med = statistics.median
    for game in games:
        states = decisions(game, count)
        jobs = _jobs(states, PLAY_OUT_WORLDS)
        readable, batched = ReadableEvaluator(game, 4), BatchedEvaluator(game, 4)
        stepped = BatchedEvaluator(game, 4, compiled=False)
        batched.evaluate(*jobs[0])  # load the compiled kernels first
        stepped.evaluate(*jobs[0])
        _pimc_ms(game, states[:1], 1, "batched")
        rng = np.random.default_rng(0)
        infos = [e.information_state(e.current_player) for e in states]
        samples, rates, pimc = [], {"readable": [], "stepped": [], "batched": [], "rows": []}, {}
        for _ in range(repeats):
            start = time.process_time()
            for info in infos:
                for _ in range(20):
                    sample_world(info, rng)
            samples.append(20 * len(infos) / (time.process_time() - start))
            values = {}
            for kind, evaluator in (("readable", readable), ("stepped", stepped), ("batched", batched)):
                rate, values[kind] = _play_out_rate(evaluator, jobs)
                rates[kind].append(rate)
            rate, values["rows"] = _sampled_rate(batched, states)
            rates["rows"].append(rate)
            for kind in ("stepped", "batched", "rows"):
                if not all(np.array_equal(a, b) for a, b in zip(values["readable"], values[kind])):
                    raise AssertionError(f"{game}: the {kind} batched evaluator's values differ from the readable one's")
            for worlds in PIMC_WORLDS:
                for kind in ("readable", "batched"):
                    pimc.setdefault((worlds, kind), []).append(_pimc_ms(game, states, worlds, kind))
        ratio = med(rates["rows"]) / med(rates["readable"])
        cells = [f"{med(pimc[w, k]):.1f}" for w in PIMC_WORLDS for k in ("readable", "batched")]
        print(f"| {game} | {med(samples):,.0f} | {med(rates['readable']):,.0f} | {med(rates['stepped']):,.0f} | {med(rates['batched']):,.0f} | "
              f"{med(rates['rows']):,.0f} | {ratio:.1f}x | {' | '.join(cells)} |")
