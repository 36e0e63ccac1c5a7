"""A tournament table's agents as one compiled policy: a whole batch of games in one call.

`experiments.tournament` plays a table's batch of games on the batched engine. When every
agent at the table chooses its moves in compiled code, the loop over steps runs compiled too
(`envs.vector.VectorEnv.play_games`, `envs.vector.loops.play_games`), and Python runs once
per batch instead of once per seat and step. The agents that can:

* ``HEURISTIC``: the game's compiled heuristic (`agents.heuristic.batch.KernelHeuristic`);
* ``RANDOM``: `agents.base.RandomAgent`, drawing from the stream of each (row, seat) that its
  ``seed_rows`` would set (`agents.batch_kernels.seed_streams`);
* ``PPO``: a greedy `agents.ppo.PPOAgent`, through its compiled actor
  (`agents.actor_kernels.greedy_moves`), its input built here as `PPOAgent._batch_input`
  builds it: the observation, Ma's Jong's features (`agents.features_batch`) and the
  heuristic's move as a one-hot hint.

Each makes the moves its ``act_batch`` makes (the same kernels, the same streams), so the
records are the same on both paths (tests/test_lineups.py). `lineup_kernel` says whether a
table's agents qualify and gives the game's compiled loop; `lineup_params` its arguments.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Sequence

import numpy as np
from numba import njit

from agents import features_batch as mas_jong_features
from agents.actor_kernels import ppo_moves
from agents.batch_kernels import draw_one, seed_streams
from agents.heuristic.kernels import deadfall as h_deadfall
from agents.heuristic.kernels import neu as h_neu
from agents.heuristic.kernels import not_for_me as h_not_for_me
from agents.heuristic.kernels import not_your_mas_jong as h_mas_jong
from envs.vector import deadfall as v_deadfall
from envs.vector import loops
from envs.vector import neu as v_neu
from envs.vector import not_for_me as v_not_for_me
from envs.vector import not_your_mas_jong as v_mas_jong

HEURISTIC, RANDOM, PPO = 0, 1, 2


@njit(cache=True, inline="always")
def lineup_moves(obs, mask, rows, seats, params, heuristic, features, out):
    """The moves of a table's agents for a batch of views (`envs.vector.loops.play_games`'s
    policy). ``params`` (`lineup_params`): the agent at seat ``s`` of batch row ``r`` is
    ``lineup[r, s]``, and it chooses as ``kinds[agent]`` says. Returns -1, or the first view
    whose move is not legal."""
    n, lineup, kinds, streams, hparams, nets, starts, dims, flags, fparams = params
    k = rows.shape[0]
    for a in range(kinds.shape[0]):  # each network once, on all its views
        if kinds[a] != PPO:
            continue
        views = np.empty(k, np.int64)
        m = 0
        for i in range(k):
            if lineup[rows[i], seats[i]] == a:
                views[m] = i
                m += 1
        if m:
            p = starts[a]
            net = nets[p:p + dims[a, 4]]
            ppo_moves(obs, mask, views[:m], n, hparams, net, dims[a, :4], flags[a], fparams, heuristic, features, out)
    i = 0
    while i < k:
        agent = lineup[rows[i], seats[i]]
        j = i + 1
        if kinds[agent] == RANDOM:
            out[i] = draw_one(mask[i], streams, rows[i] * n + seats[i])
        elif kinds[agent] == HEURISTIC:  # a run of views it moves in, in one call
            while j < k and lineup[rows[j], seats[j]] == agent:
                j += 1
            heuristic(obs[i:j], mask[i:j], n, hparams, out[i:j])
        i = j
    for i in range(k):
        if out[i] < 0 or out[i] >= mask.shape[1] or mask[i, out[i]] == 0:
            return i
    return -1


@njit(cache=True, inline="always")
def _no_features(obs, n, fparams, out):
    pass


# One compiled loop per game: its engine's kernels, its heuristic, its features.
@njit(cache=True, inline="always")
def _not_for_me(obs, mask, rows, seats, params, out):
    return lineup_moves(obs, mask, rows, seats, params, h_not_for_me._policy, _no_features, out)


@njit(cache=True)
def not_for_me(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch,
               obs, mask, who, tables, active, actions, params):
    return loops.play_games(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch, obs, mask,
                            who, tables, active, actions, v_not_for_me.step_rows, v_not_for_me.write_views, _not_for_me, params)


@njit(cache=True, inline="always")
def _deadfall(obs, mask, rows, seats, params, out):
    return lineup_moves(obs, mask, rows, seats, params, h_deadfall._policy, _no_features, out)


@njit(cache=True)
def deadfall(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch,
             obs, mask, who, tables, active, actions, params):
    return loops.play_games(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch, obs, mask,
                            who, tables, active, actions, v_deadfall.step_rows, v_deadfall.write_views, _deadfall, params)


@njit(cache=True, inline="always")
def _neu(obs, mask, rows, seats, params, out):
    return lineup_moves(obs, mask, rows, seats, params, h_neu._policy, _no_features, out)


@njit(cache=True)
def neu(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch,
        obs, mask, who, tables, active, actions, params):
    return loops.play_games(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch, obs, mask,
                            who, tables, active, actions, v_neu.step_rows, v_neu.write_views, _neu, params)


@njit(cache=True, inline="always")
def _mas_jong(obs, mask, rows, seats, params, out):
    return lineup_moves(obs, mask, rows, seats, params, h_mas_jong._policy, mas_jong_features.features, out)


@njit(cache=True)
def not_your_mas_jong(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch,
                      obs, mask, who, tables, active, actions, params):
    return loops.play_games(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch, obs, mask,
                            who, tables, active, actions, v_mas_jong.step_rows, v_mas_jong.write_views, _mas_jong, params)


LOOPS = {"not_for_me": not_for_me, "deadfall": deadfall, "neu": neu, "not_your_mas_jong": not_your_mas_jong}
FEATURES = {"not_your_mas_jong": mas_jong_features.tables}  # the features' tables, built when first asked for


def _kind(agent: Any, game: str) -> int | None:
    """How `agent` chooses in compiled code, or None when it cannot."""
    from agents.base import RandomAgent, keeps_rows
    from agents.heuristic.batch import compiled_strategy, shadowed

    if compiled_strategy(agent) and not keeps_rows(agent):
        return HEURISTIC
    if shadowed(agent):  # a method set on the instance: the agent's own code plays, from Python
        return None
    if type(agent) is RandomAgent:
        return RANDOM
    ppo = sys.modules.get("agents.ppo")  # never imported: no agent is a PPOAgent
    if ppo is not None and type(agent) is ppo.PPOAgent and agent.greedy and agent.net is not None:
        features = bool(agent._features is not None)
        if agent._plain or (features and game in FEATURES):
            return PPO
    return None


def lineup_kernel(agents: Sequence[Any], game: str, num_players: int) -> tuple | None:
    """``(loop, kinds, heuristic_params)`` when every agent of a table chooses in compiled code
    (see the module docstring): one heuristic strategy at most (its parameters shared by the
    hints of the networks); else None, and the table plays from Python."""
    from agents.heuristic import heuristic_class

    if game not in LOOPS:
        return None
    kinds = [_kind(a, game) for a in agents]
    if None in kinds:
        return None
    default = heuristic_class(game)(game, num_players)
    strategies = {(importlib.import_module(a.kernel), _key(a.play_kernel()[1])) for a, k in zip(agents, kinds) if k == HEURISTIC}
    hinted = any(k == PPO and a._hinter is not None for a, k in zip(agents, kinds))
    if hinted:  # a network's hint is the default heuristic's move
        strategies.add((importlib.import_module(default.kernel), _key(default.play_kernel()[1])))
    if len(strategies) > 1 or any(m is not importlib.import_module(default.kernel) for m, _ in strategies):
        return None  # the loop runs this game's heuristic kernel, with one set of parameters
    params = next((a.play_kernel()[1] for a, k in zip(agents, kinds) if k == HEURISTIC), default.play_kernel()[1])
    return LOOPS[game], np.array(kinds, np.int64), params


def lineup_params(agents: Sequence[Any], kinds: np.ndarray, heuristic_params: tuple, game: str, lineup: np.ndarray,
                  seat_seeds: np.ndarray | None) -> tuple:
    """The compiled loop's ``params``: the lineup of every row ``[rows, n]`` (indices into
    `agents`), the random streams of every (row, seat) (from ``seat_seeds``, needed when an
    agent is random), and the networks' weights laid end to end."""
    rows, n = lineup.shape
    streams = np.zeros((1, 5), np.uint64)
    if (kinds == RANDOM).any():
        streams = seed_streams(None, None, np.arange(rows, dtype=np.int64), seat_seeds, n)[0].reshape(rows * n, -1)
    tables = [a._layers for a, k in zip(agents, kinds) if k == PPO]
    width = max([1] + [t.shape[1] for t, _ in tables])
    nets = np.zeros((max(1, sum(t.shape[0] for t, _ in tables)), width), np.float32)
    starts = np.zeros(len(agents), np.int64)
    dims = np.zeros((len(agents), 5), np.int64)
    flags = np.zeros((len(agents), 3), np.int64)
    at = 0
    fparams = FEATURES.get(game, lambda: (0,))()
    for i, (a, k) in enumerate(zip(agents, kinds)):
        if k != PPO:
            continue
        table, d = a._layers
        nets[at:at + table.shape[0], :table.shape[1]] = table
        starts[i], dims[i, :4], dims[i, 4] = at, d, table.shape[0]
        flags[i] = a._feature_call[1] if a._features is not None else 0  # (features, hint, their size)
        at += table.shape[0]
    return (n, np.ascontiguousarray(lineup, np.int64), kinds, streams, heuristic_params, nets, starts, dims, flags, fparams)


def _key(params: tuple) -> tuple:
    """A heuristic's kernel parameters as something to compare and hash."""
    return tuple(np.asarray(x).tobytes() + str(np.asarray(x).dtype).encode() for x in params)
