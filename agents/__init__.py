"""Baseline agents: random, heuristic (one per game) and PPO.

    from agents import make_agent
    bot = make_agent("heuristic", game="neu", num_players=4, seed=0)
    action = bot.act(observation)            # observation = env.last()[0]
"""

from __future__ import annotations

from agents.base import Agent, RandomAgent

AGENT_KINDS = ("random", "heuristic", "ppo")


def make_agent(kind: str, game: str, num_players: int, seed: int | None = None, **kwargs) -> Agent:
    """Build an agent by kind; ValueError names the valid kinds."""
    if kind == "random":
        return RandomAgent(game, num_players, seed)
    if kind == "heuristic":
        from agents.heuristic import heuristic_class

        return heuristic_class(game)(game, num_players, seed)
    if kind == "ppo":
        from agents.ppo import PPOAgent

        return PPOAgent.for_game(game, num_players, seed=seed, **kwargs)
    raise ValueError(f"unknown agent kind {kind!r}; valid kinds: {', '.join(AGENT_KINDS)}")


def __getattr__(name: str):
    # `agents.PPOAgent` without importing torch for users who never need it.
    if name == "PPOAgent":
        from agents.ppo import PPOAgent

        return PPOAgent
    raise AttributeError(name)


__all__ = ["Agent", "RandomAgent", "make_agent", "AGENT_KINDS", "PPOAgent"]
