"""experiments.play: a human seat sees only its own view, bad input is asked again."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import envs

from experiments.play import RULES, parse_humans, play, rules_for_players, rules_text


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
    assert ", hand " not in first_view  # render()'s spectator lines list every hand
    assert first_view.count("Your hand") == 1


def test_watching_bots_plays_a_whole_game():
    out = []
    final = play("neu", 3, set(), "random", seed=2, write=out.append)
    assert final is not None and sorted(final["final_ranks"].values())[0] == 1
    assert out[-1].startswith("Game over. Ranking:")


def test_search_bots_are_told_their_information_state_and_play_with_a_human():
    # pimc cannot move without inform(): play() must hand it the seat's information state.
    out = []
    final = play("deadfall", 4, {0}, "pimc:worlds=2", seed=5, read=scripted(["0"] * 60), write=out.append)
    assert final is not None and out[-1].startswith("Game over. Ranking:")


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
    out = []
    play("not_for_me", 4, {1}, "heuristic", seed=3, read=scripted(["0"] * 40), write=out.append)
    bot_lines = [line for line in out if re.match(r"player_[023]: ", line)]
    assert any("for you:" in line for line in bot_lines), "expected bots to make For You offers"
    assert not any(re.search(r"for you \d+s", line) for line in bot_lines), "a bot's offered number leaked"
    out = []
    play("deadfall", 4, {1}, "heuristic", seed=3, read=scripted(["0"] * 3), write=out.append)
    assert out[1] == "player_0: places a door card face down"
    assert "door card face down: ?" in out[2]


def test_any_input_that_is_not_a_move_asks_again():
    out = []
    # "²" passes str.isdigit() but not int(); 5,000 digits are past int()'s limit.
    play("neu", 4, {0}, "random", seed=1, read=scripted(["²", "9" * 5000, "-1", "", "0"]), write=out.append)
    text = "\n".join(out)
    assert text.count("is not one of your moves") == 4
    assert "player_0: play 2" in text
    assert max(len(line) for line in out) < 400  # the 5,000 digits are not echoed back


def run_play(args, stdin="", timeout=60, **kw):
    return subprocess.run([sys.executable, "-m", "experiments.play", *args], input=stdin, capture_output=True, text=True, timeout=timeout, **kw)


def test_eof_and_ctrl_c_leave_with_one_line():
    r = run_play(["--game", "neu", "--human", "0"], stdin="")
    assert r.returncode == 0 and r.stdout.strip().splitlines()[-1] == "Left the game." and r.stderr == ""
    import signal
    import time

    import os
    import select

    # As from a terminal: Ctrl-C is not ignored (a shell starts background jobs, and so this suite
    # when run with `&`, with SIGINT ignored, and a child keeps that).
    p = subprocess.Popen([sys.executable, "-m", "experiments.play", "--game", "neu", "--human", "0"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # Ctrl-C while it waits at the prompt (input() flushes the prompt; a busy machine may take long to get there).
        seen, deadline = b"", time.monotonic() + 60
        while not seen.rstrip(b" ").endswith(b">") and time.monotonic() < deadline and p.poll() is None:
            if select.select([p.stdout], [], [], 1)[0]:
                seen += os.read(p.stdout.fileno(), 4096)
        assert b"Your moves" in seen, seen[-300:]
        # A signal that lands between input() flushing its prompt and its read() only sets Python's flag
        # (the read then blocks); a person presses Ctrl-C later than that, so ask again if it is still
        # there. stdin stays open until it has left: an EOF must not beat the signal.
        for _ in range(6):
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                pass
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 130 and "Traceback" not in err
    assert (seen.decode() + out).strip().splitlines()[-1] == "Left the game."


@pytest.mark.parametrize("args", [["--delay", "-1"], ["--delay", "nan"], ["--seed", "-1"], ["--players", "²"]])
def test_delay_seed_and_players_are_checked(args):
    r = run_play(["--game", "neu", "--human", "none", *args])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_steal_decisions_are_never_named_by_seat():
    out = []
    play("not_your_mas_jong", 4, {0}, "heuristic", seed=4, read=scripted(["0"] * 400), write=out.append)
    text = "\n".join(out)
    assert "Game over" in text or "Left the game" in text
    assert not re.search(r"player_\d: (decides on the steal|pass|steal)", text)
    # The note follows every discard, whoever could steal it, so its count says nothing about hands.
    discards = [line for line in out if re.match(r"player_\d: discard ", line)]
    assert len(discards) > 5
    notes = [i for i, line in enumerate(out) if line == "  the others may steal it; their decisions are secret"]
    assert len(notes) == len(discards)


def test_help_and_rules_commands_and_the_prompt_names_quit():
    prompts, out = [], []
    answers = iter(["help", "rules", "rules full", "0"])

    def read(prompt):
        prompts.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    play("deadfall", 4, {0}, "random", seed=3, read=read, write=out.append)
    text = "\n".join(out)
    assert all("quit" in p and "help" in p and "rules" in p for p in prompts)
    assert "rules       the rules of deadfall" in text and "quit        leave the game" in text
    assert text.count("## 2. Deadfall — `deadfall`") == 2 and "Door cards" in text  # its section of docs/RULES.md
    assert text.count("**[D]**") == RULES.read_text().split("## 3.")[0].split("## 2.")[1].count("**[D]**") > 0  # full only
    assert "Not For Me" not in text  # only this game's section
    assert "is not one of your moves" not in text  # help and rules are commands, not bad moves
    assert text.count("Your moves: ") == 5  # asked again after help and after each rules, then the next turn
    assert "player_0: play 2" in text


@pytest.mark.parametrize("game", envs.GAMES)
def test_the_players_rules_drop_the_references_markers_and_source_notes_and_nothing_else(game):
    players, reference = rules_for_players(game), rules_text(game)
    assert "[D]" in reference or "original" in reference  # there is something to drop
    for note in ("[D]", "the original", "published", "Seed", "cardzoo"):
        assert note not in players, note
    assert not re.search(r"\s[.,;]|\S {2,}\S", players)  # no gap where a note was
    # What is left is the reference's own words in its own order (the two renamings aside), and most of them.
    words = re.findall(r"\w+", players.replace("Their cards are", "").replace("Examples", "Seed examples"))
    ref = iter(re.findall(r"\w+", reference))
    assert all(w in ref for w in words), "the players' rules say something the reference does not"
    assert len(words) > 0.85 * len(re.findall(r"\w+", reference))
