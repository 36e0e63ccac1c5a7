"""`Engine.explain_action`: every legal move, in every game, says what it does now, in the game's
words, from what the seat to act may know (the web page's move tooltips; `env.explain_action`)."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from tests.conftest import GAMES
from tests.helpers import redealt_twin


def _states(game: str, players: int, seed: int, steps: int):
    """The engine at each of `steps` decisions of random games (a new game when one ends)."""
    rng = np.random.default_rng(seed)
    e = envs.engine_class(game)(players)
    e.reset(rng)
    for _ in range(steps):
        if e.game_over:
            e.reset(rng)
        yield e
        e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))


@pytest.mark.parametrize("game", GAMES)
def test_every_legal_move_has_an_explanation_of_its_own(game):
    cls = envs.engine_class(game)
    kinds: dict[str, set[str]] = {}
    for players in sorted({cls.min_players, cls.default_players, cls.max_players}):
        for e in _states(game, players, seed=players, steps=600):
            seat = e.current_player
            for a in np.flatnonzero(e.legal_mask()):
                name, why = e.action_name(int(a), seat), e.explain_action(int(a), seat)
                # One line of words, not the name again (the fallback) and no internal number.
                assert why and "\n" not in why and why != name and "action " not in why, (name, why)
                assert "player_-" not in why, (name, why)  # a move aimed at nobody
                kinds.setdefault(name.split()[0], set()).add(why)
    assert len(kinds) >= 2  # the random games reached more than one kind of move


@pytest.mark.parametrize("game", GAMES)
def test_an_explanation_tells_nothing_the_seat_cannot_see(game):
    # Redeal every card the seat to act cannot see: every explanation stays the same.
    checked = 0
    for i, e in enumerate(_states(game, envs.engine_class(game).default_players, seed=11, steps=300)):
        if i % 10:
            continue
        seat = e.current_player
        legal = [int(a) for a in np.flatnonzero(e.legal_mask())]
        want = [e.explain_action(a, seat) for a in legal]
        for k in range(2):
            twin = redealt_twin(e, seat, k)
            assert [twin.explain_action(a, seat) for a in legal] == want
        checked += 1
    assert checked >= 25


def test_the_numbers_in_an_explanation_are_the_game_state():
    e = envs.engine_class("neu")(4)
    e.reset(np.random.default_rng(0))
    legal = [int(a) for a in np.flatnonzero(e.legal_mask())]
    for a in legal:
        name, why = e.action_name(a, e.current_player), e.explain_action(a, e.current_player)
        if name == "play 9":
            assert why.startswith(f"adds 9 to the running total: {e.total} becomes {e.total + 9}")


def test_the_env_explains_only_a_legal_move_of_the_agent_to_act():
    env = envs.make("deadfall", num_players=4)
    env.reset(seed=1)
    mask = env.last()[0]["action_mask"]
    legal, illegal = int(np.flatnonzero(mask)[0]), int(np.flatnonzero(mask == 0)[0])
    assert "door card" in env.unwrapped.explain_action(legal)
    with pytest.raises(ValueError, match="is not legal now"):
        env.unwrapped.explain_action(illegal)
