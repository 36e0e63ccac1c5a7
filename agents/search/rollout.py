"""Play-outs from a state, with common random numbers.

`score_options(worlds, seat, options, ...)` plays, for every world and every option, one
play-out from a copy of that world in which `seat` takes the option and every seat then
plays the rollout policy. Each world has one rollout seed: the copy's chance stream (later
reshuffles, new rounds) and every seat's policy are seeded from it for every option alike,
so two options differ only through the option taken (common random numbers). The value of
a play-out is `seat`'s zero-sum reward (``envs.engine.zero_sum_rewards``) summed up to the
horizon: ``"round"``, the next score event (the end of a round in every game but Deadfall,
where a DEAD call scores), or ``"game"``, the end of the game.

The play-outs run on the readable engines, one move at a time.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from envs.engine import zero_sum_rewards

HORIZONS = ("round", "game")
ROLLOUT_LIMIT = 20_000  # engine steps; every game ends far sooner, so more means a bug


def play_out(world: Any, action: int, seat: int, policies: Sequence[Any], horizon: str) -> tuple[float, int]:
    """`seat`'s summed zero-sum reward when it takes `action` in `world` (changed in place) and
    every seat then plays `policies[seat]` to the horizon; and the number of steps taken."""
    total = 0.0
    event = world.step(int(action))
    for steps in range(1, ROLLOUT_LIMIT):
        if event is not None:
            total += zero_sum_rewards(event)[seat]
            if horizon == "round":
                return total, steps
        if world.game_over:
            return total, steps
        p = world.current_player
        event = world.step(int(policies[p].act({"observation": world.observe(p), "action_mask": world.legal_mask()})))
    raise RuntimeError(f"a {world.game_name} play-out did not end in {ROLLOUT_LIMIT} steps")


def score_options(worlds: Sequence[Any], seat: int, options: Sequence[int], policies: Sequence[Any],
                  horizon: str, seeds: Sequence[int]) -> tuple[np.ndarray, int]:
    """Summed play-out values ``[len(options)]`` over `worlds` (world ``w`` played with rollout
    seed ``seeds[w]`` for every option), and the steps played in all."""
    if horizon not in HORIZONS:
        raise ValueError(f"rollout horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}")
    values = np.zeros(len(options))
    steps = 0
    for world, seed in zip(worlds, seeds):
        for i, a in enumerate(options):
            trial = copy.deepcopy(world)
            trial.rng = np.random.default_rng(int(seed))
            for p, policy in enumerate(policies):
                if callable(getattr(policy, "seed", None)):
                    policy.seed(int(seed) + p)
                if callable(getattr(policy, "reset", None)):
                    policy.reset()
            value, n = play_out(trial, a, seat, policies, horizon)
            values[i] += value
            steps += n
    return values, steps
