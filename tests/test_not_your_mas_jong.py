"""Not Your Ma's Jong: a test per rule of RULES.md §4, the seed's examples, brute-force checks."""

from __future__ import annotations

import copy
import random
import warnings
from collections import Counter

import numpy as np
import pytest

from envs import not_your_mas_jong_v0
from agents.heuristic.hand_distance import shanten, shanten_each
from envs.not_your_mas_jong import (
    CARD_NAMES,
    DECK,
    NUM_TYPES,
    OBS_DISCARD,
    OBS_PHASE,
    OBS_SEATS,
    SEAT_BLOCK,
    SEAT_DISCARDS,
    SEAT_IS_MA,
    SEAT_LOCKED,
    SEAT_TOKENS,
    STEAL,
    is_complete_concealed,
    parse_card,
)
from tests.helpers import GOLDEN, play_random_game, read_playthrough


def cards(text: str) -> list[str]:
    return text.split()


def fresh(n=4, seed=0, deal=None, steal_phase="eligible"):
    # The hand-built positions below script who decides on each steal; "eligible" asks only the
    # players holding a steal, so the scripts stay short. "every_player" has its own tests.
    env = not_your_mas_jong_v0.raw_env(num_players=n, steal_phase=steal_phase)
    env.reset(seed=seed, options=None if deal is None else {"deal": deal})
    return env, env.unwrapped.game


def play(env, name):
    env.step(env.unwrapped.action_from_name(name))


def legal_names(env):
    u = env.unwrapped
    return {u.action_name(int(a)) for a in np.flatnonzero(u.game.legal_mask())}


def set_table(game, hands, current=0, ma=0, locked=None, draw_top=(), pile_is_only=False, tokens=None, round=1):
    """Put the engine in a chosen discard-phase position (hands in short notation).

    Cards not named go under draw_top, unless pile_is_only (then the pile is exactly draw_top)."""
    n = game.num_players
    locked = locked or {}
    named = [parse_card(c) for h in hands for c in cards(h)] + [parse_card(c) for c in draw_top]
    named += [parse_card(c) for sets in locked.values() for s in sets for c in cards(s)]
    left = Counter(DECK)
    left.subtract(named)
    assert min(left.values()) >= 0, f"position uses too many copies: {-left}"
    game.hands = [[0] * NUM_TYPES for _ in range(n)]
    game.codes = [[0] * 5 for _ in range(n)]
    game.hand_sizes = [0] * n
    for s, h in enumerate(hands):
        for c in cards(h):
            game._give(s, parse_card(c))
    top = [parse_card(c) for c in reversed(draw_top)]
    game.draw = top if pile_is_only else sorted(left.elements()) + top
    game.tokens = list(tokens or [10] * n)
    game.ma, game.round = ma, round
    game.table[:] = 0
    game.table[:, SEAT_TOKENS] = game.tokens
    game.table[ma, SEAT_IS_MA] = 1
    game.locked_sets = [[] for _ in range(n)]
    game.discard_piles = [[] for _ in range(n)]
    for s, sets in locked.items():
        for text in sets:
            ids = tuple(parse_card(c) for c in cards(text))
            game.locked_sets[s].append(ids)
            for c in ids:
                game.table[s, SEAT_LOCKED + c] += 1
    game.phase, game.current_player = 0, current
    game.current_discard = game.discarder = -1
    game.to_ask, game.claims = [], [-1] * n
    game.game_over = False
    game._pending_event = None
    game._mask = None


# -- an independent brute-force hand checker and mask ---------------------------------
ALL_SETS = [(k, k, k) for k in range(NUM_TYPES)] + [
    (5 * s + r, 5 * s + r + 1, 5 * s + r + 2) for s in range(5) for r in range(3)
]


def _sets_cover(counts: list[int], m: int, start: int = 0) -> bool:
    if m == 0:
        return not any(counts)
    for i in range(start, len(ALL_SETS)):
        need = Counter(ALL_SETS[i])
        if all(counts[c] >= k for c, k in need.items()):
            for c, k in need.items():
                counts[c] -= k
            ok = _sets_cover(counts, m - 1, i)
            for c, k in need.items():
                counts[c] += k
            if ok:
                return True
    return False


def brute_complete(counts, locked_sets: int = 0) -> bool:
    """Try every pair and every multiset of sets: is this a winning hand?"""
    m = 3 - locked_sets
    counts = list(counts)
    if sum(counts) != 3 * m + 2:
        return False
    for p in range(NUM_TYPES):
        if counts[p] >= 2:
            counts[p] -= 2
            ok = _sets_cover(counts, m)
            counts[p] += 2
            if ok:
                return True
    return False


def brute_legal(game) -> set[str]:
    seat = game.current_player
    hand = game.hands[seat]
    if game.phase != STEAL:
        return {f"discard {CARD_NAMES[k]}" for k in range(NUM_TYPES) if hand[k] > 0}
    card = game.current_discard
    legal = {"pass"}
    with_card = list(hand)
    with_card[card] += 1
    if brute_complete(with_card, len(game.locked_sets[seat])):
        legal.add("steal win")
    if hand[card] >= 2:
        legal.add("steal identical")
    suit, rank = divmod(card, 5)
    for name, others in (("lowest", (1, 2)), ("middle", (-1, 1)), ("highest", (-2, -1))):
        ranks = [rank + d for d in others]
        if all(0 <= r < 5 and hand[5 * suit + r] > 0 for r in ranks):
            legal.add(f"steal as {name}")
    return legal


# -- cards and set-up -------------------------------------------------------------------


def test_deck_is_five_suits_of_ranks_1_to_5_three_copies_each():
    counts = Counter(CARD_NAMES[k] for k in DECK)
    assert len(DECK) == 75 and len(counts) == 25 and set(counts.values()) == {3}
    # RULES.md [D]: the project's names for the Seasons and Emotions cards.
    assert [CARD_NAMES[k] for k in range(15, 25)] == [
        "Spring", "Summer", "Autumn", "Winter", "Solstice", "Love", "Joy", "Anger", "Sorrow", "Fear",
    ]


def test_card_notation_from_the_seed():
    # The seed names discards like "4 Green" or "Summer".
    assert parse_card("Green 4") == parse_card("g4") == parse_card("GREEN4") == 13
    assert parse_card("Summer") == parse_card("seasons 2") == 16
    assert parse_card("Love") == parse_card("Emotions 1") == 20
    with pytest.raises(KeyError):
        parse_card("Purple 2")


@pytest.mark.parametrize("n", [3, 4])
def test_setup_ma_gets_11_others_10_and_discards_first(n):
    env, g = fresh(n, seed=n)
    assert g.hand_sizes == [11] + [10] * (n - 1)
    assert len(g.draw) == 75 - 11 - 10 * (n - 1)
    assert g.tokens == [10] * n and g.ma == 0 and g.round == 1
    assert env.agent_selection == "player_0"
    assert legal_names(env) <= {f"discard {c}" for c in CARD_NAMES}
    assert sorted(sum(g.card_places().values(), [])) == sorted(DECK)


def test_after_a_discard_nobody_can_use_the_next_player_draws_and_discards():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R1 B1 B2 G5 G5 Love Joy Spring Winter", "R3 R4 B5 B5 G1 G3 Summer Autumn Anger Joy",
         "R2 R2 B3 B4 G2 G4 Solstice Joy Love Anger", "R5 R5 B1 B3 G1 G2 Spring Autumn Sorrow Solstice"],
        draw_top=["Winter"],
    )
    play(env, "discard Fear")  # no one holds a Fear: no steal decision at all
    assert env.agent_selection == "player_1" and g.phase == 0
    assert g.hand_sizes == [10, 11, 10, 10] and g.hands[1][parse_card("Winter")] == 1
    assert g.discard_piles[0] == [parse_card("Fear")]


# -- the hand checker -----------------------------------------------------------------


def counts_of(text: str) -> list[int]:
    c = [0] * NUM_TYPES
    for name in cards(text):
        c[parse_card(name)] += 1
    return c


@pytest.mark.parametrize(
    "hand,complete",
    [
        ("R1 R2 R3 B5 B5 B5 Love Love Love G4 G4", True),  # seed: three Blue 5s, three Loves
        ("Spring Summer Autumn Joy Anger Sorrow R1 R1 R1 G2 G2", True),  # sequences in Seasons and Emotions [D]
        ("R4 R5 R1 B1 B2 B3 G1 G2 G3 Fear Fear", False),  # no wrap-around
        ("R1 B2 G3 B1 B2 B3 G1 G2 G3 Fear Fear", False),  # a sequence is one suit
        ("R1 R1 R2 R2 R3 R3 B4 B4 B4 G5 G5", True),  # two sequences sharing ranks
        ("R1 R1 R1 R2 R4 B4 B4 B4 G5 G5 G5", False),  # no pair (R1 R1 R1 R2 R3 would be pair + sequence)
        ("R1 R1 R2 R2 B3 B3 G4 G4 Love Love Fear", False),  # pairs are not sets
        ("R1 R1 R1 R2 R2 R2 R3 R3 R3 R4 R4", True),
    ],
)
def test_hand_checker_examples(hand, complete):
    assert is_complete_concealed(counts_of(hand)) is complete
    assert brute_complete(counts_of(hand)) is complete


def _random_complete(rnd: random.Random, locked: int) -> list[int]:
    while True:
        counts = [0] * NUM_TYPES
        for s in rnd.choices(ALL_SETS, k=3 - locked):
            for c in s:
                counts[c] += 1
        counts[rnd.randrange(NUM_TYPES)] += 2
        if max(counts) <= 3:
            return counts


def test_hand_checker_equals_brute_force_enumeration():
    rnd = random.Random(5)
    positives = checked = 0
    for i in range(4000):
        locked = rnd.choice([0, 0, 0, 1, 2, 3])
        size = 11 - 3 * locked
        if i % 2:
            counts = [0] * NUM_TYPES
            for c in rnd.sample(DECK, size):
                counts[c] += 1
        else:
            counts = _random_complete(rnd, locked)
            if i % 4 == 0:  # near-complete: swap one card
                out = rnd.choice([k for k in range(NUM_TYPES) if counts[k]])
                into = rnd.choice([k for k in range(NUM_TYPES) if counts[k] < 3 and k != out])
                counts[out] -= 1
                counts[into] += 1
        expected = brute_complete(counts, locked)
        assert is_complete_concealed(counts) == expected, [CARD_NAMES[k] for k in range(25) for _ in range(counts[k])]
        positives += expected
        checked += 1
    assert checked == 4000 and 800 < positives < 3200


def test_shanten_is_zero_exactly_for_complete_hands_and_one_for_one_away():
    rnd = random.Random(8)
    for _ in range(300):
        counts = _random_complete(rnd, 0)
        assert shanten(counts) == 0
        out = rnd.choice([k for k in range(NUM_TYPES) if counts[k]])
        counts[out] -= 1
        # ten cards one short of complete: exactly one draw away
        assert shanten(counts) == 1


def test_shanten_each_is_shanten_of_every_one_card_change():
    # shanten_each combines the four unchanged suits once per suit; it must equal
    # shanten of each changed hand computed from scratch.
    rnd = random.Random(9)
    for _ in range(400):
        counts = [0] * NUM_TYPES
        for card in rnd.sample(range(3 * NUM_TYPES), rnd.randint(2, 14)):
            counts[card // 3] += 1
        locked = rnd.randint(0, 3)
        for change in (+1, -1):
            each = shanten_each(counts, locked, change)
            for k in range(NUM_TYPES):
                if not 0 <= counts[k] + change <= 3:
                    assert each[k] is None
                    continue
                changed = list(counts)
                changed[k] += change
                assert each[k] == shanten(changed, locked), (counts, locked, k, change)


# -- winning by draw and the payments ---------------------------------------------------

WAITING_ON_SUMMER = "R1 R2 R3 B4 B4 B4 G1 G2 G3 Summer"


def test_self_drawn_complete_hand_wins_at_once_not_ma_by_draw_pays_4_and_2():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER,
         "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"],
        draw_top=["Summer"],
    )
    play(env, "discard Fear")
    # player_1 drew Summer: complete, wins by draw; Ma pays 4, the others 2 each.
    assert env.last_event["result"] == "win by draw"
    assert env.last_event["score_changes"] == {"player_0": -4, "player_1": 8, "player_2": -2, "player_3": -2}
    # Every agent's infos hold the same facts as numbers: seats and result codes.
    for info in env.infos.values():
        assert info["result"] == 1 and info["winner"] == 1 and info["ma"] == 0 and info["then_result"] == 0
        assert list(info["score_changes"]) == [-4, 8, -2, -2] and list(info["scores"]) == [6, 18, 8, 8]
    assert env.rewards["player_1"] == pytest.approx(8 - 0) and abs(sum(env.rewards.values())) < 1e-9
    assert g.tokens == [6, 18, 8, 8]


def test_ma_win_by_draw_everyone_pays_4():
    env, g = fresh(3)
    set_table(
        g,
        ["Fear R1 R2 R3 B4 B4 B4 G1 G2 G3 Summer", "R5 R5 B1 B2 G5 G5 Love Joy Spring Winter",
         "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger"],
        draw_top=["Sorrow", "Anger", "Summer"],
    )
    play(env, "discard Fear")  # player_1 draws Sorrow
    play(env, "discard Winter")  # nobody can use it; player_2 draws Anger
    assert env.agent_selection == "player_2"
    play(env, "discard Solstice")  # back to the Ma, who draws Summer
    assert env.last_event["result"] == "win by draw"
    assert g.tokens == [18, 6, 6]
    assert env.last_event["score_changes"] == {"player_0": 8, "player_1": -4, "player_2": -4}


def _steal_table(g, p1, p2, p3, current=0, tokens=None):
    set_table(
        g,
        ["Summer Solstice Winter B3 B3 G5 Anger Sorrow Fear R5 R5", p1, p2, p3],
        current=current,
        tokens=tokens,
    )


JUNK_3 = "R1 R1 B1 B2 G5 G5 Love Joy Fear Fear"


def test_win_by_steal_not_ma_ma_pays_2_others_1():
    env, g = fresh()
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", WAITING_ON_SUMMER, JUNK_3)
    play(env, "discard Summer")
    assert env.agent_selection == "player_1" and legal_names(env) == {"pass", "steal as middle"}
    play(env, "pass")
    assert env.agent_selection == "player_2" and legal_names(env) == {"pass", "steal win"}
    play(env, "steal win")
    assert env.last_event["result"] == "win by steal"
    assert env.last_event["score_changes"] == {"player_0": -2, "player_1": -1, "player_2": 4, "player_3": -1}


def test_ma_win_by_steal_everyone_pays_2():
    env, g = fresh()
    set_table(
        g,
        ["Fear R5 R5 B1 B2 G5 G5 Love Joy Spring Winter", "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger",
         "Summer Fear Sorrow B3 B2 G4 Anger Autumn Solstice R4 R3", WAITING_ON_SUMMER],
        current=2,
        ma=3,
    )
    play(env, "discard Summer")
    assert env.agent_selection == "player_3"
    play(env, "steal win")
    assert env.last_event["score_changes"] == {"player_0": -2, "player_1": -2, "player_2": -2, "player_3": 6}


def test_a_player_who_cannot_pay_in_full_pays_what_they_have():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER,
         "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"],
        draw_top=["Summer"],
        tokens=[3, 10, 1, 16],
    )
    play(env, "discard Fear")
    assert env.last_event["score_changes"] == {"player_0": -3, "player_1": 6, "player_2": -1, "player_3": -2}
    assert g.tokens == [0, 16, 0, 14]


def test_ma_dealt_a_complete_hand_wins_at_once_as_a_win_by_draw():
    deal = {
        "hands": [cards("R1 R2 R3 B4 B4 B4 G1 G2 G3 Summer Summer"), cards(JUNK_3),
                  cards("R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger"),
                  cards("R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice")],
    }
    env, g = fresh(deal=deal)
    assert g.tokens == [22, 6, 6, 6]
    assert g.round == 2 and g.ma == 1 and env.agent_selection == "player_1" and g.hand_sizes[1] == 11
    # reset() cannot report it: the first step's event carries the payment.
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    info = env.last_event
    assert info["round"] == 1 and info["result"] == "win by draw" and info["winner"] == "player_0"
    assert info["score_changes"]["player_0"] == 12 and abs(sum(env.rewards.values())) < 1e-9


# -- stealing ---------------------------------------------------------------------------


def test_steal_options_identical_and_sequence_positions():
    env, g = fresh()
    # player_1 holds two Red 3s, Red 1 Red 2, Red 4 Red 5 and Red 2 Red 4: Red 3 fits every way.
    set_table(
        g,
        ["R3 Solstice Winter B3 B3 G5 Anger Sorrow Fear Fear Fear", "R3 R3 R1 R2 R4 R5 B1 G1 Love Joy",
         "B2 B2 G2 G3 Spring Summer Autumn Love Joy Anger", "R1 R2 B5 B5 G4 G4 Spring Summer Love Joy"],
    )
    play(env, "discard Red 3")
    assert env.agent_selection == "player_1"
    assert legal_names(env) == {"pass", "steal identical", "steal as lowest", "steal as middle", "steal as highest"}
    play(env, "pass")
    # player_2 has nothing for a Red 3 and is not asked; player_3 has Red 1 Red 2.
    assert env.agent_selection == "player_3" and legal_names(env) == {"pass", "steal as highest"}


def test_a_single_copy_never_allows_a_pair_steal_unless_it_wins():
    env, g = fresh()
    # player_1 holds one Solstice: stealing it would only make a pair, so nobody is asked.
    set_table(
        g,
        ["Solstice R5 Winter B3 B3 G5 Anger Sorrow Fear Fear Fear", "Solstice R3 R1 B2 R4 B5 B1 G1 Love Joy",
         "B2 G2 G3 G4 Spring Summer Autumn Love Joy Anger", "R1 R2 B5 B5 G4 G4 Spring Summer Love Joy"],
    )
    play(env, "discard Solstice")
    assert env.agent_selection == "player_1" and g.phase == 0 and g.hand_sizes[1] == 11


def test_set_steal_skips_the_players_in_between():
    env, g = fresh()
    _steal_table(g, "R1 R2 B1 B2 G1 G2 Love Joy Anger Fear", "R3 R4 B4 B5 G3 G4 Love Joy Anger Fear",
                 "Summer Summer R1 B1 B2 G5 Spring Winter Love Sorrow")
    play(env, "discard Summer")
    assert env.agent_selection == "player_3"
    assert legal_names(env) == {"pass", "steal identical"}
    play(env, "steal identical")
    summer = parse_card("Summer")
    assert g.locked_sets[3] == [(summer, summer, summer)] and g.hands[3][summer] == 0
    assert g.hand_sizes[3] == 8 and g.discard_piles[0] == []
    # the locked set is face up: every observation shows it, seat-relative
    for viewer in range(4):
        obs = env.observe(f"player_{viewer}")["observation"]
        r = (3 - viewer) % 4
        assert obs[OBS_SEATS + SEAT_BLOCK * r + SEAT_LOCKED + summer] == 3
    # the stealer discards without drawing, then play goes on after the stealer: 1 and 2 are skipped
    assert env.agent_selection == "player_3" and g.phase == 0
    draw_before = len(g.draw)
    play(env, "discard Red 1")
    assert env.agent_selection == "player_0" and len(g.draw) == draw_before - 1
    assert g.hand_sizes == [11, 10, 10, 7]


def test_winning_steal_beats_a_nearer_set_steal():
    env, g = fresh()
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", WAITING_ON_SUMMER, JUNK_3)
    play(env, "discard Summer")
    play(env, "steal as middle")
    play(env, "steal win")
    assert env.last_event["winner"] == "player_2" and g.round == 2


def test_a_win_claimed_as_a_set_is_a_win_by_steal_and_has_win_priority():
    env, g = fresh()
    # player_2 waits on G3 or Summer; claiming the Summer as an identical set completes the hand.
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", "R1 R2 R3 B4 B4 B4 G3 G3 Summer Summer", JUNK_3)
    play(env, "discard Summer")
    play(env, "steal as middle")
    assert legal_names(env) == {"pass", "steal win", "steal identical"}
    play(env, "steal identical")
    assert env.last_event["result"] == "win by steal" and env.last_event["winner"] == "player_2"


def test_among_set_claims_the_nearest_after_the_discarder_gets_the_card():
    env, g = fresh()
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", "Summer Summer R1 B1 B2 G4 R2 Winter Love Sorrow", JUNK_3)
    play(env, "discard Summer")
    play(env, "steal as middle")
    play(env, "steal identical")
    assert g.locked_sets[1] and not g.locked_sets[2] and env.agent_selection == "player_1"


def test_among_win_claims_the_nearest_after_the_discarder_wins_even_across_seat_0():
    env, g = fresh()
    # player_2 discards; player_3 and player_1 both win on it: player_3 is nearer.
    set_table(
        g,
        ["Fear R5 R5 B2 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER,
         "Summer Solstice Winter B3 B3 G4 Anger Sorrow Fear R4 R4", "Spring Autumn B1 B1 B1 G3 G4 G5 Love Love"],
        current=2,
    )
    play(env, "discard Summer")
    assert env.agent_selection == "player_3"
    play(env, "steal win")
    assert env.agent_selection == "player_1"
    play(env, "steal win")
    assert env.last_event["winner"] == "player_3"


def test_steal_decisions_are_hidden_from_the_players_asked_later():
    env, g = fresh()
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", WAITING_ON_SUMMER, JUNK_3)
    play(env, "discard Summer")
    claimed, passed = copy.deepcopy(env), copy.deepcopy(env)
    play(claimed, "steal as middle")
    play(passed, "pass")
    for agent in env.possible_agents:
        assert np.array_equal(claimed.observe(agent)["observation"], passed.observe(agent)["observation"])
    assert claimed.agent_selection == passed.agent_selection == "player_2"
    # ...but the decision is in the global state
    assert not np.array_equal(claimed.state(), passed.state())


# -- exhaustion, rounds and the end of the game ----------------------------------------


def test_empty_draw_pile_ends_the_round_without_payment_and_the_ma_rotates():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger",
         "R3 R4 B3 B5 G2 G1 Solstice Summer Love Sorrow", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"],
        draw_top=[],
        pile_is_only=True,
    )
    play(env, "discard Fear")
    info = env.last_event
    assert info["result"] == "exhausted" and set(info["score_changes"].values()) == {0}
    assert g.tokens == [10] * 4 and all(r == 0 for r in env.rewards.values())
    assert g.round == 2 and g.ma == 1 and env.agent_selection == "player_1" and g.hand_sizes == [10, 11, 10, 10]


def test_ma_rotates_every_round_through_every_seat():
    env, g = fresh(3, seed=4)
    mas = [g.ma]
    for agent, obs, action in play_random_game(env, seed=4):
        if action is not None and g.ma != mas[-1] and not g.game_over:
            mas.append(g.ma)
            # the new Ma holds 11 cards and acts first
            assert g.hand_sizes[g.ma] == 11 and g.current_player == g.ma
            assert env.observe(f"player_{g.ma}")["observation"][OBS_SEATS + SEAT_IS_MA] == 1
    assert mas[:4] == [0, 1, 2, 0][: len(mas[:4])] and len(mas) >= 2
    assert all(b == (a + 1) % 3 for a, b in zip(mas, mas[1:]))


def _exhaust(env, g, round_, tokens, n=4):
    hands = ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger",
             "R3 R4 B3 B5 G2 G1 Solstice Summer Love Sorrow", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"]
    set_table(g, hands[:n], draw_top=[], pile_is_only=True, tokens=tokens, round=round_, ma=(round_ - 1) % n)
    g.current_player = 0
    play(env, "discard Fear")


@pytest.mark.parametrize("n,limit", [(4, 8), (3, 9)])
def test_game_ends_after_the_round_limit(n, limit):
    env, g = fresh(n)
    tokens = [12, 10, 8, 10][:n]
    _exhaust(env, g, limit - 1, tokens, n)
    assert not g.game_over and g.round == limit
    _exhaust(env, g, limit, tokens, n)
    assert g.game_over and all(env.terminations.values())
    assert env.last_event["final_ranks"]["player_0"] == 1


def test_tied_leaders_play_extra_rounds_at_most_three_then_the_tie_stands():
    env, g = fresh()
    tied = [12, 12, 8, 8]
    _exhaust(env, g, 8, tied)
    assert not g.game_over and g.round == 9  # extra round 1
    _exhaust(env, g, 10, tied)
    assert not g.game_over and g.round == 11  # extra round 3 comes
    _exhaust(env, g, 11, tied)
    assert g.game_over
    ranks = env.last_event["final_ranks"]
    assert ranks["player_0"] == ranks["player_1"] == 1 and ranks["player_2"] == 3


def test_an_extra_round_that_breaks_the_tie_ends_the_game():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER,
         "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"],
        draw_top=["Summer"],
        tokens=[12, 12, 8, 8],
        round=9,
    )
    play(env, "discard Fear")
    assert g.game_over and g.tokens == [8, 20, 6, 6]


def test_game_ends_when_a_player_has_no_tokens():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER,
         "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"],
        draw_top=["Summer"],
        tokens=[9, 10, 2, 19],
        round=2,
    )
    play(env, "discard Fear")
    assert g.game_over and g.tokens == [5, 18, 0, 17]
    assert env.last_event["final_ranks"] == {"player_0": 3, "player_1": 1, "player_2": 4, "player_3": 2}


# -- masks and hidden information over random play ---------------------------------------


@pytest.mark.parametrize("steal_phase", ["every_player", "eligible"])
@pytest.mark.parametrize("n", [3, 4])
def test_mask_and_who_is_asked_equal_brute_force(n, steal_phase):
    checked = steal_phases = pass_only = 0
    for seed in range(6):
        env = not_your_mas_jong_v0.raw_env(num_players=n, steal_phase=steal_phase)
        g = env.unwrapped.game
        expected_askers: list[int] = []
        for agent, obs, action in play_random_game(env, seed):
            if action is None:
                continue
            seat = int(agent.split("_")[1])
            got = {env.unwrapped.action_name(int(a)) for a in np.flatnonzero(obs["action_mask"])}
            assert got == brute_legal(g), f"seed {seed}: {got} != {brute_legal(g)}"
            if g.phase == STEAL:
                assert expected_askers and expected_askers.pop(0) == seat
                steal_phases += 1
                pass_only += got == {"pass"}
            else:
                assert not expected_askers, "a player with a legal steal was not asked"
            checked += 1
            if g.phase != STEAL and action < NUM_TYPES:
                # Every later seat (with "eligible": every later seat with a legal steal on this
                # discard) must be asked, in seat order.
                expected_askers = []
                for r in range(1, n):
                    s = (seat + r) % n
                    g2 = copy.copy(g)
                    g2.phase, g2.current_player, g2.current_discard = STEAL, s, action
                    g2.hands = list(g.hands)
                    g2.hands[seat] = list(g.hands[seat])
                    g2.hands[seat][action] -= 1
                    if steal_phase == "every_player" or brute_legal(g2) != {"pass"}:
                        expected_askers.append(s)
    assert checked > 2000 and steal_phases > 100
    # Pass-only decisions happen exactly when everyone is asked.
    assert (pass_only > 100) if steal_phase == "every_player" else pass_only == 0


def test_observation_layout_is_seat_relative():
    env, g = fresh()
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", WAITING_ON_SUMMER, JUNK_3, tokens=[7, 10, 11, 12])
    play(env, "discard Summer")
    obs = env.observe("player_1")["observation"]
    summer = parse_card("Summer")
    assert list(obs[:NUM_TYPES]) == g.hands[1]
    assert obs[OBS_DISCARD + summer] == 1 and obs[OBS_PHASE] == 1
    block = obs[OBS_SEATS:].reshape(4, SEAT_BLOCK)
    # seat r = 3 from player_1 is player_0: the Ma and the discarder
    assert block[3, SEAT_DISCARDS + summer] == 1 and block[3, SEAT_IS_MA] == 1 and block[3, SEAT_TOKENS] == 7
    assert list(block[:, SEAT_TOKENS]) == [10, 11, 12, 7]


def test_cards_are_conserved_through_random_games():
    for n in (3, 4):
        env = not_your_mas_jong_v0.raw_env(num_players=n)
        g = env.unwrapped.game
        for i, _ in enumerate(play_random_game(env, seed=n + 20)):
            if i % 5 == 0 and not g.game_over:
                assert sorted(sum(g.card_places().values(), [])) == sorted(DECK)


# -- deals, options, rendering ------------------------------------------------------------

GOOD_HANDS = [cards("Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter"), cards("R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger"),
              cards("R3 R4 B3 B5 G2 G1 Solstice Summer Love Sorrow"), cards("R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice")]


@pytest.mark.parametrize(
    "deal,message",
    [
        ({"hands": GOOD_HANDS[:3]}, "4 hands"),
        ({"hands": [GOOD_HANDS[1]] + GOOD_HANDS[1:]}, "hands\\[0\\] has 10 cards; the Ma's hand has 11"),
        ({"hands": GOOD_HANDS[:1] + [GOOD_HANDS[0]] + GOOD_HANDS[2:]}, "hands\\[1\\] has 11 cards"),
        ({"hands": GOOD_HANDS, "draw_pile": ["Love"]}, "Love x4"),
        ({"hands": GOOD_HANDS[:3] + [GOOD_HANDS[3][:-1] + ["Purple 9"]]}, "Purple 9"),
        ({"hands": GOOD_HANDS, "discards": []}, "discards"),
        ("R1 R2", "must be a dict"),
    ],
)
def test_bad_deals_are_rejected_with_the_reason(deal, message):
    env = not_your_mas_jong_v0.env()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"deal": deal})


def test_stacked_deal_fixes_hands_and_the_top_of_the_draw_pile():
    env, g = fresh(deal={"hands": GOOD_HANDS, "draw_pile": ["Fear", "Red 1"]})
    assert [CARD_NAMES[k] for k in g.draw[-2:][::-1]] == ["Fear", "Red 1"]
    assert sorted(g.hand_names(0)) == sorted(CARD_NAMES[parse_card(c)] for c in GOOD_HANDS[0])
    assert sorted(sum(g.card_places().values(), [])) == sorted(DECK)


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="from 3 to 4"):
        not_your_mas_jong_v0.env(num_players=2)
    with pytest.raises(ValueError, match="from 3 to 4"):
        not_your_mas_jong_v0.env(num_players=5)
    with pytest.raises(ValueError, match="tokens"):
        not_your_mas_jong_v0.env(tokens=20)


def test_render_names_cards_and_the_discard_up_for_stealing():
    env = not_your_mas_jong_v0.env(render_mode="ansi")
    env.reset(seed=0)
    g = env.unwrapped.game
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", WAITING_ON_SUMMER, JUNK_3)
    env.step(env.unwrapped.action_from_name("discard Summer"))
    text = env.render()
    assert "Summer from player_0" in text and "Ma player_0" in text and "Spring" in text


# -- golden playthrough --------------------------------------------------------------------

GOLDEN_DEAL = {"hands": GOOD_HANDS, "draw_pile": ["Summer", "Fear", "Red 3", "Spring"]}


def test_golden_playthroughs_are_whole_games_with_steals_and_payments():
    # tests/test_playthroughs.py replays them; seed 2030 for the default rules, 2027 with
    # steal_phase="eligible" (random play wins no round from this deal with 2027 by default)
    for name, rules in (("not_your_mas_jong_4p_deal", {}), ("not_your_mas_jong_4p_deal_eligible", {"steal_phase": "eligible"})):
        text = (GOLDEN / f"{name}.txt").read_text()
        header, actions = read_playthrough(text)
        names = [a for a in actions if a]
        assert header["options"]["deal"] == GOLDEN_DEAL and header["rule_options"] == rules and len(names) > 300
        assert any(a.startswith("steal") for a in names) and "pass" in names
        assert "  event: " in text  # tokens were paid


# -- the heuristic -------------------------------------------------------------------------


def test_heuristic_plays_legal_moves_and_beats_random():
    from agents.base import RandomAgent
    from agents.heuristic.not_your_mas_jong import NotYourMasJongHeuristic

    totals = {"heuristic": [], "random": []}
    for game in range(8):
        n = 3 + game % 2
        env = not_your_mas_jong_v0.raw_env(num_players=n)
        seat = game % n
        bots = [
            NotYourMasJongHeuristic("not_your_mas_jong", n, game) if s == seat else RandomAgent("not_your_mas_jong", n, s)
            for s in range(n)
        ]
        env.reset(seed=100 + game)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else bots[int(agent.split("_")[1])].act(obs)
            assert action is None or obs["action_mask"][action] == 1
            env.step(action)  # raw_env raises on an illegal move
        tokens = env.unwrapped.game.tokens
        totals["heuristic"].append(tokens[seat])
        totals["random"] += [t for s, t in enumerate(tokens) if s != seat]
    assert np.mean(totals["heuristic"]) > np.mean(totals["random"]) + 5


def test_heuristic_steals_to_win_and_for_a_set_only_when_it_helps():
    from agents.heuristic.not_your_mas_jong import NotYourMasJongHeuristic

    bot = NotYourMasJongHeuristic("not_your_mas_jong", 4, 0)
    env, g = fresh()
    _steal_table(g, "Spring Autumn R4 R4 B5 G4 Love Anger Sorrow Joy", "R1 R2 R3 B4 B4 B4 G3 G3 Summer Summer", JUNK_3)
    play(env, "discard Summer")
    # player_1: Spring Summer Autumn makes a set from a ragged hand: steal
    assert env.unwrapped.action_name(bot.act(env.observe("player_1"))) == "steal as middle"
    play(env, "pass")
    # player_2 could claim an identical set, but the card wins: steal win
    assert env.unwrapped.action_name(bot.act(env.observe("player_2"))) == "steal win"
    # a set steal that gains nothing is refused: player_1 waits on Green 3, and taking the
    # Red 2 as the middle of Red 1 Red 3 would only swap one set for another
    env, g = fresh()
    set_table(
        g,
        ["R2 Solstice Winter B3 B3 G5 Anger Sorrow Fear Fear Fear", "R1 R2 R3 B1 B1 B1 G1 G2 Love Love",
         "B2 B2 G2 G3 Spring Summer Autumn Love Joy Anger", "R5 R5 B5 B5 G4 G4 Spring Summer Joy Joy"],
    )
    play(env, "discard Red 2")
    assert env.agent_selection == "player_1" and legal_names(env) == {"pass", "steal as middle"}
    assert env.unwrapped.action_name(bot.act(env.observe("player_1"))) == "pass"


# -- the tie-break at any end -------------------------------------------------------------


def test_tied_leaders_play_on_when_a_player_runs_out_of_tokens_and_it_pays_nothing():
    env, g = fresh()
    set_table(
        g,
        ["Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER,
         "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger", "R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice"],
        draw_top=["Summer"],
        tokens=[9, 10, 2, 20],
        round=2,
    )
    play(env, "discard Fear")
    # player_1 wins by draw: player_2 pays its last 2 tokens, and player_1 and player_3 tie on 18.
    assert g.tokens == [5, 18, 0, 18] and not g.game_over and g.round == 3
    assert "(extra round 1)" in g.view(2) and not any(env.terminations.values())
    # In the extra round player_2 is still seated; player_3 wins by draw and player_2 pays nothing.
    set_table(
        g,
        ["R5 R5 B1 B3 G1 G4 Spring Autumn Sorrow Solstice", "R2 R4 B3 B5 G2 G4 Solstice Joy Love Anger",
         "Fear R1 R5 B1 B2 G5 G5 Love Joy Spring Winter", WAITING_ON_SUMMER],
        current=2, ma=1, draw_top=["Summer"], tokens=[5, 18, 0, 18], round=3,
    )
    play(env, "discard Fear")
    assert g.game_over and g.tokens == [3, 14, 0, 24]
    assert env.last_event["score_changes"] == {"player_0": -2, "player_1": -4, "player_2": 0, "player_3": 6}
    assert env.last_event["final_ranks"] == {"player_0": 3, "player_1": 2, "player_2": 4, "player_3": 1}


def test_after_a_player_runs_out_a_tie_stands_after_three_extra_rounds():
    env, g = fresh()
    tied = [0, 14, 14, 12]
    _exhaust(env, g, 2, tied)  # the game ends here (a player has no tokens), but the leaders are tied
    for extra in (1, 2):
        assert not g.game_over and g.round == 2 + extra
        _exhaust(env, g, 2 + extra, tied)
    assert not g.game_over and g.round == 5 and "(extra round 3)" in g.render()
    _exhaust(env, g, 5, tied)
    assert g.game_over
    ranks = env.last_event["final_ranks"]
    assert ranks["player_1"] == ranks["player_2"] == 1 and ranks["player_0"] == 4
