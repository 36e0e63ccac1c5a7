"""The one Agent interface: an agent maps an observation dict to an action, and is seeded.

Agents may also act for many games at once (the *batched protocol*), which is
what lets tournaments and training run on the batched engines
(`envs.vector_env`) without one Python call per move:

``act_batch(obs, mask, seat) -> actions``
    ``obs`` float32 ``[N, obs_size]``, ``mask`` int8 (or bool) ``[N, num_actions]``
    and ``seat`` int64 ``[N]`` are exactly the arrays ``envs.vector_env(...).reset()``
    and ``.step()`` return: batch row ``t`` is one game, ``seat[t]`` the seat to act
    there, ``obs[t]`` that seat's observation (the AEC layout, seat-relative) and
    ``mask[t]`` its legal actions. It returns an integer array ``[N]`` (int64) with a
    legal action for every row: row ``t``'s move must be the one ``act()`` would return
    for ``{"observation": obs[t], "action_mask": mask[t]}`` from the same agent state.
    A row whose mask is all zeros is a ``ValueError``, as in ``act``.

The method is optional. `can_act_batch(agent)` says whether an agent has it;
tools that run games in batches use it when every agent at a table can, and
take the one-move-at-a-time path (``act`` on AEC envs) otherwise, so an agent
without it works everywhere. A compiled kernel plays only for the exact code
it was compiled from: a subclass of a built-in heuristic that changes how it
decides (overrides a method the decision uses) loses the inherited
``act_batch`` (it is ``None`` there) but keeps one it defines, and an instance
with a method set on it (``bot.act = f``) plays that method, row by row
(`agents.heuristic.batch`).

Agents that draw random numbers or keep memory per game keep it per batch
row, with two more optional hooks:

``seed_rows(rows, seeds)``
    ``rows`` int ``[k]``, ``seeds`` int ``[k, num_players]``: from now on, seat
    ``s`` at batch row ``rows[i]`` draws from its own stream, the one
    ``seed(seeds[i, s])`` would give a one-game agent. A runner calls it when
    rows start new games, with the seeds it would give each seat's agent, and
    then gets the moves the per-game agents would make (see `RandomAgent`).
``reset_rows(rows)``
    the batch rows ``rows`` start new games (``reset()`` for each).

One more optional hook is for agents that search:

``inform(info_state)``
    called right before each ``act``, as part of the same move (the same time limit, the
    same guard; `envs.belief.informed`), by the tournament's one-game path (``--isolate``
    too: the state travels to the agent's process), `compare`, `envs.single_agent`, the
    web page's bots and distillation's AEC tables, with ``engine.information_state(seat)``:
    a plain dict of everything the seat knows (`envs.belief`; in your own loop,
    ``env.unwrapped.information_state(agent)``). An agent with it has no ``act_batch``
    (a batched tournament then plays its tables on the AEC path). Runners that cannot give
    it (``experiments.exploit --target``, ``experiments.solve --exploit``) refuse such an
    agent before any work.

Such an agent's ``act_batch`` also takes ``rows=`` (int ``[N]``): which batch
rows the ``N`` given rows are, when a runner gives it only the rows where it
is to move (default: all rows, in order). `act_by_agent` does that for a
table of several agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def can_act_batch(agent: Any) -> bool:
    """Does this agent implement the batched protocol (``act_batch``, see the module docstring)?"""
    return callable(getattr(agent, "act_batch", None))


def keeps_rows(agent: Any) -> bool:
    """Does this agent keep state per batch row (``seed_rows`` or ``reset_rows``), so that its
    ``act_batch`` needs to know which rows it is given (``rows=``)?"""
    return callable(getattr(agent, "seed_rows", None)) or callable(getattr(agent, "reset_rows", None))


def act_by_agent(agents: Any, who: Any, obs: Any, mask: Any, seat: Any) -> np.ndarray:
    """The moves of a batch where row ``t`` is played by ``agents[who[t]]`` (the agent in the
    seat to act there): one ``act_batch`` call per agent, on its rows only; agents that keep
    state per row are told which rows those are."""
    who = np.asarray(who)
    out = np.empty(len(who), np.int64)
    for i, agent in enumerate(agents):
        rows = np.flatnonzero(who == i)
        if rows.size == 0:
            continue
        if rows.size == len(who):
            out[:] = agent.act_batch(obs, mask, seat, rows=rows) if keeps_rows(agent) else agent.act_batch(obs, mask, seat)
        elif keeps_rows(agent):
            out[rows] = agent.act_batch(obs[rows], mask[rows], seat[rows], rows=rows)
        else:
            out[rows] = agent.act_batch(obs[rows], mask[rows], seat[rows])
    return out


def batch_arrays(obs: Any, mask: Any, seat: Any, obs_size: int | None = None, num_actions: int | None = None):
    """The batched protocol's inputs as contiguous float32 ``[N, obs_size]``, int8 ``[N, A]`` and
    int64 ``[N]`` arrays; ValueError names a wrong shape (`checked_moves` catches empty masks)."""
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    mask = np.asarray(mask)
    mask = np.ascontiguousarray(mask.view(np.int8) if mask.dtype == np.bool_ else mask, dtype=np.int8)
    seat = np.ascontiguousarray(seat, dtype=np.int64)
    if obs.ndim != 2 or mask.ndim != 2 or seat.ndim != 1 or not obs.shape[0] == mask.shape[0] == seat.shape[0]:
        raise ValueError(f"act_batch expects obs [N, obs_size], mask [N, num_actions] and seat [N], got {obs.shape}, {mask.shape} and {seat.shape}")
    if obs_size is not None and obs.shape[1] != obs_size:
        raise ValueError(f"act_batch: observations have {obs.shape[1]} values, this agent's game has {obs_size}")
    if num_actions is not None and mask.shape[1] != num_actions:
        raise ValueError(f"act_batch: masks have {mask.shape[1]} actions, this agent's game has {num_actions}")
    return obs, mask, seat


def checked_moves(actions: np.ndarray) -> np.ndarray:
    """A compiled ``act_batch``'s moves, where -1 marks a row with no legal move: ValueError
    naming those rows (the kernels find them while reading the masks, at no extra pass)."""
    if actions.size and actions.min() < 0:
        raise ValueError(f"act_batch: all-zeros action mask at batch row(s) {np.flatnonzero(actions < 0)[:10].tolist()}")
    return actions


class Agent:
    """Base class for every baseline (random, heuristic, PPO).

    An agent is built for one game and player count, because observation
    layouts depend on both. It sees only what the env gives its seat: the
    observation dict ``{"observation": float32 vector, "action_mask": int8 vector}``.
    ``act_batch`` (many games at once) is optional: see the module docstring.
    """

    name = "agent"

    def __init__(self, game: str, num_players: int, seed: int | None = None) -> None:
        self.game = game
        self.num_players = num_players
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Called at the start of every game (for agents with memory)."""

    def act(self, observation: dict) -> int:
        raise NotImplementedError

    def legal_actions(self, observation: dict) -> np.ndarray:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError(f"{self.name}: asked to act with an all-zeros action mask")
        return legal

    def __repr__(self) -> str:
        return f"{type(self).__name__}(game={self.game!r}, num_players={self.num_players})"


class RandomAgent(Agent):
    """Uniform over the legal actions: ``legal[rng.integers(len(legal))]`` (no draw when one move is legal).

    ``act_batch`` makes the same draws, compiled, in one of two ways:

    * **one stream** (the default, and again after every ``seed(...)``): the
      agent's own generator serves the rows in order, so ``act_batch`` returns
      exactly what ``act`` would for row 0, row 1, ... called one after the
      other, and leaves the generator where those calls would;
    * **a stream per (row, seat)**, after ``seed_rows(rows, seeds)``: seat ``s``
      at row ``rows[i]`` then draws from ``numpy.random.default_rng(seeds[i, s])``,
      the generator of ``RandomAgent(game, n, seed=seeds[i, s])``. Calling
      ``seed_rows`` for a row whenever it starts a game, with the seed each
      seat's one-game agent would get, reproduces those agents' moves exactly.
      Every row asked about must have been seeded this way; ``act_batch(...,
      rows=r)`` says which rows the given ones are (default: 0, 1, ...).
    """

    name = "random"

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._row_streams = None  # [rows, num_players, 5] PCG64 states, once seed_rows is called
        self._row_seeded = None

    def act(self, observation: dict) -> int:
        legal = self.legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])

    def seed_rows(self, rows: Any, seeds: Any) -> None:
        from agents.batch_kernels import seed_streams

        self._row_streams, self._row_seeded = seed_streams(self._row_streams, self._row_seeded, rows, seeds, self.num_players)

    def act_batch(self, obs: Any, mask: Any, seat: Any, rows: Any = None) -> np.ndarray:
        from agents.batch_kernels import draw_rows

        _, mask, seat = batch_arrays(obs, mask, seat)
        if self._row_streams is None:
            return checked_moves(draw_rows(mask, seat, generator=self.rng))
        return checked_moves(draw_rows(mask, seat, streams=self._row_streams, seeded=self._row_seeded, rows=rows))


def move_probabilities(agent: Agent, key: bytes, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The agent's probability of each move at one information set (exact solving, OpenSpiel):
    ``probs_at(key)`` where it has one (a solved policy, keyed by `Engine.information_key`),
    ``action_probs(observation)`` where it has one, uniform over the legal moves for
    `RandomAgent`, and otherwise its ``act`` once, which must then be deterministic (checked
    under two seeds). Normalised over the legal moves; ValueError when it gives them no weight."""
    legal = np.asarray(mask) > 0
    if callable(getattr(agent, "probs_at", None)):
        p = np.asarray(agent.probs_at(key), np.float64)
    elif callable(getattr(agent, "action_probs", None)):
        p = np.asarray(agent.action_probs({"observation": obs, "action_mask": mask}), np.float64)
    elif isinstance(agent, RandomAgent):
        p = legal / legal.sum()
    else:
        moves = set()
        for s in (1, 2):
            if callable(getattr(agent, "seed", None)):
                agent.seed(s)
            if callable(getattr(agent, "reset", None)):
                agent.reset()
            moves.add(int(agent.act({"observation": obs, "action_mask": mask})))
        if len(moves) > 1:
            raise ValueError(f"agent {type(agent).__name__} is not deterministic (moves {sorted(moves)} at one "
                             f"information set); give it action_probs(observation) for exact exploitability")
        p = np.zeros(len(legal))
        p[moves.pop()] = 1.0
    p = np.where(legal, p, 0.0)
    if not p.sum() > 0:
        raise ValueError(f"agent {type(agent).__name__} gives no weight to any legal move at an information set")
    return p / p.sum()
