"""One seat of a game as a `gymnasium.Env`, with the other seats named by agent specs.

    import agents
    env = agents.make_single_agent("neu", num_players=4, seat=0, opponents="heuristic")
    env = agents.make_single_agent("deadfall", seat=1, opponents=["ppo", "bots.py:Greedy", my_bot])

The env is `envs.single_agent.SingleAgentEnv`, which takes agent objects only
(envs never import agents). Here each spec is turned into agents through the
one spec grammar every command uses (`agents.spec`): a string ("random",
"heuristic", "ppo", "ppo:PATH", "FILE.py:Name", "package.module:Name",
"label=SPEC") or a class gives every seat it stands for its own agent; an
object with ``act`` and a callable ``observation -> action`` are passed on as
they are. The gymnasium ids (``gymnasium.make("cardzoo/Neu-v0", ...)``) point here.
"""

from __future__ import annotations

from typing import Any

import envs
from envs.single_agent import SingleAgentEnv
from agents.spec import make_from_spec


def make_opponents(game: str, num_players: int, opponents: Any, count: int) -> Any:
    """The opponents for `count` other seats: a list of agents for a spec, the objects as given otherwise."""
    if isinstance(opponents, (list, tuple)):
        return [_built(game, num_players, o) for o in opponents]
    if isinstance(opponents, (str, type)):
        return [_built(game, num_players, opponents) for _ in range(count)]
    return opponents


def _built(game: str, num_players: int, spec: Any) -> Any:
    if not isinstance(spec, (str, type)):
        return spec  # an agent object or a policy callable: the env takes it as it is
    try:
        return make_from_spec(spec, game, num_players)
    except FileNotFoundError as e:  # no shipped checkpoint for this game and player count, or no file at PATH
        raise ValueError(str(e).splitlines()[0]) from None


def make_gym_env(gym_game: str, game: str | None = None, **kwargs: Any) -> SingleAgentEnv:
    """The entry point of the gymnasium ids (``gym_game`` is the id's game): `make_single_agent`, with a
    ``game=`` that names another game refused (``gym.make("cardzoo/Neu-v0", game="deadfall")``)."""
    if game is not None and game != gym_game:
        raise ValueError(f"game={game!r} does not match the gymnasium id, which is {gym_game!r}'s: use {envs.gym_id(game)!r}"
                         if game in envs.GAMES else f"game={game!r} does not match the gymnasium id, which is {gym_game!r}'s")
    return make_single_agent(gym_game, **kwargs)


def make_single_agent(game: str, num_players: int | None = 4, seat: int = 0, opponents: Any = "heuristic",
                      render_mode: str | None = None, move_timeout: float | None = None,
                      minimal_infos: bool = False, render_layout: str = "landscape", **rule_options: Any) -> SingleAgentEnv:
    """`agents.make_single_agent("neu", num_players=4, seat=0, opponents="heuristic", **rule_options)`:
    `envs.make_single_agent` with opponents given as agent specs (see the module docstring)."""
    n = envs.info(game, num_players, **rule_options).num_players  # checks the game and options before any agent is built
    return SingleAgentEnv(game, num_players=n, seat=seat, opponents=make_opponents(game, n, opponents, n - 1),
                          render_mode=render_mode, move_timeout=move_timeout, minimal_infos=minimal_infos,
                          render_layout=render_layout, **rule_options)
