"""Belief sampling: one seat's information state, and full game states drawn from it.

``engine.information_state(seat)`` (every engine, `envs.engine.Engine`) is a plain,
picklable dict of everything that seat knows:

* ``game``, ``seat``, ``num_players``, ``options``: which game, whose view;
* ``hand``: the seat's own cards (card ids);
* ``observation``: ``observe(seat)`` as a list; ``legal``: its legal actions when it is
  to act (empty otherwise);
* ``key``: the seat's information-set key (`Engine.information_key`: its own observations
  and moves and every other move as it saw it, in order), when the engine keeps its
  history (``keep_history()``: the runners turn it on for a table where an agent has an
  ``inform`` hook), else None;
* ``log``: the round's moves in order as the seat saw them, in a game that keeps such a record
  (``Engine.public_log``: Ma's Jong), else None;
* ``representative``: a full game state (the engine's ``STATE_FIELDS``, an explicit list;
  nothing else the engine keeps crosses into it) in which every card the seat cannot see was
  redealt from a fixed stream, and the other seats' hidden decisions under way were
  forgotten. It is *not* the true deal: it depends only on what the seat knows (tested: the
  whole dict is the same in two real games, dealt differently, that look the same to the
  seat, at every kind of decision), and the public history the engine keeps (piles, played
  and claimed cards, counts, scores, whose turn, the round) is in it as it is in the real
  game.

``sample_world(info, rng)`` turns that dict into an engine whose hidden cards are drawn
afresh from ``rng`` (``Engine.from_fields``, then the engine's own ``shuffle_hidden``: uniform over the unseen cards,
dealt to the hidden places with their sizes kept), with a fresh chance stream drawn from
``rng`` for later reshuffles and new rounds. It reads nothing but the dict. docs/search.md
says, per game, which known constraints the sampler keeps and where it is only an
approximation of the exact posterior.
"""

from __future__ import annotations

import copy

import numpy as np

from envs import engine_class


SAMPLE_TRIES = 1000  # redeals before a sample gives up (a real game's are refused about 4% of the time)


_LAST: list = [None, None]  # representative(): the last information state asked about, and its engine


def representative(info: dict):
    """The engine of `info`'s representative world (``Engine.from_fields``, no chance stream),
    kept for the last information state asked about: search asks for many samples of one.
    Read it; never change it."""
    if _LAST[0] is not info:
        _check_info(info)
        _LAST[1] = engine_class(info["game"]).from_fields(info["num_players"], info["options"], info["representative"])
        _LAST[0] = info
    return _LAST[1]


def _check_info(info: dict) -> None:
    if not isinstance(info, dict) or "representative" not in info or "game" not in info:
        raise ValueError("sample_world expects the dict engine.information_state(seat) returns")


def sample_world(info: dict, rng: np.random.Generator):
    """A full engine state that agrees with `info` (`information_state(seat)`), its hidden
    cards and its chance stream drawn from `rng`. The seat's ``observe``, legal mask and
    information state are those of the real game in every sample (tests/test_belief.py).

    In a real game the player to act always has a legal move (a Neu player without one has
    already lost the round). Seen from another seat, a redeal can leave the player to act
    without one (about 4% of Neu's); such a deal is redrawn, up to `SAMPLE_TRIES` times, so
    the sample is conditioned on what every real state shows: the exact posterior, given
    that prior. An information state for which no redeal gives a legal move cannot come
    from a real game: ValueError."""
    _check_info(info)
    cls = engine_class(info["game"])
    world = cls.from_fields(info["num_players"], info["options"], info["representative"])
    for _ in range(SAMPLE_TRIES):
        world.shuffle_hidden(info["seat"], rng)
        world.refresh()
        if world.game_over or world.legal_mask().any():
            world.rng = np.random.default_rng(int(rng.integers(2**63)))
            if info.get("log") is not None:  # the round's record as the seat saw it goes on in the world
                world.round_log = [tuple(move) for move in info["log"]]
            return world
    raise no_redeal_serves(info["game"], world.current_player)


def no_redeal_serves(game: str, player: int) -> ValueError:
    """The error of an information state that no redeal fits (`sample_world`, `VectorEnv.sample_rows`)."""
    return ValueError(f"sample_world: none of {SAMPLE_TRIES} redeals of the hidden cards gives the player to act "
                      f"(player_{player}) a legal move; a real {game} game always has one")


def informed(agent, engine, seat: int, policy=None, upper_bound: bool = False):
    """The move every runner asks of `agent` for `seat`: a function of the observation that first
    hands the agent what it is owed, then returns ``policy(observation)`` (``agent.act`` unless
    given). Runners call it inside the move guard (`envs.move_guard.guarded_act`), so the hooks
    are part of the move: the same time limit, ``os._exit`` refused, a failure is the move's.

    * An agent with an ``inform(info_state)`` method gets ``engine.information_state(seat)``.
    * Only when the caller says the agent is an upper bound that cardzoo itself built
      (``upper_bound=True``: `agents.spec.is_upper_bound`, such as ``pimc_cheat``) does its
      ``cheat_inform(engine)`` get a copy of the real engine. A method of that name on any
      other agent is never called.

    Others are left alone, at no cost."""
    act = agent.act if policy is None else policy

    def move(observation):
        hook = getattr(agent, "inform", None)
        if callable(hook):
            hook(engine.information_state(seat))
        if upper_bound:
            cheat = getattr(agent, "cheat_inform", None)
            if callable(cheat):
                cheat(copy.deepcopy(engine))
        return act(observation)

    return move


def sample_worlds(info: dict, count: int, rng: np.random.Generator) -> list:
    """`count` independent samples of `sample_world`."""
    return [sample_world(info, rng) for _ in range(count)]
