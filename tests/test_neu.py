"""Neu: one test per rule of RULES.md §3, the seed's worked example, brute-force masks."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from envs import neu_v0
from envs.neu import COPIES, DECK, KIND_NAMES, NUM_KINDS, Neu, parse_card
from tests.helpers import GOLDEN, play_random_game, read_playthrough

SEED_DEAL = {
    # player_0 = Hiroshi (博, dealer), player_1 = Masako (雅子), player_2 = Koichi (浩一),
    # player_3 = Yoshiko (美子): the seat order of neu.ja.txt's worked example.
    "hands": [["7", "-10", "pass"], ["10", "10", "double"], ["50", "shot", "turn"], ["101", "8", "6"]],
    "draw_pile": ["50", "-1", "5", "3", "9", "1", "4", "2", "6", "8", "7", "7"],
}


def fresh(n=4, seed=0, deal=None, env_fn=neu_v0.raw_env):
    env = env_fn(num_players=n)
    env.reset(seed=seed, options=None if deal is None else {"deal": deal})
    return env, env.unwrapped.game


def play(env, name):
    env.step(env.unwrapped.action_from_name(name))


def hand(game, seat):
    return Counter(game.hand_names(seat))


def set_table(game, hands, total=0, current=0, owed=1, direction=1, draw_top=()):
    """Put the engine in a chosen position; cards not named go to the draw pile under draw_top."""
    named = [parse_card(c) for h in hands for c in h] + [parse_card(c) for c in draw_top]
    left = Counter(DECK)
    left.subtract(named)
    assert min(left.values()) >= 0
    game.hands = [[0] * NUM_KINDS for _ in hands]
    game.hand_sizes = [0] * len(hands)
    for s, h in enumerate(hands):
        for c in h:
            game._give(s, parse_card(c))
    game.draw = sorted(left.elements()) + [parse_card(c) for c in reversed(draw_top)]
    game.played, game.played_counts = [], [0] * NUM_KINDS
    game.total, game.current_player, game.owed, game.direction = total, current, owed, direction
    game._mask = game._legal = None


# -- cards and set-up -----------------------------------------------------------


def test_deck_has_58_cards_in_the_published_mix():
    counts = Counter(KIND_NAMES[k] for k in DECK)
    assert len(DECK) == 58
    assert all(counts[str(v)] == 3 for v in range(1, 10))
    assert (counts["10"], counts["50"], counts["-10"], counts["-1"]) == (6, 2, 4, 2)
    assert (counts["pass"], counts["turn"], counts["shot"], counts["double"], counts["101"]) == (4, 4, 2, 2, 5)
    assert sum(COPIES) == 58


@pytest.mark.parametrize("n", range(2, 8))
def test_setup_deals_three_each_total_zero_player0_first(n):
    env, g = fresh(n, seed=n)
    assert g.hand_sizes == [3] * n
    assert len(g.draw) == 58 - 3 * n
    assert g.total == 0 and g.direction == 1 and g.chips == [3] * n
    assert env.agent_selection == "player_0" and g.dealer == 0


def test_num_players_out_of_range_names_the_range():
    with pytest.raises(ValueError, match="from 2 to 7"):
        neu_v0.env(num_players=8)
    with pytest.raises(ValueError, match="from 2 to 7"):
        neu_v0.env(num_players=1)


# -- card effects ------------------------------------------------------------


def test_number_cards_add_and_must_not_pass_101():
    env, g = fresh()
    set_table(g, [["50", "10", "9"], ["-1", "2", "3"], ["4", "5", "6"], ["7", "8", "-1"]], total=92)
    names = set(env.legal_action_names())
    assert names == {"play 9"}  # 92 + 9 = 101 is allowed, 10 and 50 are not
    play(env, "play 9")
    assert g.total == 101


def test_total_may_go_below_zero():
    env, g = fresh()
    set_table(g, [["-10", "5", "6"], ["-1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=3)
    play(env, "play -10")
    assert g.total == -7
    play(env, "play -1")
    assert g.total == -8


def test_101_card_sets_total_to_101_from_anywhere():
    env, g = fresh()
    set_table(g, [["101", "50", "50"], ["-10", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=-5)
    play(env, "play 101")
    assert g.total == 101


def test_pass_keeps_total_and_moves_on():
    env, g = fresh()
    set_table(g, [["pass", "1", "1"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "pass")
    assert g.total == 40 and env.agent_selection == "player_1"


def test_turn_reverses_direction():
    env, g = fresh()
    set_table(g, [["turn", "1", "1"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "turn")
    assert g.direction == -1 and env.agent_selection == "player_3"
    play(env, "play 7")
    assert env.agent_selection == "player_2"


def test_shot_names_the_next_player_and_keeps_direction():
    env, g = fresh()
    set_table(g, [["shot", "1", "1"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "shot player_2")
    assert env.agent_selection == "player_2" and g.total == 40
    play(env, "play 4")
    assert env.agent_selection == "player_3"


def test_shot_targets_only_players_still_in_the_game():
    env, g = fresh()
    g.chips[2], g.out[2] = 0, True
    set_table(g, [["shot", "1", "1"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    shots = {n for n in env.legal_action_names() if n.startswith("shot")}
    assert shots == {"shot player_1", "shot player_3"}


def test_double_makes_the_next_player_play_twice():
    env, g = fresh()
    set_table(g, [["double", "1", "1"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "double")
    assert env.agent_selection == "player_1" and g.owed == 2
    play(env, "play 1")
    assert env.agent_selection == "player_1" and g.total == 41
    play(env, "play 2")
    assert env.agent_selection == "player_2" and g.total == 43


def test_no_double_on_the_first_of_two_plays_but_allowed_as_second():
    env, g = fresh()
    set_table(g, [["double", "1", "1"], ["double", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "double")
    assert "double" not in env.legal_action_names()
    play(env, "play 2")
    assert "double" in env.legal_action_names()
    play(env, "double")
    assert env.agent_selection == "player_2" and g.owed == 2


def test_only_a_double_on_the_first_of_two_plays_loses():
    env, g = fresh()
    set_table(g, [["double", "1", "1"], ["double", "50", "50"], ["4", "5", "6"], ["7", "8", "9"]], total=60)
    play(env, "double")
    assert g.chips[1] == 2 and env.infos["player_1"]["round_loser"] == 1
    assert env.last_event["round_loser"] == "player_1"


@pytest.mark.parametrize("card,next_player", [("pass", "player_2"), ("turn", "player_0"), ("shot player_3", "player_3")])
def test_pass_turn_or_shot_moves_the_double_obligation(card, next_player):
    env, g = fresh()
    first = card.split()[0]
    set_table(g, [["double", "1", "1"], [first, "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "double")
    play(env, card)
    assert env.agent_selection == next_player and g.owed == 2


def test_pass_as_the_second_play_has_its_normal_effect():
    env, g = fresh()
    set_table(g, [["double", "1", "1"], ["pass", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], total=40)
    play(env, "double")
    play(env, "play 2")
    play(env, "pass")
    assert env.agent_selection == "player_2" and g.owed == 1


# -- drawing -------------------------------------------------------------------


def test_each_play_draws_one_card_from_the_top():
    env, g = fresh(deal={"hands": [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"], ["10", "10", "10"]], "draw_pile": ["50", "-1"]})
    play(env, "play 1")
    assert hand(g, 0) == Counter(["2", "3", "50"])
    play(env, "play 4")
    assert hand(g, 1) == Counter(["5", "6", "-1"])


def test_empty_draw_pile_reshuffles_played_cards_except_the_last():
    env, g = fresh()
    set_table(g, [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"], ["10", "10", "10"]], total=0)
    g.played = g.draw[:5]
    g.draw = []
    play(env, "play 1")
    assert g.played == [parse_card("1")]
    assert len(g.draw) == 5 - 1  # five old cards reshuffled, one drawn at once
    assert g.hand_sizes[0] == 3


def test_nothing_to_shuffle_means_no_draw():
    env, g = fresh()
    set_table(g, [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"], ["10", "10", "10"]], total=0)
    g.draw = []
    play(env, "play 1")
    assert g.hand_sizes[0] == 2 and g.draw == []


# -- losing, elimination, next round, end of game --------------------------------


def test_player_without_a_legal_card_loses_a_chip_and_deals_next_round():
    env, g = fresh()
    set_table(g, [["101", "1", "1"], ["50", "50", "9"], ["4", "5", "6"], ["7", "8", "9"]], total=60)
    play(env, "play 101")
    assert g.chips == [3, 2, 3, 3]
    info = env.infos["player_1"]
    assert info["round_loser"] == 1 and list(info["score_changes"]) == [0, -1, 0, 0] and info["scored"] == 1
    assert env.last_event["round_loser"] == "player_1" and env.last_event["score_changes"]["player_1"] == -1
    # new round: the loser deals and plays first, clockwise from a total of 0
    assert g.round == 2 and g.total == 0 and g.dealer == 1 and env.agent_selection == "player_1"
    assert g.hand_sizes == [3, 3, 3, 3]


def test_losing_rewards_are_zero_sum_among_players_in_the_game():
    env, g = fresh()
    g.chips[3], g.out[3] = 0, True
    set_table(g, [["101", "1", "1"], ["50", "50", "9"], ["4", "5", "6"], []], total=60)
    play(env, "play 101")
    r = env.rewards
    assert r["player_1"] == pytest.approx(-2 / 3)
    assert r["player_0"] == pytest.approx(1 / 3) and r["player_2"] == pytest.approx(1 / 3)
    assert r["player_3"] == 0


def test_player_at_zero_chips_is_out_and_next_player_in_starts():
    env, g = fresh()
    g.chips[1] = 1
    set_table(g, [["101", "1", "1"], ["50", "50", "9"], ["4", "5", "6"], ["7", "8", "9"]], total=60)
    play(env, "play 101")
    # PettingZoo classic: the eliminated player stays in agents, not terminated, never selected.
    assert g.out[1] and "player_1" in env.agents and not env.terminations["player_1"]
    assert env.rewards["player_1"] == pytest.approx(-3 / 4)
    assert [env.infos[a]["eliminated"] for a in env.possible_agents] == [0, 1, 0, 0]
    assert g.dealer == 2 and env.agent_selection == "player_2"
    assert g.hand_sizes[1] == 0
    assert not env.observe("player_1")["action_mask"].any()
    # From then on it gets reward 0 and is skipped until everyone ends together.
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        assert env.agent_selection != "player_1"
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.rewards["player_1"] == 0 and env.infos["player_1"]["eliminated"] == 1
    assert set(env.terminations) == set(env.possible_agents)


def test_last_player_with_chips_wins_the_game():
    env, g = fresh()
    g.chips = [1, 0, 1, 0]
    g.out = [False, True, False, True]
    g.eliminated_at = [4, 0, 4, 1]
    set_table(g, [["101", "1", "1"], [], ["50", "50", "9"], []], total=60)
    play(env, "play 101")
    assert g.game_over
    assert list(env.infos["player_0"]["final_ranks"]) == [1, 4, 2, 3]
    assert env.last_event["final_ranks"]["player_2"] == 2
    assert all(env.terminations.values()) and env.agents == env.possible_agents


def test_players_who_went_out_earlier_rank_lower():
    g = Neu(4)
    g.reset(np.random.default_rng(0))
    g.chips = [2, 0, 0, 0]
    g.eliminated_at = [4, 0, 2, 1]
    assert g.ranks() == [1, 4, 2, 3]


# -- the seed's worked example ----------------------------------------------------


def test_seed_example_round_one():
    """neu.ja.txt 『実戦例』: Hiroshi deals and plays 7; ... Hiroshi loses holding 50, 9, 2.

    Yoshiko forgets to draw in the story; the env always draws, which changes no
    announced total.
    """
    env, g = fresh(deal=SEED_DEAL)
    script = [
        ("player_0", "play 7", 7),
        ("player_1", "play 10", 17),
        ("player_2", "play 50", 67),
        ("player_3", "play 101", 101),
        ("player_0", "play -10", 91),
        ("player_1", "play 10", 101),
        ("player_2", "shot player_0", 101),
        ("player_0", "pass", 101),
        ("player_1", "double", 101),
        ("player_2", "turn", 101),  # first of two: Masako now owes two plays
        ("player_1", "play -1", 100),
        ("player_1", "play 1", 101),
    ]
    for i, (who, move, total) in enumerate(script):
        assert env.agent_selection == who, f"move {i}: expected {who} to play {move}"
        if i == len(script) - 1:
            assert hand(g, 0) == Counter(["50", "9", "2"])
        play(env, move)
        if i < len(script) - 1:
            assert g.total == total, f"after {who} {move} the total should be {total}"
    assert env.infos["player_0"]["round_loser"] == 0 and env.last_event["round_loser"] == "player_0"
    assert env.infos["player_0"]["total"] == 101
    assert g.chips == [2, 3, 3, 3]
    assert env.agent_selection == "player_0" and g.round == 2  # the loser deals and plays first


def test_seed_example_round_two_and_the_final():
    env, g = fresh(deal=SEED_DEAL)
    g.chips[0] = 2
    g.dealer = 0
    set_table(g, [["50", "2", "3"], ["50", "4", "5"], ["1", "6", "7"], ["8", "9", "10"]], total=0)
    for move, total in [("play 50", 50), ("play 50", 100), ("play 1", 101)]:
        play(env, move)
    assert env.infos["player_3"]["round_loser"] == 3 and g.chips[3] == 2
    # Round 11: only Koichi (1 chip) and Masako remain; Masako plays 101.
    env, g = fresh(deal=SEED_DEAL)
    g.chips, g.out = [0, 2, 1, 0], [True, False, False, True]
    set_table(g, [[], ["101", "4", "5"], ["9", "10", "50"], []], total=30, current=1)
    play(env, "play 101")
    assert g.game_over and env.infos["player_1"]["final_ranks"][1] == 1


# -- masks against an independent enumeration ----------------------------------


def brute_force_legal(hand_cards: list[str], total: int, owed: int, me: int, in_game: list[bool]) -> set[str]:
    """Legal move names straight from RULES.md §3, independent of the engine's mask code."""
    legal = set()
    for card in hand_cards:
        if card in ("pass", "turn"):
            legal.add(card)
        elif card == "double":
            if owed != 2:
                legal.add("double")
        elif card == "shot":
            legal |= {f"shot player_{p}" for p, ok in enumerate(in_game) if ok and p != me}
        elif card == "101":
            legal.add("play 101")
        elif total + int(card) <= 101:
            legal.add(f"play {card}")
    return legal


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_mask_equals_brute_force_enumeration(n):
    checked = 0
    for seed in range(40):
        env = neu_v0.raw_env(num_players=n)
        for agent, obs, action in play_random_game(env, seed):
            if action is None:
                continue
            g = env.unwrapped.game
            me = g.current_player
            expected = brute_force_legal(g.hand_names(me), g.total, g.owed, me, [not o for o in g.out])
            got = {env.unwrapped.action_name(int(a)) for a in np.flatnonzero(obs["action_mask"])}
            assert got == expected, f"seed {seed}: {got} != {expected}"
            checked += 1
    assert checked > 1000


# -- hidden information ---------------------------------------------------------------


def test_observation_shows_own_hand_and_nothing_hidden():
    env, g = fresh(deal=SEED_DEAL)
    obs = env.observe("player_1")["observation"]
    assert [obs[k] for k in range(NUM_KINDS)] == [g.hands[1][k] for k in range(NUM_KINDS)]
    rng = np.random.default_rng(0)
    for _ in range(20):
        g.shuffle_hidden(1, rng)
        assert np.array_equal(env.observe("player_1")["observation"], obs)
    # ...while another seat's view does change when player_1's own cards move
    before = env.observe("player_0")["observation"].copy()
    g.shuffle_hidden(0, rng)
    assert not np.array_equal(env.observe("player_1")["observation"], obs) or not np.array_equal(
        env.observe("player_0")["observation"], before
    )


# -- bad deals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "deal,message",
    [
        ({"hands": [["1", "2", "3"]] * 3}, "4 hands"),
        ({"hands": [["1", "2"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]]}, "has 2 cards"),
        ({"hands": [["50", "50", "50"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]]}, "50 x3"),
        ({"hands": [["1", "2", "joker"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]]}, "joker"),
        ({"hands": [["1", "2", "3"], ["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], "draw_pile": ["1", "1"]}, "1 x4"),
        ({"hands": [["1", "2", "3"]] * 4, "discard": []}, "discard"),
        ("1,2,3", "must be a dict"),
        ({"hands": "123"}, "4 hands"),
    ],
)
def test_bad_deals_are_rejected_with_the_reason(deal, message):
    env = neu_v0.env()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"deal": deal})


def test_stacked_deal_puts_unnamed_cards_under_the_named_pile():
    env, g = fresh(deal=SEED_DEAL)
    assert [KIND_NAMES[k] for k in g.draw[-12:][::-1]] == SEED_DEAL["draw_pile"]
    assert sorted(sum(g.card_places().values(), [])) == sorted(DECK)


# -- golden playthrough ------------------------------------------------------------------


def test_golden_playthrough_is_not_trivial():
    # tests/test_playthroughs.py replays it
    header, actions = read_playthrough((GOLDEN / "neu_4p_seed_deal.txt").read_text())
    assert len(actions) > 50 and header["options"]["deal"] == SEED_DEAL


def test_random_legal_games_end():
    rnd = random.Random(0)
    for seed in range(30):
        n = rnd.randint(2, 7)
        steps = sum(1 for _ in play_random_game(neu_v0.raw_env(num_players=n), seed, max_steps=20_000))
        assert steps > 0
