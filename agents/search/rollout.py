"""Play-outs from a state, with common random numbers.

`score_options(worlds, seat, options, ...)` plays, for every world and every option, one
play-out from a copy of that world in which `seat` takes the option and every seat then
plays the rollout policy. Each world has one rollout seed: the copy's chance stream (later
reshuffles, new rounds) and every seat's policy are seeded from it for every option alike,
so two options differ only through the option taken (common random numbers). The value of
a play-out is `seat`'s zero-sum reward (``envs.engine.zero_sum_rewards``) summed up to the
horizon: ``"round"``, the next score event (the end of a round in every game but Deadfall,
where a DEAD call scores), or ``"game"``, the end of the game.

The play-outs run on the readable engines. With a batched rollout policy (the heuristics',
the random agent's) all play-outs of one decision are stepped together, so the policy is one
compiled ``act_batch`` call per step for all of them.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from agents.base import can_act_batch, keeps_rows
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
    seed ``seeds[w]`` for every option), and the steps played in all.

    When the policies have the batched protocol (``act_batch``, agents/base.py), every
    play-out of the decision is stepped together, one ``act_batch`` call per step for all of
    them; a policy with state per row (``seed_rows``) gets each play-out's seat streams from
    its world's seed, the same for every option."""
    if horizon not in HORIZONS:
        raise ValueError(f"rollout horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}")
    if all(can_act_batch(p) for p in policies):
        return _score_batched(worlds, seat, options, policies[0], horizon, seeds)
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


def _score_batched(worlds, seat, options, policy, horizon, seeds):
    """`score_options` with one batched policy for every seat, all play-outs in lockstep."""
    n_opt = len(options)
    trials, option_of = [], []
    for world, seed in zip(worlds, seeds):
        for i in range(n_opt):
            trial = copy.deepcopy(world)
            trial.rng = np.random.default_rng(int(seed))
            trials.append(trial)
            option_of.append(i)
    rows = np.arange(len(trials), dtype=np.int64)
    per_row = keeps_rows(policy)
    if per_row:
        n = worlds[0].num_players
        base = np.repeat(np.asarray(seeds, dtype=np.int64) % (2**62), n_opt)
        policy.seed_rows(rows, base[:, None] + np.arange(n, dtype=np.int64)[None, :])
    totals = np.zeros(len(trials))
    steps = 0
    active = []
    for t, trial in enumerate(trials):  # each play-out's first move: its option
        if _record(trial, trial.step(int(options[option_of[t]])), t, seat, horizon, totals):
            active.append(t)
        steps += 1
    for _ in range(ROLLOUT_LIMIT):
        if not active:
            break
        who = np.fromiter((trials[t].current_player for t in active), np.int64, len(active))
        obs = np.stack([trials[t].observe(int(p)) for t, p in zip(active, who)])
        mask = np.stack([trials[t].legal_mask() for t in active])
        moves = policy.act_batch(obs, mask, who, rows=rows[active]) if per_row else policy.act_batch(obs, mask, who)
        steps += len(active)
        active = [t for t, a in zip(active, moves) if _record(trials[t], trials[t].step(int(a)), t, seat, horizon, totals)]
    else:
        raise RuntimeError(f"a {worlds[0].game_name} play-out did not end in {ROLLOUT_LIMIT} steps")
    values = np.zeros(n_opt)
    np.add.at(values, option_of, totals)
    return values, steps


def _record(trial, event, t, seat, horizon, totals) -> bool:
    """Add a step's reward to play-out `t`; True while the play-out goes on."""
    if event is not None:
        totals[t] += zero_sum_rewards(event)[seat]
        if horizon == "round":
            return False
    return not trial.game_over
