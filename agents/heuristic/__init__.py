"""Heuristic agents, one file per game; each docstring describes its strategy."""

from __future__ import annotations

import importlib

# game -> "module:Class": imported on first use, so a game's heuristic costs nothing until it plays.
HEURISTICS = {
    "not_for_me": "agents.heuristic.not_for_me:NotForMeHeuristic",
    "deadfall": "agents.heuristic.deadfall:DeadfallHeuristic",
    "neu": "agents.heuristic.neu:NeuHeuristic",
    "not_your_mas_jong": "agents.heuristic.not_your_mas_jong:NotYourMasJongHeuristic",
}


def heuristic_class(game: str):
    if game not in HEURISTICS:
        raise ValueError(f"no heuristic for game {game!r}; games: {', '.join(HEURISTICS)}")
    module, cls = HEURISTICS[game].split(":")
    return getattr(importlib.import_module(module), cls)
