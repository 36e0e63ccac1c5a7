"""Play-outs on the readable engines: the reference the batched evaluator is checked against.

`play_outs(worlds, seat, first_moves, policies, horizon, seeds)` plays, for every world and
every first move, one play-out from a copy of that world in which `seat` takes the move and
every seat then plays its policy (``policies[s]`` in seat ``s``). The copy keeps the world's
chance stream (later reshuffles, new rounds), and the policies of world ``w``'s play-outs are
seeded from ``seeds[w]`` (seat ``s`` from ``seeds[w] + s``) for every move alike, so two moves
differ only through the move taken (common random numbers). A play-out's value is every
seat's zero-sum reward (``envs.engine.zero_sum_rewards``, at the batched engine's float32
precision, so that both agree to the bit) summed up to the horizon: ``"round"``, the next
score event (the end of a round in every game but Deadfall, where a DEAD call scores), or
``"game"``, the end of the game.

With ``lockstep`` (the default when every policy has the batched protocol, ``act_batch``,
agents/base.py) all play-outs are stepped together, one ``act_batch`` call per step for all
of them; otherwise each play-out calls ``act`` move by move, the policies' definition.
`play_pairs(worlds, first_moves, policies, horizon, seeds)` plays one play-out per world, each
with its own first move and seed, whoever is to act (ismcts's leaves). `agents.search.evaluators`
wraps both as ``ReadableEvaluator``.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from agents.base import can_act_batch, keeps_rows
from envs.engine import zero_sum_rewards

HORIZONS = ("round", "game")
ROLLOUT_LIMIT = 20_000  # engine steps; every game ends far sooner, so more means a bug


def check_horizon(horizon: str) -> str:
    if horizon not in HORIZONS:
        raise ValueError(f"rollout horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}")
    return horizon


def play_outs(worlds: Sequence[Any], seat: int, first_moves: Sequence[int], policies: Sequence[Any], horizon: str,
              seeds: Sequence[int] | None = None, lockstep: bool | None = None) -> tuple[np.ndarray, int]:
    """Every seat's summed reward ``[len(worlds), len(first_moves), num_players]`` (float64)
    and the agent-steps played in all; `worlds` are read, never changed."""
    moves = [int(a) for a in first_moves]
    seeds = list(range(len(worlds))) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(worlds):
        raise ValueError(f"one seed per world: {len(worlds)} worlds, {len(seeds)} seeds")
    for world in worlds:
        if world.game_over or world.current_player != seat:
            raise ValueError(f"every world must have seat {seat} to act, got player_{world.current_player}"
                             + (" (game over)" if world.game_over else ""))
    trials = [(world, move, seed) for world, seed in zip(worlds, seeds) for move in moves]
    totals, steps = _play(trials, policies, horizon, lockstep)
    return totals.reshape(len(worlds), len(moves), len(policies)), steps


def play_pairs(worlds: Sequence[Any], first_moves: Sequence[int], policies: Sequence[Any], horizon: str,
               seeds: Sequence[int], lockstep: bool | None = None) -> tuple[np.ndarray, int]:
    """One play-out per world: whoever is to act in ``worlds[k]`` takes ``first_moves[k]``, the
    policies seeded from ``seeds[k]``. Every seat's summed reward ``[len(worlds), num_players]``
    and the agent-steps played; `worlds` are read, never changed."""
    if not len(worlds) == len(first_moves) == len(seeds):
        raise ValueError(f"one first move and one seed per world: {len(worlds)} worlds, {len(first_moves)} moves, "
                         f"{len(seeds)} seeds")
    for k, world in enumerate(worlds):
        if world.game_over:
            raise ValueError(f"worlds[{k}]: the game is over")
    return _play([(w, int(a), int(s)) for w, a, s in zip(worlds, first_moves, seeds)], policies, horizon, lockstep)


def _play(trials: list, policies: Sequence[Any], horizon: str, lockstep: bool | None) -> tuple[np.ndarray, int]:
    """Play out (world, first move, seed) triples on copies of the worlds; totals [T, n] and steps."""
    check_horizon(horizon)
    if lockstep is None:
        lockstep = all(can_act_batch(p) for p in policies)
    n = len(policies)
    totals = np.zeros((len(trials), n))
    copies = [copy.deepcopy(world) for world, _, _ in trials]
    moves = [move for _, move, _ in trials]
    seeds = [seed for _, _, seed in trials]
    if lockstep:
        return totals, _lockstep(copies, moves, policies[0], horizon, seeds, totals)
    steps = 0
    for t, trial in enumerate(copies):
        for p, policy in enumerate(policies):
            if callable(getattr(policy, "seed", None)):
                policy.seed(seeds[t] + p)
            if callable(getattr(policy, "reset", None)):
                policy.reset()
        steps += _one(trial, moves[t], policies, horizon, totals[t])
    return totals, steps


def _record(trial: Any, event: Any, horizon: str, total: np.ndarray) -> bool:
    """Add a step's rewards to a play-out's `total`; True while the play-out goes on."""
    if event is not None:
        total += np.float32(zero_sum_rewards(event))
        if horizon == "round":
            return False
    return not trial.game_over


def _one(trial: Any, action: int, policies: Sequence[Any], horizon: str, total: np.ndarray) -> int:
    """One play-out, move by move with ``act``; its steps."""
    going = _record(trial, trial.step(action), horizon, total)
    for steps in range(1, ROLLOUT_LIMIT):
        if not going:
            return steps
        p = trial.current_player
        move = policies[p].act({"observation": trial.observe(p), "action_mask": trial.legal_mask()})
        going = _record(trial, trial.step(int(move)), horizon, total)
    raise RuntimeError(f"a {trial.game_name} play-out did not end in {ROLLOUT_LIMIT} steps")


def _lockstep(trials: list, moves: list[int], policy: Any, horizon: str, seeds: list[int], totals: np.ndarray) -> int:
    """All play-outs stepped together, one batched policy in every seat; trial ``t`` takes
    ``moves[t]`` first, its policies seeded from ``seeds[t]``."""
    rows = np.arange(len(trials), dtype=np.int64)
    per_row = keeps_rows(policy)
    if per_row:
        n = totals.shape[1]
        policy.seed_rows(rows, np.asarray(seeds, dtype=np.int64)[:, None] + np.arange(n, dtype=np.int64)[None, :])
    active = [t for t, trial in enumerate(trials) if _record(trial, trial.step(moves[t]), horizon, totals[t])]
    steps = len(trials)
    for _ in range(ROLLOUT_LIMIT):
        if not active:
            return steps
        who = np.fromiter((trials[t].current_player for t in active), np.int64, len(active))
        obs = np.stack([trials[t].observe(int(p)) for t, p in zip(active, who)])
        mask = np.stack([trials[t].legal_mask() for t in active])
        chosen = policy.act_batch(obs, mask, who, rows=rows[active]) if per_row else policy.act_batch(obs, mask, who)
        steps += len(active)
        active = [t for t, a in zip(active, chosen) if _record(trials[t], trials[t].step(int(a)), horizon, totals[t])]
    raise RuntimeError(f"a {trials[0].game_name} play-out did not end in {ROLLOUT_LIMIT} steps")
