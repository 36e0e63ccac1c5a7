"""Golden playthroughs (`tests/golden/*.txt`): recorded games, replayed action by action.

Each file is readable text (see `tests.helpers.playthrough`): per step the acting
agent's view, its legal moves, the action, the event and the rewards, with
digests of the observation, mask and infos. A change in the rules, the
observation layout, the infos or the rewards makes the replay differ, and the
failure shows the first differing lines as a diff.
"""

from __future__ import annotations

import pytest

import envs
from tests.helpers import GOLDEN, check_playthrough, read_playthrough

FILES = sorted(GOLDEN.glob("*.txt"))


def test_every_game_has_a_golden_playthrough():
    assert {read_playthrough(f.read_text())[0]["game"] for f in FILES} == set(envs.GAMES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden_playthrough_replays(path):
    text = path.read_text()
    check_playthrough(text)
    assert "(the game goes on" not in text and "refused:" not in text  # a whole game, every move legal


@pytest.mark.filterwarnings("ignore:.*made an illegal move")  # the later recorded moves may no longer be legal
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_changed_move_shows_as_a_diff(path):
    # Play another legal move at the first step with a choice: the replay must differ, and say so
    # with the recorded and the replayed lines.
    blocks = path.read_text().split("\n\nstep ")
    i, block = next((i, b) for i, b in enumerate(blocks[1:], 1) if "  legal: " in b and ", " in b.split("  legal: ")[1].split("\n")[0])
    legal = block.split("  legal: ")[1].split("\n")[0].split(", ")
    played = block.split("  action: ")[1].split("\n")[0]
    other = next(m for m in legal if m != played)
    blocks[i] = block.replace(f"  action: {played}\n", f"  action: {other}\n")
    with pytest.raises(AssertionError, match="the replay differs from the recording") as e:
        check_playthrough("\n\nstep ".join(blocks))
    assert "--- recorded" in str(e.value) and "+++ replayed" in str(e.value)
