"""Not For Me (RULES.md §1): one test per rule, the seed's examples, mask vs brute force,
hidden information, a golden playthrough and PettingZoo's own tests."""

from __future__ import annotations

import copy
import random
import warnings
from collections import Counter

import numpy as np
import pytest

import envs
from envs import not_for_me as nfm
from envs import not_for_me_v0
from envs.not_for_me import NotForMe
from tests.helpers import GOLDEN, play_random_game, read_playthrough

W = "W"


# -- helpers -------------------------------------------------------------------


def fresh(n: int = 4, seed: int = 0, deal: dict | None = None, **options) -> NotForMe:
    g = NotForMe(n, **options)
    g.reset(np.random.default_rng(seed), deal)
    return g


def counts(cards) -> list[int]:
    h = [0] * 7
    for c in cards:
        h[nfm.parse_card(c)] += 1
    return h


def set_table(g: NotForMe, hands: dict[int, list], field: tuple[int, int, int] | None = None, to_act: int = 0):
    """Put a rule situation on the table: the given hands, a field (count, number, player), who acts."""
    for s, cards in hands.items():
        g.hands[s] = counts(cards)
        g.hand_sizes[s] = len(cards)
    if field is not None:
        g.field_count, g.field_number, g.field_player = field
    g.current_player = to_act
    g._mask = None


def legal(g: NotForMe) -> set[str]:
    return {g.action_name(int(a), g.current_player) for a in np.flatnonzero(g.legal_mask())}


def act(g: NotForMe, name: str):
    a = g.action_from_name(name, g.current_player)
    assert g.legal_mask()[a], f"{name!r} is not legal; legal: {sorted(legal(g))}"
    return g.step(a)


def random_engine_states(n: int, seed: int, steps: int = 400):
    """Yield the engine at each decision of random legal play (several rounds)."""
    g = fresh(n, seed)
    rnd = random.Random(seed)
    for _ in range(steps):
        if g.game_over:
            return
        yield g
        moves = np.flatnonzero(g.legal_mask())
        g.step(int(moves[rnd.randrange(moves.size)]))


# -- cards and set-up -------------------------------------------------------------


@pytest.mark.parametrize("n,copies", [(2, 7), (3, 8), (4, 10), (5, 10)])
def test_deck_per_player_count(n, copies):
    deck = Counter(NotForMe(n).deck)
    assert [deck[k] for k in range(6)] == [copies] * 6
    assert deck[nfm.WILD] == 5
    assert sum(deck.values()) == 6 * copies + 5


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_deal_sizes_and_every_card_in_one_place(n):
    g = fresh(n, seed=n)
    assert g.hand_sizes == [8] * n and [sum(h) for h in g.hands] == [8] * n
    assert len(g.supply) == 3 and all(k >= 0 for k in g.supply)
    assert len(g.draw) == len(g.deck) - 8 * n - 3
    assert g.current_player == 0 and g.field_count == 0  # round 1: player_0 leads an empty field
    for state in random_engine_states(n, seed=n, steps=300):
        placed = Counter(c for cards in state.card_places().values() for c in cards)
        assert placed == Counter(state.deck)
        assert state.hand_sizes == [sum(h) for h in state.hands]


def test_out_is_all_false_and_scores_are_minus_penalty():
    g = fresh(3)
    assert g.out == [False] * 3
    g.penalties = [4, 0, 9]
    assert g.scores == [-4, 0, -9]
    assert g.ranks() == [2, 1, 3]


# -- plays -------------------------------------------------------------------


def test_empty_field_allows_any_group_of_one_number_with_wilds():
    g = fresh(4)
    set_table(g, {0: [2, 2, 5, W, 6, 6, 6, 1]})
    moves = legal(g)
    assert {"play 1 of 2", "play 2 of 2", "play 2 of 2 + 1 wild", "play 3 of 6 + 1 wild", "play 1 wild"} <= moves
    assert "pass" not in moves and not any(m.startswith("for you") for m in moves)
    assert "play 3 of 2" not in moves and "play 1 of 3" not in moves


def test_same_count_must_be_higher_more_cards_must_be_lower():
    g = fresh(4)
    set_table(g, {1: [2, 2, 2, 5, 5, 4, 4, 3]}, field=(2, 4, 0), to_act=1)
    plays = {m for m in legal(g) if m.startswith("play")}
    # Two 5s (same count, higher); three 2s (more cards, lower). Not two 4s, two 2s, nor three 5s.
    assert plays == {"play 2 of 5", "play 3 of 2"}


def play_size(name: str) -> int:
    """Cards in a play, from its name: "play 2 of 4 + 1 wild" -> 3, "play 2 wilds" -> 2."""
    words = name.split()
    return int(words[1]) + (int(words[5]) if "+" in words else 0)


def test_seed_example_three_1s_allow_only_same_count_higher():
    # Seed: with three 1s on the field only three cards of a higher number can follow
    # (nothing is lower than 1), so even four 1s cannot be played.
    g = fresh(4)
    set_table(g, {1: [1, 1, 1, 1, 2, 2, 2, W]}, field=(3, 1, 0), to_act=1)
    plays = {m for m in legal(g) if m.startswith("play")}
    assert plays == {"play 3 of 2", "play 2 of 2 + 1 wild"}
    assert {play_size(m) for m in plays} == {3}


def test_seed_example_pair_of_1s_blocks_triples():
    # Seed: "playing two 1s blocks three-card plays" - only pairs of a higher number follow.
    g = fresh(4)
    set_table(g, {1: [3, 3, 3, 4, 4, 4, 4, W]}, field=(2, 1, 0), to_act=1)
    plays = {m for m in legal(g) if m.startswith("play")}
    assert plays == {"play 2 of 3", "play 2 of 4", "play 1 of 3 + 1 wild", "play 1 of 4 + 1 wild"}
    assert {play_size(m) for m in plays} == {2}


def test_wilds_alone_count_as_sevens():
    g = fresh(4)
    set_table(g, {1: [W, W, W, 1]}, field=(2, 6, 0), to_act=1)
    assert "play 2 wilds" in legal(g)  # two 7s beat two 6s
    set_table(g, {1: [W, W, W, 1]}, field=(1, 6, 0), to_act=1)
    assert "play 1 wild" in legal(g) and "play 2 wilds" not in legal(g)  # more cards must be lower than 6
    g2 = fresh(4)
    set_table(g2, {1: [W, 3, 3, 5]}, field=(1, 7, 0), to_act=1)  # a single wild on the field is a 7
    assert {m for m in legal(g2) if m.startswith("play")} == {
        "play 2 of 3",
        "play 1 of 3 + 1 wild",
        "play 2 of 3 + 1 wild",
        "play 1 of 5 + 1 wild",
    }


def test_no_going_out_on_a_wild():
    g = fresh(4)
    set_table(g, {0: [5, W]})
    assert legal(g) == {"play 1 of 5", "play 1 wild"}  # not "play 1 of 5 + 1 wild": it empties the hand
    set_table(g, {0: [W, W]})
    assert legal(g) == {"play 1 wild"}
    set_table(g, {1: [3, W]}, field=(1, 6, 0), to_act=1)
    assert "play 1 of 3 + 1 wild" not in legal(g) and "play 1 wild" in legal(g)


def test_play_moves_cards_to_the_field_and_turn_on():
    g = fresh(3)
    set_table(g, {0: [4, 4, W, 1, 1, 2, 2, 3]})
    assert act(g, "play 2 of 4 + 1 wild") is None
    assert (g.field_count, g.field_number, g.field_player) == (3, 4, 0)
    assert g.hands[0] == counts([1, 1, 2, 2, 3]) and g.hand_sizes[0] == 5
    assert g.played[3] == 2 and g.played[nfm.WILD] == 1
    assert g.current_player == 1


# -- For You -------------------------------------------------------------------


def test_for_you_only_on_a_non_empty_field_and_never_wilds():
    g = fresh(3)
    set_table(g, {0: [1, 2, W]})
    assert not any(m.startswith("for you") for m in legal(g))
    set_table(g, {1: [1, 2, 2, W]}, field=(1, 6, 0), to_act=1)
    offers = {m for m in legal(g) if m.startswith("for you")}
    assert offers == {"for you 1s to player_2", "for you 1s to player_0", "for you 2s to player_2", "for you 2s to player_0"}


def three_player_deal():
    return {
        "hands": [[6, 1, 1, 1, 3, 3, 4, 4], [2, 2, 5, 5, 5, 6, 6, 6], [1, 2, 3, 4, 4, 5, W, W]],
        "supply": [4, 5, 6],
        "draw_pile": [2, 3, 1, W],
    }


def test_for_you_refused_giver_draws_from_supply_and_pile_with_refills():
    g = fresh(3, deal=three_player_deal())
    act(g, "play 1 of 6")
    act(g, "for you 2s to player_2")  # player_1 offers both 2s
    assert g.current_player == 2 and g.phase == nfm.ANSWER
    assert legal(g) == {"accept", "not for me"}
    assert g.hand_sizes[1] == 6 and g.offer_size == 2
    assert act(g, "not for me") is None
    assert g.hands[1][1] == 2  # the 2s went back to the giver
    assert g.current_player == 1 and g.phase == nfm.DRAW and g.draws_owed == 2
    assert legal(g) == {"draw supply 0", "draw supply 1", "draw supply 2", "draw pile"}
    act(g, "draw supply 1")  # takes the 5; the top of the pile (2) refills slot 1 at once
    assert g.supply == [3, 1, 5] and g.hands[1][4] == 4
    act(g, "draw pile")  # the next top card, a 3
    assert g.hands[1][2] == 1 and g.hand_sizes[1] == 10
    assert g.phase == nfm.PLAY and g.current_player == 2 and g.passes == 1  # player after the giver


def test_for_you_accepted_cards_move_and_field_clears_after_everyone_passed():
    g = fresh(3, deal=three_player_deal())
    act(g, "play 1 of 6")
    act(g, "for you 5s to player_0")
    act(g, "accept")
    assert g.hands[0][4] == 3 and g.hand_sizes == [10, 5, 8]
    assert g.current_player == 2 and g.field_count == 1
    act(g, "for you 1s to player_1")
    act(g, "accept")
    # Both other players passed since player_0's play: the field clears and player_0 leads.
    assert g.field_count == 0 and g.current_player == 0 and g.passes == 0
    assert not any(m.startswith("for you") for m in legal(g))


def test_refusal_with_empty_pile_draws_what_is_left_and_then_nothing():
    g = fresh(3, deal=three_player_deal())
    act(g, "play 1 of 6")
    g.draw = []
    g.supply = [-1, 4, -1]
    act(g, "for you 5s to player_0")
    act(g, "not for me")
    assert legal(g) == {"draw supply 1"}
    act(g, "draw supply 1")
    assert g.supply == [-1, -1, -1]
    # Three owed, one drawn, nothing left: the draw ends and the turn moves on.
    assert g.phase == nfm.PLAY and g.current_player == 2 and g.hands[1][4] == 4
    act(g, "for you 1s to player_1")
    act(g, "not for me")
    assert g.phase == nfm.PLAY and g.current_player == 0 and g.hands[2][0] == 1


def test_accepted_for_you_that_empties_the_hand_ends_the_round():
    g = fresh(3)
    set_table(g, {0: [3, 3, 3], 1: [2, 2], 2: [1, 4, 4, 5]}, field=(1, 6, 0), to_act=1)
    act(g, "for you 2s to player_2")
    ev = act(g, "accept")
    assert ev is not None and ev.details["went_out"] == 1
    assert list(ev.deltas) == [-3, 0, -6]
    assert g.round == 2


def test_target_never_sees_the_offered_number():
    def offer(number):
        g = fresh(3, deal=three_player_deal())
        set_table(g, {1: [2, 2, 5, 5, 6, 6, 6, 6]}, field=(1, 4, 0), to_act=1)
        act(g, f"for you {number}s to player_2")
        return g

    twos, fives = offer(2), offer(5)
    assert np.array_equal(twos.observe(2), fives.observe(2))
    assert np.array_equal(twos.observe(0), fives.observe(0))
    o = twos.observe(2)
    assert o[nfm.OBS_OFFER_SIZE] == 2 and o[nfm.OBS_OFFER_NUMBER] == 0
    assert o[nfm.OBS_PHASE + nfm.ANSWER] == 1
    giver_block = nfm.OBS_SEATS + 2 * nfm.SEAT_FIELDS  # player_1 is 2 seats clockwise from player_2
    assert o[giver_block + nfm.SEAT_GIVER] == 1 and o[nfm.OBS_SEATS + nfm.SEAT_TARGET] == 1
    # The giver knows what it offered.
    assert twos.observe(1)[nfm.OBS_OFFER_NUMBER] == 2 and fives.observe(1)[nfm.OBS_OFFER_NUMBER] == 5


def test_for_you_is_a_real_exchange_in_the_env():
    e = not_for_me_v0.raw_env(num_players=3)
    e.reset(seed=0, options={"deal": three_player_deal()})
    e.step(e.action_from_name("play 1 of 6"))
    e.step(e.action_from_name("for you 2s to player_2"))
    assert e.agent_selection == "player_2"
    assert set(e.legal_action_names()) == {"accept", "not for me"}
    assert not e.observe("player_1")["action_mask"].any()
    e.step(e.action_from_name("not for me"))
    assert e.agent_selection == "player_1"
    e.step(e.action_from_name("draw pile"))
    assert e.agent_selection == "player_1"
    e.step(e.action_from_name("draw supply 0"))
    assert e.agent_selection == "player_2"


# -- plain pass, field clearing ------------------------------------------------------


def test_plain_pass_only_with_no_play_and_no_number_card():
    g = fresh(4)
    set_table(g, {0: [W]})
    assert legal(g) == {"pass"}  # a lone wild cannot go out
    act(g, "pass")
    assert g.field_count == 0 and g.current_player == 1  # the lead passes on, field still empty
    set_table(g, {2: [W, 1]}, field=(3, 2, 1), to_act=2)
    assert legal(g) == {"for you 1s to player_3", "for you 1s to player_0", "for you 1s to player_1"}
    set_table(g, {2: [W, W, W, W]}, field=(3, 2, 1), to_act=2)
    assert legal(g) == {"play 3 wilds"}
    set_table(g, {2: [W, W, W]}, field=(3, 2, 1), to_act=2)
    assert legal(g) == {"pass"}


def test_plain_pass_counts_as_a_pass_for_clearing_the_field():
    g = fresh(2)
    set_table(g, {0: [4, 4, 1], 1: [W]})
    act(g, "play 2 of 4")
    act(g, "pass")
    assert g.field_count == 0 and g.current_player == 0


# -- round end, penalties, rounds ---------------------------------------------------


def test_penalty_five_marks_with_two_wilds_is_fifteen():
    g = fresh(2)
    set_table(g, {0: [4], 1: [1, 2, 3, 4, 5, W, W]})
    ev = act(g, "play 1 of 4")
    assert list(ev.deltas) == [0, -15] and ev.details["went_out"] == 0
    assert g.penalties == [0, 15] and g.scores == [0, -15]


def test_hand_marks_option_sets_marks_per_number():
    g = fresh(2, hand_marks=[1, 2, 3, 4, 5, 6])
    set_table(g, {0: [4], 1: [1, 2, 6, W]})
    ev = act(g, "play 1 of 4")
    assert list(ev.deltas) == [0, -(1 + 2 + 6) * 2]


def test_wilds_alone_cost_nothing():
    g = fresh(2)
    set_table(g, {0: [4], 1: [W, W, W]})
    assert list(act(g, "play 1 of 4").deltas) == [0, 0]


@pytest.mark.parametrize(
    "hands,start",
    [
        ({0: [1, 1], 1: [1], 3: [1, 1]}, 3),  # tie of player_0 and player_3: player_3 is nearer after player_2
        ({0: [1, 1], 1: [1, 1], 3: [1]}, 0),  # tie of player_0 and player_1: player_0 is nearer
        ({0: [1], 1: [1, 1, 1], 3: [1, 1]}, 1),  # no tie: the most penalty starts
        ({0: [W], 1: [W], 3: [W]}, 3),  # everyone at 0, the one out included: next after player_2
    ],
)
def test_later_round_start_player_and_tie_break(hands, start):
    g = fresh(4)
    set_table(g, {2: [4], **hands}, to_act=2)
    ev = act(g, "play 1 of 4")
    assert ev.details["went_out"] == 2
    assert g.round == 2 and g.current_player == start and g.field_count == 0
    assert g.hand_sizes == [8] * 4


@pytest.mark.parametrize("n", [2, 3, 5])
def test_rounds_default_to_player_count_and_game_ends(n):
    assert NotForMe(n).rounds == n
    assert NotForMe(n, rounds=2).rounds == 2
    ends = 0
    g = fresh(n, seed=1, rounds=2)
    rnd = random.Random(1)
    while not g.game_over:
        moves = np.flatnonzero(g.legal_mask())
        ev = g.step(int(moves[rnd.randrange(moves.size)]))
        if ev is not None:
            ends += 1
            assert -sum(ev.deltas) == sum(ev.details["round_penalties"])
    assert ends == 2 and g.round == 2 and g.current_player == -1
    assert g.scores == [-p for p in g.penalties]


def test_max_round_steps_truncates_with_no_penalties_and_reports_in_infos():
    e = not_for_me_v0.raw_env(num_players=3, max_round_steps=4, rounds=2)
    e.reset(seed=3)
    rnd = random.Random(0)
    for i in range(4):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rnd.choice(list(np.flatnonzero(mask)))))
    assert all(info["round_truncated"] == 1 and info["scored"] == 1 for info in e.infos.values())
    assert e.last_event["round_truncated"] == 1 and e.last_event["went_out"] is None
    assert all(r == 0 for r in e.rewards.values())
    assert e.unwrapped.game.round == 2 and e.unwrapped.game.penalties == [0, 0, 0]
    assert e.agent_selection == "player_1"  # decision: the seat after the truncated round's starter
    for i in range(4):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rnd.choice(list(np.flatnonzero(mask)))))
    assert all(e.terminations.values())
    assert e.infos["player_0"]["final_ranks"] == (1, 1, 1)
    assert e.last_event["final_ranks"] == {f"player_{i}": 1 for i in range(3)}


def test_round_end_rewards_are_zero_sum_in_the_env():
    e = not_for_me_v0.raw_env(num_players=2)
    e.reset(seed=0)
    set_table(e.unwrapped.game, {0: [4], 1: [1, 2, 3, 4, 5, W, W]})
    e.step(e.action_from_name("play 1 of 4"))
    assert e.rewards == {"player_0": 7.5, "player_1": -7.5}
    info = e.infos["player_1"]
    assert tuple(info["score_changes"]) == (0, -15) and info["round_penalties"] == (0, 15) and info["went_out"] == 0
    event = e.last_event
    assert event["score_changes"] == {"player_0": 0, "player_1": -15}
    assert event["round_penalties"] == {"player_0": 0, "player_1": 15} and event["went_out"] == "player_0"


# -- observation ---------------------------------------------------------------------


def test_observation_fields_are_seat_relative():
    g = fresh(3, deal=three_player_deal())
    act(g, "play 1 of 6")
    o = g.observe(1)
    assert list(o[:7]) == counts([2, 2, 5, 5, 5, 6, 6, 6])
    assert (o[nfm.OBS_FIELD_COUNT], o[nfm.OBS_FIELD_NUMBER], o[nfm.OBS_PASSES]) == (1, 6, 0)
    supply = o[nfm.OBS_SUPPLY : nfm.OBS_SUPPLY + 21].reshape(3, 7)
    assert [int(np.argmax(r)) for r in supply] == [3, 4, 5] and supply.sum() == 3
    assert o[nfm.OBS_DRAW_PILE] == len(g.deck) - 27
    assert (o[nfm.OBS_ROUND], o[nfm.OBS_ROUNDS]) == (1, 3)
    assert o[nfm.OBS_PLAYED + 5] == 1
    me, nxt, prev = (o[nfm.OBS_SEATS + r * nfm.SEAT_FIELDS :][: nfm.SEAT_FIELDS] for r in range(3))
    assert me[nfm.SEAT_HAND] == 8 and me[nfm.SEAT_TO_ACT] == 1
    assert prev[nfm.SEAT_HAND] == 7 and prev[nfm.SEAT_FIELD_PLAYER] == 1 and nxt[nfm.SEAT_FIELD_PLAYER] == 0
    assert g.observe(0).shape == (g.obs_size,) and g.state().shape == (g.state_size,)


@pytest.mark.parametrize("n", [2, 5])
def test_a_redeal_keeps_what_everyone_knows_of_the_giver(n):
    # The general redeal check is tests/test_leaks.py; what is particular here: a giver offers every
    # card of the number offered, so a redeal may give the giver none of it back.
    rng = np.random.default_rng(n)
    offers = 0
    for g in random_engine_states(n, seed=20 + n, steps=250):
        for seat in range(n):
            if g.offer_size and seat != g.giver:
                h = copy.deepcopy(g)
                h.shuffle_hidden(seat, rng)
                assert h.hand_sizes == [sum(x) for x in h.hands]
                assert h.hands[h.giver][h.offer_kind] == 0
                offers += 1
    assert offers > 5


# -- mask vs an independent enumeration of the rules -------------------------------------


def brute_force_legal(g: NotForMe) -> set[int]:
    """Every legal move from RULES.md §1, indexed by the layout documented in not_for_me_v0."""
    n = g.num_players
    C = {2: 7, 3: 8}.get(n, 10)
    play_base, wild_base = 0, 36 * C
    for_you_base = wild_base + 5
    accept = for_you_base + 6 * (n - 1)
    seat = g.current_player
    if g.phase == nfm.ANSWER:
        return {accept, accept + 1}
    if g.phase == nfm.DRAW:
        moves = {accept + 2 + i for i in range(3) if g.supply[i] != -1}
        return moves | ({accept + 5} if g.draw else set())
    hand = g.hands[seat]
    size = sum(hand)
    c, fv = g.field_count, g.field_number

    def beats(k, v):
        return c == 0 or (k == c and v > fv) or (k > c and v < fv)

    moves = set()
    for v in range(1, 7):
        for m in range(1, C + 1):
            for w in range(0, 6):
                if m <= hand[v - 1] and w <= hand[6] and beats(m + w, v) and not (m + w == size and w > 0):
                    moves.add(play_base + ((v - 1) * C + m - 1) * 6 + w)
    for k in range(1, 6):
        if k <= hand[6] and beats(k, 7) and k < size:
            moves.add(wild_base + k - 1)
    if c > 0:
        for v in range(1, 7):
            if hand[v - 1] > 0:
                for r in range(1, n):
                    moves.add(for_you_base + (v - 1) * (n - 1) + r - 1)
    if not moves:
        moves.add(accept + 6)
    return moves


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_mask_equals_brute_force_enumeration(n):
    phases = Counter()
    for seed in range(3):
        for g in random_engine_states(n, seed=100 * n + seed, steps=600):
            mask = g.legal_mask()
            assert mask.dtype == np.int8 and mask.shape == (g.num_actions,)
            assert set(np.flatnonzero(mask).tolist()) == brute_force_legal(g), g.render()
            phases[g.phase] += 1
    assert phases[nfm.ANSWER] and phases[nfm.DRAW]  # the random states cover every phase


def test_mask_is_cached_until_the_state_changes():
    g = fresh(4)
    m = g.legal_mask()
    assert g.legal_mask() is m
    g.step(int(np.flatnonzero(m)[0]))
    assert g.legal_mask() is not m


# -- stacked deals, options -------------------------------------------------------------


def test_stacked_deal_fixes_hands_supply_and_pile_top_first():
    g = fresh(3, deal=three_player_deal())
    assert g.hands[2] == counts([1, 2, 3, 4, 4, 5, W, W])
    assert g.supply == [3, 4, 5]
    assert g.draw[-4:] == [nfm.WILD, 0, 2, 1]  # top of the pile is the end of the list
    # The unnamed cards depend on the seed; the named ones do not.
    other = fresh(3, seed=1, deal=three_player_deal())
    assert other.draw[-4:] == g.draw[-4:] and other.draw != g.draw


@pytest.mark.parametrize(
    "deal,message",
    [
        ([1, 2], "must be a dict"),
        ({"hands": [[1] * 8] * 2, "table": []}, "unknown deal key"),
        ({"hands": [[1, 2, 3, 4, 5, 6, W, W]] * 3}, "must list 2 hands"),
        ({"hands": [[1, 2, 3], [1, 2, 3, 4, 5, 6, W, W]]}, "hands\\[0\\] has 3 cards"),
        ({"hands": [[1, 2, 3, 4, 5, 6, W, 7], [1] * 8]}, "unknown card 7"),
        ({"hands": [[1] * 8, [2] * 8]}, "more copies.*1 x8 \\(the deck has 7\\)"),
        ({"hands": [[W] * 4 + [1] * 4, [W] * 2 + [2] * 6]}, "W x6 \\(the deck has 5\\)"),
        ({"hands": [[1] * 4 + [2] * 4, [3] * 8], "supply": [4, 5]}, "supply has 2 cards"),
        ({"hands": [[1] * 4 + [2] * 4, [3] * 4 + [4] * 4], "draw_pile": "123"}, "draw_pile must be a list"),
    ],
)
def test_bad_deals_say_what_is_wrong(deal, message):
    e = not_for_me_v0.raw_env(num_players=2)
    with pytest.raises(ValueError, match=message):
        e.reset(seed=0, options={"deal": deal})


@pytest.mark.parametrize(
    "options,message",
    [
        ({"num_players": 6}, "2 to 5"),
        ({"num_players": 1}, "2 to 5"),
        ({"hand_marks": [1, 2, 3]}, "hand_marks.*6 integers from 0 to 10"),
        ({"hand_marks": [1, 1, 1, 1, 1, -1]}, "hand_marks"),
        ({"rounds": 0}, "rounds"),
        ({"rounds": "3"}, "rounds"),
        ({"max_round_steps": 0}, "max_round_steps"),
        ({"max_round_steps": True}, "max_round_steps"),
        ({"marks": 2}, "unknown rule option.*marks.*valid options: hand_marks, max_round_steps, rounds"),
    ],
)
def test_bad_options_say_what_is_wrong(options, message):
    with pytest.raises(ValueError, match=message):
        not_for_me_v0.env(**options)


# -- golden playthrough, whole games -------------------------------------------------------


def test_golden_playthrough_gives_accepts_refuses_and_draws():
    # tests/test_playthroughs.py replays it
    header, names = read_playthrough((GOLDEN / "not_for_me_3p.txt").read_text())
    assert header["options"] == {"deal": three_player_deal()} and header["players"] == 3
    assert {"accept", "not for me"} <= set(names) and any(n and n.startswith("draw") for n in names)


def test_whole_games_end_with_final_ranks():
    for n in (2, 4):
        e = envs.make("not_for_me", num_players=n)
        steps = list(play_random_game(e, seed=n))
        assert steps and e.agents == []
        g = e.unwrapped.game
        assert g.game_over and g.round == n


# -- heuristic -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 4])
def test_heuristic_plays_legal_moves_and_beats_random(n):
    from agents import make_agent

    scores = {"heuristic": [], "random": []}
    for game in range(12):
        e = not_for_me_v0.raw_env(num_players=n)  # raw_env raises on an illegal move
        e.reset(seed=game)
        seat = game % n
        bots = [make_agent("heuristic" if s == seat else "random", "not_for_me", n, seed=game) for s in range(n)]
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else bots[int(agent[7:])].act(obs))
        for s, score in enumerate(e.unwrapped.game.scores):
            scores["heuristic" if s == seat else "random"].append(score)
    assert np.mean(scores["heuristic"]) > np.mean(scores["random"]) + 5


def test_option_bounds_keep_observations_in_their_box():
    with pytest.raises(ValueError, match="rounds.*from 1 to 100"):
        not_for_me_v0.env(rounds=101)
    with pytest.raises(ValueError, match="hand_marks"):
        not_for_me_v0.env(hand_marks=[11, 1, 1, 1, 1, 1])


def test_offer_flags_are_set_only_while_the_offer_waits_for_an_answer():
    g = fresh(3, deal=three_player_deal())
    act(g, "play 1 of 6")
    act(g, "for you 2s to player_2")

    def flags(observer: int, seat: int) -> tuple[int, int]:
        base = nfm.OBS_SEATS + ((seat - observer) % 3) * nfm.SEAT_FIELDS
        obs = g.observe(observer)
        return int(obs[base + nfm.SEAT_GIVER]), int(obs[base + nfm.SEAT_TARGET])

    assert all(flags(o, 1) == (1, 0) and flags(o, 2) == (0, 1) for o in range(3))  # the offer is pending
    act(g, "not for me")
    assert g.phase == nfm.DRAW
    # The draws after a Not For Me: no offer is pending, so no seat is flagged as giver or target.
    assert all(flags(o, s) == (0, 0) for o in range(3) for s in range(3))
    act(g, "draw pile")
    assert g.phase == nfm.DRAW and all(flags(o, s) == (0, 0) for o in range(3) for s in range(3))
