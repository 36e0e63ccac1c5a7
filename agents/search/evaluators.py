"""Evaluators: every seat's value of each first move, in each of many worlds, by play-outs.

Search agents (pimc; ismcts with max^n later) ask one question: given ``W`` full game states
(``worlds``, e.g. from `envs.belief.sample_world`) in which ``seat`` is to act, and ``M``
first moves for it, what does each seat get when that move is taken and every seat then plays
the play-out policy to the horizon? ::

    values = evaluator.evaluate(worlds, seat, first_moves, seeds)   # float64 [W, M, num_players]

``values[w, m, s]`` is seat ``s``'s zero-sum reward (RULES.md "Scores and rewards"), summed
over the score events from the first move to the horizon: ``"round"``, the next score event
(a round's end; Deadfall's DEAD call), or ``"game"``, the game's end. Rewards are taken at the
batched engine's float32 precision (each event's, then summed in float64), so both
evaluators below give the same values to the bit.

Common random numbers: world ``w``'s ``M`` play-outs all start from the world's own chance
stream (``world.rng``, copied: the worlds are never changed) and seed the play-out policy
from ``seeds[w]`` (seat ``s`` from ``seeds[w] + s``), so two first moves are compared on the
same reshuffles, deals and random draws.

* `BatchedEvaluator` (the default) plays all ``W x M`` play-outs on one batched engine
  (`envs.vector.VectorEnv`): each world is loaded into a batch row (``load_rows``; a PCG64
  chance stream is copied exactly) and copied to ``M`` rows, one per first move; then every
  step is one ``act_batch`` call of the policy (the heuristics' compiled kernels, the random
  agent's compiled draws, any agent with the batched protocol) for the rows still playing
  and one ``step(..., rows=...)`` of those rows alone. A row stops at its horizon
  (``score_events`` moved, or the game ended; a finished row starts a new game by itself,
  which is never stepped or counted). The env is kept and reused, grown when a decision needs
  more rows. A compiled heuristic (``play_kernel()``) plays the whole loop in one compiled
  call instead (``VectorEnv.play_out``: the same steps, no Python between them), and each
  world is read once and its table copied to a row per first move (``copy_rows``).
* `ReadableEvaluator` plays the same play-outs on copies of the readable engines
  (`agents.search.rollout`): the reference. With ``lockstep=False`` it calls every policy's
  ``act`` one move at a time, the policies' own definition.

``BatchedEvaluator.evaluate_sampled(info, seat, first_moves, count, rng)`` is `evaluate` of
``count`` worlds drawn from an information state, straight into batch rows
(`VectorEnv.sample_rows`): the same worlds, seeds and values as drawing them with
`envs.belief.sample_world` first, without building an engine per world.

``evaluate_pairs(worlds, first_moves, seeds) -> [W, players]`` asks the same of one first move
per world, taken by whoever is to act there (ismcts's leaves, each from its own node): world
``k``'s play-out takes ``first_moves[k]`` and seeds the policy from ``seeds[k]``.

tests/test_evaluators.py checks that both give the same values in every game.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np

import envs
from agents.base import RandomAgent, can_act_batch, keeps_rows
from agents.heuristic.batch import compiled_strategy
from agents.search.rollout import ROLLOUT_LIMIT, check_horizon, play_outs, play_pairs
from envs.belief import representative

EVALUATORS = ("batched", "readable")


class Evaluator(Protocol):
    """What a search agent calls (see the module docstring)."""

    steps: int  # agent-steps played in all (for speed figures)

    def evaluate(self, worlds: Sequence[Any], seat: int, first_moves: Sequence[int],
                 seeds: Sequence[int] | None = None) -> np.ndarray: ...

    def evaluate_pairs(self, worlds: Sequence[Any], first_moves: Sequence[int], seeds: Sequence[int]) -> np.ndarray: ...


def rollout_policy(rollout: Any, game: str, num_players: int, seed: int = 0) -> Any:
    """The play-out policy: ``"heuristic"``, ``"random"``, ``"ppo"`` or ``"ppo:PATH"`` (a network, greedy), or
    an agent class."""
    if isinstance(rollout, str) and (rollout == "ppo" or rollout.startswith("ppo:")):
        from agents.ppo import PPOAgent  # its loader says when the file is missing or not for this game

        path = rollout[len("ppo:"):] if rollout.startswith("ppo:") else None
        return PPOAgent.for_game(game, num_players, seed=seed, checkpoint=path)
    if rollout == "heuristic":
        from agents.heuristic import heuristic_class

        return heuristic_class(game)(game, num_players, seed)
    if rollout == "random":
        return RandomAgent(game, num_players, seed)
    if isinstance(rollout, type):
        return rollout(game, num_players, seed)
    raise ValueError(f"rollout must be heuristic, random, ppo, ppo:PATH or an agent class, got {rollout!r}")


def _checked(worlds: Sequence[Any], seat: int, first_moves: Sequence[int], seeds: Sequence[int] | None):
    worlds = list(worlds)
    moves = np.asarray(first_moves, dtype=np.int64).reshape(-1)
    seeds = np.arange(len(worlds), dtype=np.int64) if seeds is None else np.asarray(seeds, dtype=np.int64).reshape(-1)
    if seeds.size != len(worlds):
        raise ValueError(f"one seed per world: {len(worlds)} worlds, {seeds.size} seeds")
    for w, world in enumerate(worlds):
        if world.game_over or world.current_player != seat:
            raise ValueError(f"worlds[{w}]: seat {seat} must be to act, got player_{world.current_player}"
                             + (" (game over)" if world.game_over else ""))
    return worlds, moves, seeds


def _checked_pairs(worlds: Sequence[Any], first_moves: Sequence[int], seeds: Sequence[int]):
    worlds = list(worlds)
    moves = np.asarray(first_moves, dtype=np.int64).reshape(-1)
    seeds = np.asarray(seeds, dtype=np.int64).reshape(-1)
    if not len(worlds) == moves.size == seeds.size:
        raise ValueError(f"one first move and one seed per world: {len(worlds)} worlds, {moves.size} moves, {seeds.size} seeds")
    for w, world in enumerate(worlds):
        if world.game_over:
            raise ValueError(f"worlds[{w}]: the game is over")
    return worlds, moves, seeds


class BatchedEvaluator:
    """Play-outs on the batched engine, the policy's ``act_batch`` in every seat."""

    def __init__(self, game: str, num_players: int, rollout: Any = "heuristic", horizon: str = "round",
                 compiled: bool = True) -> None:
        self.game, self.num_players, self.horizon = game, num_players, check_horizon(horizon)
        self.policy = rollout_policy(rollout, game, num_players) if isinstance(rollout, (str, type)) else rollout
        if not can_act_batch(self.policy):
            raise ValueError(f"the batched evaluator needs a play-out policy with act_batch; {type(self.policy).__name__} "
                             "has none (play it out with the readable evaluator, pimc's evaluator=readable)")
        self.venv: envs.vector.VectorEnv | None = None
        self.steps = 0
        # A compiled heuristic plays whole play-outs in one call (VectorEnv.play_out); other
        # policies (and compiled=False, the check of that path) go step by step from Python.
        self.compiled = bool(compiled) and compiled_strategy(self.policy) and not keeps_rows(self.policy)
        self._kernel = self.policy.play_kernel() if self.compiled else None

    def _env(self, world: Any, rows: int) -> Any:
        """The kept env, or a new one when it is too small or of other rules."""
        venv = self.venv
        if venv is None or venv.num_envs < rows or venv.options != dict(world.options):
            size = rows if venv is None else max(rows, venv.num_envs + venv.num_envs // 2)
            venv = self.venv = envs.vector_env(self.game, size, self.num_players, seed=0, **world.options)
            venv.reset()
        return venv

    def evaluate(self, worlds: Sequence[Any], seat: int, first_moves: Sequence[int],
                 seeds: Sequence[int] | None = None) -> np.ndarray:
        worlds, moves, seeds = _checked(worlds, seat, first_moves, seeds)
        W, M = len(worlds), moves.size
        values = self._play(worlds, np.tile(moves, W), np.repeat(seeds, M), M)
        return values.reshape(W, M, self.num_players)

    def evaluate_pairs(self, worlds: Sequence[Any], first_moves: Sequence[int], seeds: Sequence[int]) -> np.ndarray:
        """One play-out per world: whoever is to act in ``worlds[k]`` takes ``first_moves[k]``,
        the policy seeded from ``seeds[k]``; every seat's value ``[len(worlds), num_players]``."""
        worlds, moves, seeds = _checked_pairs(worlds, first_moves, seeds)
        return self._play(worlds, moves, seeds)

    def evaluate_sampled(self, info: dict, seat: int, first_moves: Sequence[int], count: int,
                         rng: np.random.Generator) -> np.ndarray:
        """`evaluate` of ``count`` worlds drawn from the information state `info`, with the same
        draws of `rng` as ``worlds = [sample_world(info, rng) for _ in range(count)]`` followed by
        ``seeds = rng.integers(2**62, size=count)``, and the same values as ``evaluate(worlds,
        seat, first_moves, seeds)``; but the worlds are drawn straight into batch rows
        (`VectorEnv.sample_rows`), never built as engines. ``[count, M, num_players]``."""
        moves = np.asarray(first_moves, dtype=np.int64).reshape(-1)
        if info.get("seat") != seat or seat not in range(self.num_players) or not info.get("legal"):
            raise ValueError(f"evaluate_sampled: the information state must be seat {seat}'s, with seat {seat} to act")
        M = moves.size
        R = count * M
        if R == 0:
            return np.zeros((count, M, self.num_players))
        world = representative(info)
        rows = np.arange(R, dtype=np.int64)
        venv = self._env(world, R)
        venv.sample_rows(rows[::M], info, rng)
        seeds = rng.integers(2**62, size=count)
        values = self._play_loaded(venv, rows, np.tile(moves, count), np.repeat(seeds, M), M)
        return values.reshape(count, M, self.num_players)

    def _play(self, worlds: list, actions: np.ndarray, row_seeds: np.ndarray, repeat: int = 1) -> np.ndarray:
        """Rows ``r * repeat`` to ``r * repeat + repeat - 1`` load ``worlds[r]``; row ``i`` takes
        ``actions[i]``, then the policy plays (seeded from ``row_seeds[i]``) to the horizon:
        every seat's summed reward ``[rows, n]``."""
        R = len(worlds) * repeat
        if R == 0:
            return np.zeros((R, self.num_players))
        venv = self._env(worlds[0], R)
        rows = np.arange(R, dtype=np.int64)
        venv.load_rows(rows[::repeat], worlds)
        return self._play_loaded(venv, rows, actions, row_seeds, repeat)

    def _play_loaded(self, venv: Any, rows: np.ndarray, actions: np.ndarray, row_seeds: np.ndarray,
                     repeat: int) -> np.ndarray:
        """`_play` once rows ``0, repeat, 2 * repeat, ...`` hold the worlds."""
        R, n = rows.size, self.num_players
        values = np.zeros((R, n))
        loaded = rows[::repeat]
        if repeat > 1:  # each world read once, its table copied to a row per first move
            others = rows.reshape(-1, repeat)[:, 1:].reshape(-1)
            venv.copy_rows(np.repeat(loaded, repeat - 1), others)
        if self.compiled:  # the whole play-out in one compiled call
            values, steps = venv.play_out(rows, actions, *self._kernel, horizon=self.horizon, limit=ROLLOUT_LIMIT)
            self.steps += steps
            return values
        policy, per_row = self.policy, keeps_rows(self.policy)
        if per_row:
            policy.seed_rows(rows, row_seeds[:, None] + np.arange(n, dtype=np.int64)[None, :])
        start = venv.score_events(rows) if self.horizon == "round" else None
        active = rows
        for _ in range(ROLLOUT_LIMIT):
            obs, mask, who, rewards, done = venv.step(actions, rows=active)
            values[active] += rewards
            self.steps += active.size
            going = ~done
            if start is not None:
                going &= venv.score_events(active) == start[active]
            if not going.all():
                active, obs, mask, who = active[going], obs[going], mask[going], who[going]
                if not active.size:
                    return values
            actions = policy.act_batch(obs, mask, who, rows=active) if per_row else policy.act_batch(obs, mask, who)
        raise RuntimeError(f"a {self.game} play-out did not end in {ROLLOUT_LIMIT} steps")


class ReadableEvaluator:
    """Play-outs on copies of the readable engines (`agents.search.rollout`): the reference."""

    def __init__(self, game: str, num_players: int, rollout: Any = "heuristic", horizon: str = "round",
                 lockstep: bool | None = None) -> None:
        self.game, self.num_players, self.horizon = game, num_players, check_horizon(horizon)
        self.policies = [rollout_policy(rollout, game, num_players, s) for s in range(num_players)]
        self.lockstep = lockstep
        self.steps = 0

    def evaluate(self, worlds: Sequence[Any], seat: int, first_moves: Sequence[int],
                 seeds: Sequence[int] | None = None) -> np.ndarray:
        worlds, moves, seeds = _checked(worlds, seat, first_moves, seeds)
        values, steps = play_outs(worlds, seat, moves.tolist(), self.policies, self.horizon, seeds.tolist(), self.lockstep)
        self.steps += steps
        return values

    def evaluate_pairs(self, worlds: Sequence[Any], first_moves: Sequence[int], seeds: Sequence[int]) -> np.ndarray:
        worlds, moves, seeds = _checked_pairs(worlds, first_moves, seeds)
        values, steps = play_pairs(worlds, moves.tolist(), self.policies, self.horizon, seeds.tolist(), self.lockstep)
        self.steps += steps
        return values


def make_evaluator(kind: str, game: str, num_players: int, rollout: Any = "heuristic", horizon: str = "round") -> Evaluator:
    """``"batched"`` or ``"readable"`` (see the module docstring)."""
    if kind == "batched":
        return BatchedEvaluator(game, num_players, rollout, horizon)
    if kind == "readable":
        return ReadableEvaluator(game, num_players, rollout, horizon)
    raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)}, got {kind!r}")


def evaluate(worlds: Sequence[Any], seat: int, first_moves: Sequence[int], seeds: Sequence[int] | None = None,
             rollout: Any = "heuristic", horizon: str = "round", evaluator: str = "batched") -> np.ndarray:
    """One evaluation with a new evaluator (a search agent keeps one instead): every seat's
    summed reward ``[len(worlds), len(first_moves), num_players]``."""
    if not worlds:
        raise ValueError("evaluate needs at least one world")
    first = worlds[0]
    return make_evaluator(evaluator, first.game_name, first.num_players, rollout, horizon).evaluate(
        worlds, seat, first_moves, seeds)
