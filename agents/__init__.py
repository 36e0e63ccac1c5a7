"""Who plays: one Agent interface and one spec grammar for random, the heuristics (one per game),
PPO, search (pimc, ismcts) and solved presets (cfr).

    from agents import make_agent
    bot = make_agent("heuristic", game="neu", num_players=4, seed=0)
    action = bot.act(observation)            # observation = env.last()[0]
    mine = make_agent("bots.py:Greedy", game="neu", num_players=4, seed=0)   # your own class

Many games at once: an agent may also have ``act_batch(obs, mask, seat) -> actions``
over the arrays of `envs.vector_env` (float32 ``[N, obs_size]``, int8 ``[N, A]``,
int64 ``[N]`` -> int64 ``[N]``, the move ``act`` would make in every row). It is
optional: ``agents.can_act_batch(agent)`` tells, and agents without it take the
one-move-at-a-time path. The random and heuristic agents have it (the heuristics
as compiled kernels that make the readable files' moves); your own class may
add it, with ``seed_rows(rows, seeds)`` if it draws random numbers. The contract
is in `agents.base`; ``agents.act_by_agent`` plays a batch where each row's seat
to act belongs to one of several agents.

    import envs
    venv = envs.vector_env("neu", num_envs=1024, num_players=4, seed=0)
    obs, mask, seat = venv.reset()
    actions = bot.act_batch(obs, mask, seat)
"""

from __future__ import annotations

import envs  # noqa: F401 (first: it keys numba's cache by the sources, before any kernel here is defined)
from agents.base import Agent, RandomAgent, act_by_agent, can_act_batch
from agents.spec import BUILTIN_KINDS, is_upper_bound, make_from_spec, spec_label
from agents.opponents import make_single_agent

AGENT_KINDS = BUILTIN_KINDS


def make_agent(kind, game: str, num_players: int, seed: int | None = None, **kwargs) -> Agent:
    """Build an agent from a kind or any spec (see `agents.spec`); ValueError names the valid kinds.

    ``kind`` is "random", "heuristic", "ppo", "ppo:PATH", "FILE.py:Name",
    "package.module:Name", "label=SPEC", a class, a factory or an agent object
    (copied). Classes and factories get the keywords game/num_players/seed they accept.
    """
    return make_from_spec(kind, game, num_players, seed, **kwargs)


def make_agents(kind: str, game: str, num_players: int, seed: int) -> list[Agent]:
    """One agent per seat, seat s seeded with ``8 * seed + s``: all of one kind, or "mixed" (the
    heuristic on even seats, random on odd ones)."""
    if kind == "mixed":
        return [make_agent("heuristic" if s % 2 == 0 else "random", game, num_players, seed=seed * 8 + s) for s in range(num_players)]
    return [make_agent(kind, game, num_players, seed=seed * 8 + s) for s in range(num_players)]


def __getattr__(name: str):
    # `agents.PPOAgent` without importing torch for users who never need it.
    if name == "PPOAgent":
        from agents.ppo import PPOAgent

        return PPOAgent
    raise AttributeError(name)


__all__ = ["Agent", "RandomAgent", "act_by_agent", "can_act_batch", "make_agent", "make_agents", "spec_label", "is_upper_bound", "AGENT_KINDS", "PPOAgent", "make_single_agent"]
