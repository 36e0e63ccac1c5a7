"""Deadfall: one test per rule of RULES.md §2, the seed's examples, brute-force masks, hidden information."""

from __future__ import annotations

import copy
import pickle
import random
import warnings
from collections import Counter

import numpy as np
import pytest

from envs import deadfall_v0
from envs.deadfall import (
    DECK,
    OBS_HAND,
    OBS_LAYER,
    OBS_MY_DOOR_PICK,
    OBS_PHASE,
    OBS_POT,
    OBS_SEATS,
    OBS_UNSEEN,
    SEAT_BLOCK,
    SEAT_CHIPS,
    SEAT_PICKED,
    SEAT_STACK,
    SEAT_STARTER,
    SEAT_TOP,
    Deadfall,
    dead_target,
)
from tests.helpers import GOLDEN, play_random_game, read_playthrough

FILL = [7, 8, 9, 10]  # filler cards for 4-player deals (4 players x 4 copies fit every rank >= 7)


def fresh(n=4, seed=0, deal=None, env_fn=deadfall_v0.raw_env, **rule_options):
    env = env_fn(num_players=n, **rule_options)
    env.reset(seed=seed, options=None if deal is None else {"deal": deal})
    return env, env.unwrapped.game


def play(env, name):
    env.step(env.unwrapped.action_from_name(name))


def door_layer(env, cards):
    """Place one door card per seat (None = that seat has no card and is skipped)."""
    for seat, card in enumerate(cards):
        if card is None:
            continue
        assert env.agent_selection == f"player_{seat}"
        play(env, f"play {card}")


def legal_names(env):
    return set(env.unwrapped.legal_action_names())


def seat_block(obs, r):
    return obs[OBS_SEATS + SEAT_BLOCK * r : OBS_SEATS + SEAT_BLOCK * (r + 1)]


# -- cards and set-up -----------------------------------------------------------------


def test_deck_is_the_pairs_deck_of_55():
    assert len(DECK) == 55
    assert Counter(DECK) == {r: r for r in range(1, 11)}


@pytest.mark.parametrize("n,size", [(2, 7), (3, 6), (4, 6), (5, 6), (6, 6), (7, 5)])
def test_hand_sizes_by_player_count_and_the_rest_set_aside(n, size):
    env, g = fresh(n, seed=n)
    places = g.card_places()
    assert [len(places[f"hand {s}"]) for s in range(n)] == [size] * n
    assert len(places["set_aside"]) == 55 - n * size
    assert sorted(sum(places.values(), [])) == sorted(DECK)


@pytest.mark.parametrize("n", [2, 4, 7])
def test_every_player_antes_one_chip_into_the_pot(n):
    env, g = fresh(n, starting_chips=20)
    assert g.chips == [19] * n and g.pot == n
    obs = env.observe("player_0")["observation"]
    assert obs[OBS_POT] == n
    assert [seat_block(obs, r)[SEAT_CHIPS] for r in range(n)] == [19] * n
    assert g.scores == [20] * n  # the ante still counts as the player's until the hand is settled


def test_starting_chips_default_is_50_and_rounds_default_is_10():
    env, g = fresh()
    assert g.chips == [49] * 4 and g.options["rounds"] == 10


# -- door cards ----------------------------------------------------------------------------


def test_single_lowest_door_card_starts_and_becomes_top_card():
    env, g = fresh(deal={"hands": [[5] + FILL + [6], [3] + FILL + [6], [4] + FILL + [6], [6] + FILL + [5]]})
    assert g.phase == 0 and legal_names(env) == {"play 5", "play 6", "play 7", "play 8", "play 9", "play 10"}
    door_layer(env, [5, 3, 4, 6])
    assert g.phase == 1 and g.starter == 1 and env.agent_selection == "player_1"
    assert g.tops == [5, 3, 4, 6] and g.stacks == [[5], [3], [4], [6]]
    # door cards are top cards, so DEAD on them is offered at once
    assert {"DEAD 5", "DEAD 4", "DEAD 6"} <= legal_names(env) and "DEAD 3" not in legal_names(env)


def test_no_dead_during_the_door_phase():
    env, g = fresh(seed=3)
    for _ in range(2):
        mask = env.observe(env.agent_selection)["action_mask"]
        assert not mask[10:].any() and mask[:10].any()
        env.step(int(np.flatnonzero(mask)[0]))


def seed_example_deal(layer1, layer2, extra=()):
    hands = []
    for s in range(4):
        h = [layer1[s], layer2[s]] + [e[s] for e in extra]
        hands.append(h + FILL[: 6 - len(h)])
    return {"hands": hands}


def test_seed_example_4456_then_3421_the_player_of_6_1_starts():
    env, g = fresh(deal=seed_example_deal([4, 4, 5, 6], [3, 4, 2, 1]))
    door_layer(env, [4, 4, 5, 6])
    assert g.phase == 0 and g.layer == 2 and env.agent_selection == "player_0"
    door_layer(env, [3, 4, 2, 1])
    assert g.starter == 3 and env.agent_selection == "player_3"
    assert g.tops == [3, 4, 2, 1] and g.stacks[3] == [6, 1]


def test_seed_example_4456_then_3422_the_player_of_5_2_starts():
    env, g = fresh(deal=seed_example_deal([4, 4, 5, 6], [3, 4, 2, 2]))
    door_layer(env, [4, 4, 5, 6])
    door_layer(env, [3, 4, 2, 2])
    assert g.starter == 2 and env.agent_selection == "player_2"


def test_seed_example_4456_then_2234_needs_a_third_layer():
    env, g = fresh(deal=seed_example_deal([4, 4, 5, 6], [2, 2, 3, 4], extra=[[9, 8, 9, 10]]))
    door_layer(env, [4, 4, 5, 6])
    door_layer(env, [2, 2, 3, 4])
    assert g.phase == 0 and g.layer == 3 and env.agent_selection == "player_0"
    door_layer(env, [9, 8, 9, 10])
    assert g.starter == 1 and g.tops == [9, 8, 9, 10]


def test_third_layer_lowest_card_among_all_players_starts():
    # "the same test repeats": the lowest card of the new layer among all players starts
    env, g = fresh(deal=seed_example_deal([4, 4, 5, 6], [2, 2, 3, 4], extra=[[9, 8, 9, 3]]))
    door_layer(env, [4, 4, 5, 6])
    door_layer(env, [2, 2, 3, 4])
    door_layer(env, [9, 8, 9, 3])
    assert g.starter == 3


def test_later_layer_tie_is_broken_by_first_door_cards_among_players_tied_on_that_layer():
    env, g = fresh(deal=seed_example_deal([5, 4, 4, 6], [2, 2, 3, 3], extra=[[7, 7, 8, 9]]))
    door_layer(env, [5, 4, 4, 6])
    door_layer(env, [2, 2, 3, 3])  # seats 0 and 1 tie on 2; first cards 5 vs 4 -> player_1
    assert g.starter == 1


def test_tie_on_later_layer_and_on_first_cards_continues_then_breaks():
    env, g = fresh(deal=seed_example_deal([4, 4, 5, 6], [2, 2, 3, 4], extra=[[7, 7, 8, 9], [8, 7, 9, 9]]))
    door_layer(env, [4, 4, 5, 6])
    door_layer(env, [2, 2, 3, 4])
    door_layer(env, [7, 7, 8, 9])  # tie on 7 between seats 0 and 1, first cards 4 and 4
    assert g.phase == 0 and g.layer == 4
    door_layer(env, [8, 7, 9, 9])
    assert g.starter == 1


def test_players_who_always_tie_run_out_and_the_tied_player_nearest_player_0_starts():
    # RULES.md [D]: no tied player can add a card -> nearest clockwise from player_0
    same = [2, 3, 4, 5, 6, 7]
    env, g = fresh(3, deal={"hands": [[9, 9, 9, 9, 10, 10], same, same]})
    for i in range(6):
        door_layer(env, [[9, 9, 9, 9, 10, 10][i], same[i], same[i]])
    assert g.starter == 1 and g.phase == 1 and g.layer == 6
    # everyone's hand is empty now: the starter can only call DEAD
    assert legal_names(env) == {"DEAD 10", "DEAD 7"}


def test_two_players_tied_to_the_end_player_0_starts():
    same = [2, 3, 4, 5, 6, 7, 8]
    env, g = fresh(2, deal={"hands": [same, same]})
    for c in same:
        door_layer(env, [c, c])
    assert g.starter == 0 and g.layer == 7


def set_door_hands(g, hands):
    """Engine-level set-up for hands of unequal sizes (not reachable by a deal)."""
    n = g.num_players
    g.hands = [[0] * 10 for _ in range(n)]
    for s, h in enumerate(hands):
        for r in h:
            g.hands[s][r - 1] += 1
    g.hand_sizes = [len(h) for h in hands]
    used = Counter(r for h in hands for r in h)
    left = Counter(DECK)
    left.subtract(used)
    g.set_aside = sorted(left.elements())
    g.current_player = next(s for s in range(n) if hands[s])
    g._mask = None


def test_player_with_no_card_left_adds_nothing_and_cannot_be_lowest():
    env, g = fresh(3)
    set_door_hands(g, [[4, 6], [4, 5], [4]])
    env.agent_selection = "player_0"
    door_layer(env, [4, 4, 4])
    assert g.layer == 2 and g.current_player == 0
    door_layer(env, [6, 5, None])  # player_2 has no card and is skipped
    assert g.starter == 1


def test_tied_players_without_cards_fall_back_even_if_others_could_add():
    env, g = fresh(3)
    set_door_hands(g, [[4], [4], [5, 9]])
    env.agent_selection = "player_0"
    door_layer(env, [4, 4, 5])
    assert g.starter == 0 and g.phase == 1


# -- simultaneity: door cards are hidden until the layer is revealed ----------------------


def test_door_choice_is_hidden_from_others_until_the_layer_is_revealed():
    deal = {"hands": [[3, 5] + FILL, [4, 6] + FILL, [4, 6] + FILL, [5, 6] + FILL]}
    views = []
    for first in (3, 5):
        env, g = fresh(deal=deal)
        play(env, f"play {first}")
        play(env, "play 4")
        views.append({s: env.observe(f"player_{s}")["observation"].copy() for s in range(4)})
        own = views[-1][0]
        assert own[OBS_MY_DOOR_PICK] == first and own[OBS_HAND + first - 1] == 0
        assert seat_block(views[-1][1], 3)[SEAT_PICKED] == 1  # that player_0 has picked is public
        assert seat_block(views[-1][1], 3)[SEAT_TOP] == 0  # but not what
    for s in (1, 2, 3):
        assert np.array_equal(views[0][s], views[1][s]), f"player_{s} can see player_0's door card"
    assert not np.array_equal(views[0][0], views[1][0])
    # once the layer is complete, the choice shows
    env, g = fresh(deal=deal)
    door_layer(env, [3, 4, 4, 5])
    obs = env.observe("player_1")["observation"]
    assert seat_block(obs, 3)[SEAT_TOP] == 3 and seat_block(obs, 3)[SEAT_STACK + 2] == 1


# -- DEAD ------------------------------------------------------------------------------------


# The seed's table: clockwise A2 B5 C9 D5 E4 F6, seats 0..5; the three other 5s are set aside.
SIX = {
    "hands": [
        [2, 7, 7, 8, 8, 10],
        [5, 7, 8, 9, 9, 10],
        [9, 7, 8, 9, 10, 10],
        [5, 6, 8, 9, 10, 10],
        [4, 6, 7, 8, 9, 10],
        [6, 7, 8, 9, 10, 4],
    ]
}


def test_seed_example_dead_5_targets_the_nearest_to_the_callers_right():
    env, g = fresh(6, deal=SIX)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    assert g.starter == 0
    assert dead_target(g.tops, 0, 5) == 3  # D, not B: searching F, E, D, ...
    play(env, "DEAD 5")
    info = env.last_event
    assert info["target"] == "player_3" and info["caller"] == "player_0" and info["value"] == 5


def test_dead_target_search_wraps_around():
    env, g = fresh(6, deal=SIX)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "play 7")  # A plays; B to act
    assert dead_target(g.tops, 1, 5) == 3  # B's right is A (7), then F, E, D (5)
    assert dead_target(g.tops, 1, 9) == 2


def test_right_call_target_pays_value_caller_takes_pot():
    env, g = fresh(6, deal=SIX)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 5")  # no 5 in any hand
    info = env.last_event
    assert info["call_right"] == 1 and info["copies_in_hands"] == 0
    assert info["paid"] == 5 and info["pot"] == 6
    assert info["score_changes"] == {"player_0": 10, "player_1": -1, "player_2": -1, "player_3": -6, "player_4": -1, "player_5": -1}
    assert info["scores"] == {"player_0": 60, "player_1": 49, "player_2": 49, "player_3": 44, "player_4": 49, "player_5": 49}
    # the next hand started with a fresh ante
    assert g.hand_number == 2 and g.chips == [59, 48, 48, 43, 48, 48] and g.pot == 6
    # rewards are the hand's chip changes (they sum to zero)
    assert env.rewards == {f"player_{s}": float(d) for s, d in enumerate([10, -1, -1, -6, -1, -1])}


def test_wrong_call_caller_pays_value_target_takes_pot():
    env, g = fresh(6, deal=SIX)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 6")  # F shows 6; D and E still hold a 6
    info = env.last_event
    assert info["target"] == "player_5" and info["call_right"] == 0 and info["copies_in_hands"] == 2
    assert info["score_changes"] == {"player_0": -7, "player_1": -1, "player_2": -1, "player_3": -1, "player_4": -1, "player_5": 11}


def test_callers_own_hand_counts():
    env, g = fresh(6, deal=SIX)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    # A holds 7s and calls DEAD 7 as soon as someone shows one: always wrong.
    for card in [8, 7, 7, 6, 7, 7]:  # afterwards only the caller still holds 7s
        play(env, f"play {card}")
    assert env.agent_selection == "player_0" and "DEAD 7" in legal_names(env)
    holdings = [g.hands[s][6] for s in range(6)]
    assert holdings[0] == 2 and sum(holdings) == 2  # only the caller holds 7s
    play(env, "DEAD 7")
    info = env.last_event
    assert info["call_right"] == 0 and info["target"] == "player_5"


def test_player_who_cannot_pay_in_full_pays_what_they_have():
    env, g = fresh(6, deal=SIX, starting_chips=4)  # 3 chips each after the ante
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 5")  # right: the target owes 5 but has 3
    info = env.last_event
    assert info["paid"] == 3
    assert info["score_changes"]["player_3"] == -4 and info["score_changes"]["player_0"] == 3 + 6 - 1
    # wrong call: the caller owes 9 but has 3
    env, g = fresh(6, deal=SIX, starting_chips=4)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 9")
    info = env.last_event
    assert info["call_right"] == 0 and info["paid"] == 3 and info["target"] == "player_2"
    assert info["score_changes"]["player_0"] == -4 and info["score_changes"]["player_2"] == 3 + 6 - 1


def test_player_with_an_empty_hand_can_only_call_dead():
    deal = {"hands": [[1, 3, 4, 5, 6, 7, 8], [2, 3, 4, 5, 6, 7, 8]]}
    env, g = fresh(2, deal=deal)
    door_layer(env, [1, 2])
    for card in [3, 4, 5, 6, 7, 8]:
        play(env, f"play {card}")
        play(env, f"play {card}")
    assert g.hand_sizes == [0, 0] and env.agent_selection == "player_0"
    assert legal_names(env) == {"DEAD 8"}
    mask = env.observe("player_0")["action_mask"]
    assert mask.sum() == 1 and mask[17] == 1


def test_dead_is_offered_only_on_other_players_top_cards():
    env, g = fresh(deal={"hands": [[3, 5] + FILL, [4, 6] + FILL, [4, 6] + FILL, [5, 6] + FILL]})
    door_layer(env, [3, 4, 4, 5])
    assert {n for n in legal_names(env) if n.startswith("DEAD")} == {"DEAD 4", "DEAD 5"}
    play(env, "play 5")  # player_0 covers the 3; player_1 to act
    assert {n for n in legal_names(env) if n.startswith("DEAD")} == {"DEAD 4", "DEAD 5"}  # 4 is player_2's


# -- games of several hands -------------------------------------------------------------------


def test_chips_carry_over_and_the_game_lasts_rounds_hands():
    env, g = fresh(6, deal=SIX, rounds=2)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 5")
    assert g.hand_number == 2 and g.phase == 0 and g.layer == 1 and env.agent_selection == "player_0"
    assert g.chips == [59, 48, 48, 43, 48, 48]
    assert sorted(sum(g.card_places().values(), [])) == sorted(DECK)  # a fresh deal
    total = {a: 0.0 for a in env.possible_agents}
    for a, r in env.rewards.items():
        total[a] += r
    while env.agents:
        obs, _, term, _, _ = env.last()
        if term:
            env.step(None)
            continue
        mask = obs["action_mask"]
        dead = np.flatnonzero(mask[10:])
        env.step(int(10 + dead[0]) if dead.size else int(np.flatnonzero(mask)[0]))
        for a, r in env.rewards.items():
            total[a] += r
    assert g.game_over and g.hand_number == 2 and g.pot == 0
    assert sum(g.chips) == 6 * 50
    assert {a: int(round(total[a])) for a in total} == {f"player_{s}": g.chips[s] - 50 for s in range(6)}


def test_a_player_who_cannot_ante_ends_the_game():
    env, g = fresh(6, deal=SIX, starting_chips=1)  # everyone antes their only chip
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 5")
    assert g.game_over and g.hand_number == 1
    assert g.chips == [6, 0, 0, 0, 0, 0]  # the target had nothing to pay; the pot went to the caller
    assert env.terminations == {a: True for a in env.agents}
    assert env.last_event["final_scores"]["player_0"] == 6
    assert env.last_event["final_ranks"] == {"player_0": 1, **{f"player_{s}": 2 for s in range(1, 6)}}


def test_a_player_with_one_chip_left_still_antes_and_plays():
    env, g = fresh(6, deal=SIX, starting_chips=2)
    door_layer(env, [2, 5, 9, 5, 4, 6])
    play(env, "DEAD 4")  # wrong (player_5 holds a 4): caller pays 1 (all they have)
    assert g.game_over  # the caller is left with 0 and cannot ante
    assert g.chips[0] == 0 and g.chips[4] == 1 + 1 + 6


# -- mask vs brute force, card conservation, events ---------------------------------------------


def brute_force_legal(places, n, seat, door_phase):
    hand = places[f"hand {seat}"]
    legal = {f"play {r}" for r in set(hand)}
    if not door_phase:
        for other in range(n):
            stack = places[f"stack {other}"]
            if other != seat and stack:
                legal.add(f"DEAD {stack[-1]}")
    return legal


def brute_force_target(places, n, caller, v):
    for k in range(1, n):
        s = (caller - k) % n
        stack = places[f"stack {s}"]
        if stack and stack[-1] == v:
            return s
    raise AssertionError("no target")


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_mask_target_and_verdict_equal_brute_force(n):
    checked = calls = 0
    for seed in range(25):
        env = deadfall_v0.raw_env(num_players=n)
        env.reset(seed=seed)
        g = env.unwrapped.game
        rnd = random.Random(seed)
        while env.agents:
            obs, _, term, _, _ = env.last()
            if term:
                env.step(None)
                continue
            me = g.current_player
            places = g.card_places()
            assert sorted(sum(places.values(), [])) == sorted(DECK)
            expected = brute_force_legal(places, n, me, g.phase == 0)
            got = {env.unwrapped.action_name(int(a)) for a in np.flatnonzero(obs["action_mask"])}
            assert got == expected, f"seed {seed}: {got} != {expected}"
            checked += 1
            action = int(rnd.choice(np.flatnonzero(obs["action_mask"])))
            chips = list(g.chips)
            env.step(action)
            if action < 10:
                continue
            v = action - 9
            target = brute_force_target(places, n, me, v)
            right = all(v not in places[f"hand {s}"] for s in range(n))
            info = env.last_event
            assert info["target"] == f"player_{target}" and info["call_right"] == right
            payer, winner = (target, me) if right else (me, target)
            assert info["paid"] == min(v, chips[payer])
            changes = info["score_changes"]
            assert changes[f"player_{winner}"] == -1 + info["paid"] + n
            assert changes[f"player_{payer}"] == -1 - info["paid"]
            assert all(changes[f"player_{s}"] == -1 for s in range(n) if s not in (payer, winner))
            assert env.rewards == {a: float(d) for a, d in changes.items()}
            calls += 1
    assert checked > 500 and calls >= 25


# -- hidden information ------------------------------------------------------------------------


def test_observation_layout_own_hand_unseen_and_nothing_else():
    env, g = fresh(deal={"hands": [[3, 5] + FILL, [4, 6] + FILL, [4, 6] + FILL, [5, 6] + FILL]})
    door_layer(env, [3, 4, 4, 5])
    obs = env.observe("player_1")["observation"]
    assert list(obs[OBS_HAND : OBS_HAND + 10]) == [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    # unseen 4s: 4 copies, two on the table; 6s: 6 copies, one in player_1's hand
    assert obs[OBS_UNSEEN + 3] == 2 and obs[OBS_UNSEEN + 5] == 5 and obs[OBS_UNSEEN + 0] == 1
    assert obs[OBS_PHASE] == 1 and obs[OBS_LAYER] == 1
    assert seat_block(obs, 3)[SEAT_STARTER] == 1  # player_0 = three seats clockwise from player_1
    assert obs.shape == (g.obs_size,) and g.state().shape == (g.state_size,)


# -- deals and options -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "deal,message",
    [
        ({"hands": [[1, 2, 3, 4, 5, 6]] * 3}, "4 hands"),
        ({"hands": [[2, 3, 4, 5, 6], [7] * 6, [8] * 6, [9] * 6]}, "has 5 cards; with 4 players every hand has 6"),
        ({"hands": [[1, 2, 3, 4, 5, 6], [1, 7, 7, 7, 7, 7], [8] * 6, [9] * 6]}, "1 x2"),
        ({"hands": [[0, 2, 3, 4, 5, 6], [7] * 6, [8] * 6, [9] * 6]}, "unknown card 0"),
        ({"hands": [["J", 2, 3, 4, 5, 6], [7] * 6, [8] * 6, [9] * 6]}, "unknown card 'J'"),
        ({"hands": [[1, 2, 3, 4, 5, 6], [7] * 6, [8] * 6, [9] * 6], "set_aside": [10, 10]}, "must hold the 31"),
        ({"hands": [[1, 2, 3, 4, 5, 6], [7] * 6, [8] * 6, [9] * 6], "draw_pile": []}, "draw_pile"),
        ("1,2,3", "must be a dict"),
    ],
)
def test_bad_deals_are_rejected_with_the_reason(deal, message):
    env = deadfall_v0.env()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"deal": deal})


def test_full_deal_with_set_aside_and_string_cards():
    hands = [["1", "2", "3", "4", "5", "6"], [7] * 6, [8] * 6, [9] * 6]
    named = Counter([1, 2, 3, 4, 5, 6] + [7] * 6 + [8] * 6 + [9] * 6)
    rest = sorted((Counter(DECK) - named).elements())
    env, g = fresh(deal={"hands": hands, "set_aside": rest})
    assert g.hands[0] == [1, 1, 1, 1, 1, 1, 0, 0, 0, 0] and sorted(g.set_aside) == rest


@pytest.mark.parametrize(
    "options,message",
    [
        ({"starting_chips": 0}, "starting_chips"),
        ({"starting_chips": "50"}, "starting_chips"),
        ({"rounds": 0}, "rounds"),
        ({"rounds": 2.5}, "rounds"),
        ({"ante": 2}, "unknown rule option"),
        ({"num_players": 8}, "from 2 to 7"),
        ({"num_players": 1}, "from 2 to 7"),
    ],
)
def test_bad_options_are_rejected(options, message):
    with pytest.raises(ValueError, match=message):
        deadfall_v0.env(**options)


# -- golden playthrough, render ---------------------------------------------------------------------

GOLDEN_DEAL = {"hands": [[4, 4, 9, 10, 2, 6], [4, 3, 9, 10, 8, 6], [5, 2, 9, 10, 8, 7], [6, 1, 3, 10, 8, 7]]}


def test_golden_playthrough_is_a_whole_game_from_the_deal():
    # tests/test_playthroughs.py replays it
    header, actions = read_playthrough((GOLDEN / "deadfall_4p_deal.txt").read_text())
    assert header["options"]["deal"] == GOLDEN_DEAL and header["players"] == 4
    assert sum(1 for a in actions if a and a.startswith("DEAD")) == 10  # ten hands of the default game


def test_render_shows_the_table():
    env, g = fresh(deal={"hands": [[3, 5] + FILL, [4, 6] + FILL, [4, 6] + FILL, [5, 6] + FILL]})
    env.render_mode = "ansi"
    play(env, "play 3")
    text = env.render()
    assert "door cards, layer 1" in text and "face down: 3" in text and "> player_1" in text


# -- heuristic ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 4])
def test_heuristic_plays_legally_and_beats_random(n):
    from agents.base import RandomAgent
    from agents.heuristic import heuristic_class

    heuristic, others = [], []
    for gi in range(24):
        g = Deadfall(n)
        g.reset(np.random.default_rng(gi))
        seat = gi % n
        bots = [heuristic_class("deadfall")("deadfall", n, gi) if s == seat else RandomAgent("deadfall", n, gi * 10 + s) for s in range(n)]
        while not g.game_over:
            s = g.current_player
            a = bots[s].act({"observation": g.observe(s), "action_mask": g.legal_mask()})
            assert g.legal_mask()[a], f"heuristic chose an illegal action {a}"
            g.step(a)
        heuristic.append(g.chips[seat] - 50)
        others += [g.chips[s] - 50 for s in range(n) if s != seat]
    assert np.mean(heuristic) > np.mean(others) + 5


def test_heuristic_starts_with_its_1_and_calls_a_dead_that_cannot_fail():
    from agents.heuristic.deadfall import DeadfallHeuristic

    env, g = fresh(deal={"hands": [[6, 1] + FILL, [2, 6] + FILL, [2, 6] + FILL, [5, 6] + FILL]})
    bot = DeadfallHeuristic("deadfall", 4, 0)
    assert env.unwrapped.action_name(bot.act(env.observe("player_0"))) == "play 1"
    door_layer(env, [1, 2, 2, 5])
    # both 2s are on the table: DEAD 2 cannot fail (target: player_2, nearest to the right)
    assert env.unwrapped.action_name(bot.act(env.observe("player_0"))) == "DEAD 2"


def test_option_bounds_keep_observations_in_their_box():
    from envs import deadfall_v0 as dv

    with pytest.raises(ValueError, match="starting_chips.*1 to 100000"):
        dv.env(starting_chips=100_001)
    with pytest.raises(ValueError, match="rounds"):
        dv.env(rounds=0)


@pytest.mark.parametrize("num_players", range(2, 8))
def test_observation_table_updated_step_by_step_equals_a_full_rebuild(num_players):
    # The engine keeps every observed number in one table and each step writes only what it
    # changes (for speed); a step that forgets an entry would show here as a stale value.
    steps = 0
    for seed in range(8):
        env = deadfall_v0.raw_env(num_players=num_players, starting_chips=[50, 3, 10][seed % 3], rounds=[10, 30, 3][seed % 3])
        env.reset(seed=seed)
        game = env.game
        rnd = random.Random(seed)
        for agent in env.agent_iter():
            kept = game._table.copy()
            game._fill_table()
            assert np.array_equal(kept, game._table), (seed, steps, np.flatnonzero(kept != game._table))
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    assert steps > 150
