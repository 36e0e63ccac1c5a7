"""experiments.play: a human seat sees only its own view, bad input is asked again."""

from __future__ import annotations

import subprocess
import sys

import pytest

from experiments.play import parse_humans, play


def scripted(answers):
    it = iter(answers)

    def read(prompt):
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read


def test_human_sees_own_hand_and_legal_moves_and_is_asked_again():
    out = []
    play("neu", 4, {0}, "random", seed=1, read=scripted(["nonsense", "42", "0"]), write=out.append)
    text = "\n".join(out)
    assert "Your hand: 2, 4, -10" in text
    assert "Your moves: [0] play 2  [1] play 4  [2] play -10" in text
    assert text.count("is not one of your moves") == 2
    assert "player_0: play 2" in text


def test_human_never_sees_other_hands():
    out = []
    play("neu", 4, {0}, "random", seed=1, read=scripted(["0"]), write=out.append)
    first_view = out[1]
    assert "hand [" not in first_view  # render()'s spectator lines list every hand
    assert first_view.count("Your hand") == 1


def test_watching_bots_plays_a_whole_game():
    out = []
    final = play("neu", 3, set(), "random", seed=2, write=out.append)
    assert final is not None and sorted(final["final_ranks"].values())[0] == 1
    assert out[-1].startswith("Game over. Ranking:")


@pytest.mark.parametrize(
    "args,message",
    [
        (["--game", "chess"], "valid games"),
        (["--game", "neu", "--players", "9"], "2 to 7"),
        (["--game", "neu", "--human", "7"], "seat numbers 0..3"),
        (["--game", "neu", "--bots", "genius"], "valid kinds"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_2(args, message):
    r = subprocess.run([sys.executable, "-m", "experiments.play", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert parse_humans("none", 4) == set()


def test_secret_moves_of_bots_stay_secret_from_the_human():
    import re

    out = []
    play("not_for_me", 4, {1}, "heuristic", seed=3, read=scripted(["0"] * 40), write=out.append)
    bot_lines = [line for line in out if re.match(r"player_[023]: ", line)]
    assert any("for you:" in line for line in bot_lines), "expected bots to make For You offers"
    assert not any(re.search(r"for you \d+s", line) for line in bot_lines), "a bot's offered number leaked"
    out = []
    play("deadfall", 4, {1}, "heuristic", seed=3, read=scripted(["0"] * 3), write=out.append)
    assert out[1] == "player_0: places a door card face down"
    assert "door card face down: ?" in out[2]
