"""Hypothesis profiles for the whole suite, and the game/player-count grid.

* ``ci`` (the default): few examples, derandomized, so the suite stays well
  under 10 minutes on 2 cores and a CI failure reproduces exactly.
* ``large``: many random examples, for a long run by hand:
  ``HYPOTHESIS_PROFILE=large python -m pytest tests/test_properties.py tests/test_leaks.py tests/test_fuzz.py``.

Expensive property tests (each example plays a whole game) ask `scaled(k)`
for their example count: k under ``ci``, 40·k under ``large``.
"""

from __future__ import annotations

import multiprocessing
import os

import pytest
from hypothesis import HealthCheck, settings

import envs

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]

settings.register_profile("ci", max_examples=20, deadline=None, derandomize=True, print_blob=True, suppress_health_check=_SLOW_OK)
settings.register_profile("large", max_examples=1000, deadline=None, print_blob=True, suppress_health_check=_SLOW_OK)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


@pytest.fixture(autouse=True)
def keep_the_start_method():
    """Importing torchrl sets multiprocessing's start method to "spawn" for the whole process;
    every test gets the platform's default back, whichever test imported it first."""
    before = multiprocessing.get_start_method(allow_none=True)
    yield
    multiprocessing.set_start_method(before, force=True)


def scaled(k: int) -> int:
    """Examples for a test whose every example plays a whole game."""
    return k if PROFILE == "ci" else 40 * k


def player_counts(game: str) -> range:
    engine_cls = envs.engine_class(game)
    return range(engine_cls.min_players, engine_cls.max_players + 1)


# Every game at every player count: new games join automatically.
GAMES = list(envs.GAMES)
GAME_COUNTS = [(g, n) for g in GAMES for n in player_counts(g)]


def pytest_configure(config):
    # Tests marked xdist_group share expensive state (test_ray's simulated cluster), so that
    # `-n 2` keeps each group in one worker; unmarked tests are spread as before.
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
