"""Search agents' spec options: ``"pimc:worlds=16,choice=max"`` -> keyword arguments, checked.

One checker per option, shared by the spec parser and the agents' constructors, so that a
spec and a Python call refuse the same values with the same words. `SEARCH_OPTIONS` holds
every search kind's options and defaults; `OPTION_KEYS` every option name of any kind
(what a command line needs to keep a search agent's options together).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.search.evaluators import EVALUATORS
from agents.search.rollout import HORIZONS

MAX_WORLDS = 4096  # worlds a decision may sample: each is a whole game held in memory
MAX_ITERATIONS = 1 << 20  # ismcts iterations a decision may run: each adds a tree node
CHOICES = ("safe", "max")
PILES = ("known", "shuffled")  # pimc_cheat: the draw pile's order seen, or shuffled in every world
# pimc: worlds drawn uniformly, weighted by the others' public moves, walked towards the policy's
# hands, or drawn from chains that replay the round's record with the policy in the other seats
BELIEFS = ("uniform",)  # the others measured no gain and left (lab/log/2026-12.md)

COMMON = {"ms": None, "rollout": "heuristic", "horizon": "round", "evaluator": "batched"}
PIMC = {"worlds": None, "choice": "safe", "z": None, "belief": "uniform", **COMMON}  # None: pimc's defaults for the game
ISMCTS = {"iterations": None, "c": 0.7, "batch": 12, **COMMON}
SEARCH_OPTIONS = {"pimc": PIMC, "pimc_cheat": {**PIMC, "pile": "known"}, "ismcts": ISMCTS}
OPTION_KEYS = tuple(dict.fromkeys(k for options in SEARCH_OPTIONS.values() for k in options))


def _whole(kind: str, key: str, value: Any, low: int, high: int) -> int:
    # ASCII digits only: "٣" is not a second spelling (and label) of 3.
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{kind}: {key} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def _number(kind: str, key: str, value: Any, positive: bool) -> float:
    what = "a number above 0" if positive else "a number of 0 or more"
    try:
        x = float(value) if not isinstance(value, bool) and (not isinstance(value, str) or value.isascii()) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        raise ValueError(f"{kind}: {key} must be {what}, got {value!r}")
    return x


def check_option(kind: str, key: str, value: Any) -> Any:
    """`value` (a spec's text or a Python value) as option `key` of search kind `kind`; ValueError names it."""
    if value is None and SEARCH_OPTIONS[kind].get(key, 0) is None:
        return None  # the options whose default is "not given"
    if key == "worlds":
        return _whole(kind, key, value, 1, MAX_WORLDS)
    if key == "iterations":
        return _whole(kind, key, value, 1, MAX_ITERATIONS)
    if key == "batch":
        return _whole(kind, key, value, 1, 4096)
    if key == "ms":
        return _number(kind, key, value, positive=True)
    if key in ("z", "c"):
        return _number(kind, key, value, positive=False)
    for name, valid in (("choice", CHOICES), ("horizon", HORIZONS), ("evaluator", EVALUATORS), ("pile", PILES),
                        ("belief", BELIEFS)):
        if key == name and value not in valid:
            raise ValueError(f"{kind}: {key} must be one of {', '.join(valid)}, got {value!r}")
    return value


def parse_search_options(text: str, kind: str = "pimc") -> dict:
    """``"worlds=64,horizon=game"`` -> `kind`'s options (with defaults); ValueError names a bad one."""
    options = dict(SEARCH_OPTIONS[kind])
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in options:
            raise ValueError(f"{kind}: bad option {part!r}; valid options: {', '.join(f'{k}=' for k in options)}")
        options[key] = check_option(kind, key, value)
    return options
