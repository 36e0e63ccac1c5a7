"""One seat's view of a game, as the web page shows it: frames, moves by the names that seat may
see, hands as card names and a round's result.

What a seat sees is what the terminal player shows a human at that seat: the engine's
``view(seat)`` (its own hand and the public table), its own moves by name and everyone else's
moves as the table sees them (``public_action_name``). The spectator (``render()``: every hand)
is a view of its own, asked for by name.
"""

from __future__ import annotations

import re

import numpy as np

from experiments import replay as replay_format
from experiments.web.http import ApiError


def parse_view(text: str | None, num_players: int) -> int | str:
    """A seat number (``"2"`` or ``"player_2"``) or ``"spectator"``; seat 0 when not given."""
    if text is None:
        return 0
    t = text.strip().lower()
    if t == "spectator":
        return "spectator"
    m = re.fullmatch(r"(?:player_)?([0-9]{1,3})", t)  # ASCII digits only: "²".isdigit() is True
    if m and int(m.group(1)) < num_players:
        return int(m.group(1))
    raise ApiError(400, f"view must be a seat from 0 to {num_players - 1} or 'spectator', got {text[:40]!r}")


# Decisions whose *taker* is a secret (the engine's `secret_actions`, also in `envs.info`): in
# Not Your Ma's Jong who is asked about a discard can tell about a hand. A seat's view shows
# such decisions of the others without their seats, merged into one step per discard, and
# never says who is to act while they are pending.
def secret_turn(engine) -> bool:
    """The player to act makes a decision whose seat is kept from the others."""
    if engine.game_over or not engine.secret_actions:
        return False
    legal = np.flatnonzero(engine.legal_mask())
    return legal.size > 0 and all(int(a) in engine.secret_actions for a in legal)


def shown_move(engine, seat: int, action: int, view: int | str) -> dict:
    """`seat`'s move as `view` sees it, named from the table *before* the move (Not For Me's offer
    counts the cards it takes): by its full name for the one who made it and for the spectator,
    by its public name for the others, without the seat for a secret action (``"seat": None``)."""
    if view == "spectator" or view == seat:
        return {"seat": seat, "name": engine.action_name(action, seat)}
    return {"seat": None if action in engine.secret_actions else seat, "name": engine.public_action_name(action, seat)}


def shows_frame(engine_after, move: dict, view: int | str) -> bool:
    """Whether `view` gets a frame for `move`: another seat's secret decision shows only once
    the decisions on that discard are over (its outcome), not one frame per player asked."""
    return move["seat"] is not None or not secret_turn(engine_after)


def frame(engine, view: int | str, step: int, move: dict | None) -> dict:
    """What `view` sees at its `step`-th frame; `move` (from `shown_move`) is the move that led here."""
    over = bool(engine.game_over)
    hide_actor = view != "spectator" and secret_turn(engine)
    return {
        "step": step,
        "move": move,
        "text": engine.render() if view == "spectator" else engine.view(view),
        # the hands this view may see, as card names (null for the others)
        "hands": [engine.hand_cards(s) if view in ("spectator", s) else None for s in range(engine.num_players)],
        "to_act": None if over or hide_actor else int(engine.current_player),
        "over": over,
        "result": {"scores": [int(s) for s in engine.scores], "ranks": [int(r) for r in engine.ranks()]} if over else None,
    }


def replay_frames(rep: replay_format.Replay, view: int | str) -> list[dict]:
    """`view`'s frames of a replay. A move that ends a round brings the round's result (its
    public facts and score changes); the hands as the round ended only to the spectator."""
    frames, shown, rounds, hands = [], None, [], None
    for step, (engine, _, event) in enumerate(rep.steps()):
        if event is not None:
            rounds.append(round_result(engine, event, hands if view == "spectator" else None))
        if shown is None or shows_frame(engine, shown, view):
            frames.append(frame(engine, view, len(frames), shown))
            if rounds:
                frames[-1]["rounds"], rounds = rounds, []
        if step < len(rep.moves):
            shown = shown_move(engine, *rep.moves[step], view)  # the next move, named before it is made
            hands = [engine.hand_cards(s) for s in range(engine.num_players)] if view == "spectator" else None
    return frames


def round_result(engine, event, hands: list[list[str]] | None) -> dict:
    """A round's end in the game's words: the engine's sentence about it, each seat's score
    change, the engine's facts about the round (seats as player_k, codes by name; public once
    the round is over) and the hands as the round ended (None where they are not shown)."""
    facts = {}
    for k, v in event.details.items():
        if k in engine.INFO_SEATS:
            facts[k] = f"player_{v}" if v >= 0 else None
        elif k in engine.INFO_CODES:
            facts[k] = engine.INFO_CODES[k][v]
        elif isinstance(v, (list, tuple, np.ndarray)):
            facts[k] = [int(x) for x in v]
        else:
            facts[k] = int(v) if isinstance(v, (int, np.integer)) else v
    return {"sentence": engine.event_sentence(event.details), "changes": [int(d) for d in event.deltas], "scores": [int(x) for x in engine.scores], "facts": facts, "hands": hands}

