"""A game's facts without an env, in the spirit of OpenSpiel's ``GameInfo``.

    import envs
    facts = envs.info("neu", num_players=4)
    facts.num_actions, facts.obs_size, facts.max_steps      # 20, 61, 10000
    obs[facts.obs_layout["total"]]                           # the running total, as a 1-long slice
    seats = obs[facts.obs_layout["seats"]].reshape(facts.num_players, facts.seat_block)
    seats[:, facts.seat_layout["chips"]]                     # chips per seat, seat-relative

Every fact comes from the game's rules engine (`envs.engine.Engine`), built
with the options but never reset; no PettingZoo env is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from envs.engine import Engine


@dataclass(frozen=True)
class GameInfo:
    """What a game is, for these players and rule options."""

    name: str
    num_players: int
    num_actions: int  # size of the Discrete action space
    obs_size: int  # length of observe(seat), the "observation" Box
    state_size: int  # length of state(), the global view
    max_steps: int  # the most decisions one game can take (`Engine.max_game_length`)
    rules: Mapping[str, Any]  # every rule option, defaults filled in
    card_names: Mapping[int, str]  # card id -> its name in the game's card notation
    action_names: tuple[str, ...]  # each action's name for player_0 (names that point at a seat are relative to it)
    secret_actions: frozenset[int]  # actions whose taker is kept from the other seats
    hidden_decisions: str | None  # decisions made in turn that stay hidden until resolved, in words
    obs_layout: Mapping[str, slice]  # the observation's named parts, in order; "seats" holds the seat blocks
    seat_layout: Mapping[str, slice]  # the parts of one seat block
    seat_block: int  # values per seat block


def game_info(engine_cls: type[Engine], num_players: int | None = None, **rules: Any) -> GameInfo:
    """The facts of `engine_cls` with these options (ValueError for bad ones, as the env gives)."""
    game = engine_cls(num_players, **rules)
    return GameInfo(
        name=game.game_name,
        num_players=game.num_players,
        num_actions=game.num_actions,
        obs_size=game.obs_size,
        state_size=game.state_size,
        max_steps=int(game.max_game_length),
        rules=MappingProxyType(dict(game.options)),
        card_names=MappingProxyType(dict(game.card_names)),
        action_names=tuple(game.action_name(a, 0) for a in range(game.num_actions)),
        secret_actions=frozenset(game.secret_actions),
        hidden_decisions=game.hidden_decisions,
        obs_layout=MappingProxyType(game.obs_layout()),
        seat_layout=MappingProxyType(game.seat_layout()),
        seat_block=game.SEAT_BLOCK,
    )
