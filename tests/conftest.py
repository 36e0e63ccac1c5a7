"""Hypothesis profiles for the whole suite, the game/player-count grid, and the test tiers.

Tiers (the ``e2e`` marker, set here from `E2E_FILES` and `E2E_TESTS`; ``lab`` from
lab/tests/conftest.py; ``browser`` on the tests that drive Chromium):

* the quick tier, ``python -m pytest -n 2 -m "not e2e and not lab"``: every rule, mask,
  contract, leak and fast-path agreement test, the ones that catch a broken game or kernel;
* ``e2e``: what runs whole commands, trainings, notebooks, other RL libraries, Ray, servers'
  processes or a browser, end to end;
* ``lab``: the lab's own tests (research code, not the product).

The full suite (every tier) is the README's test command, which CI runs.

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


# What each e2e test runs, end to end: whole files, then single tests of mixed files (names
# match by prefix, so every parametrized case of a test goes with it).
E2E_FILES = {
    "test_agent_boundary.py": "agents in child processes, timeouts and process groups of whole runs",
    "test_benchmarking.py": "the benchmark commands, their reports and the SQLite record",
    "test_commands.py": "every command run as a user runs it",
    "test_compare.py": "the main job",
    "test_compile_notice.py": "fresh interpreters compiling every kernel",
    "test_docs.py": "the README's and docs' snippets, the tutorials and the documentation site",
    "test_exercises.py": "the exercise checker and its child processes",
    "test_expert_iteration.py": "training runs",
    "test_exploit.py": "best-response trainings",
    "test_exploit_warm_start.py": "best-response trainings",
    "test_interop.py": "other RL libraries, for real",
    "test_kernel_cache.py": "fresh interpreters compiling into copies of the tree",
    "test_learn.py": "training runs",
    "test_openspiel.py": "OpenSpiel's own algorithms",
    "test_play.py": "the terminal game, as a command",
    "test_ppo.py": "training runs",
    "test_ppo_kl_clone.py": "training runs",
    "test_ppo_search.py": "training runs",
    "test_progress.py": "the commands' progress output",
    "test_quick_help.py": "every command's --help in a fresh interpreter",
    "test_ray.py": "a Ray cluster",
    "test_recipes.py": "other RL libraries' training recipes",
    "test_resume.py": "training runs, resumed",
    "test_solve.py": "exact solving of the presets, and its command",
    "test_speed.py": "the speed commands",
    "test_stop_and_locks.py": "commands stopped by signals",
    "test_web_browser.py": "a headless Chromium",
}
E2E_TESTS = {
    "test_fuzz.py": ["test_command_line_tool_rejects_bad_arguments"],
    "test_lineups.py": ["test_a_network_that_reads_features_and_a_hint_plays_compiled"],
    "test_luck.py": ["test_the_corrections_average_zero_over_many_games", "test_batched_corrections_average_zero_over_many_games",
                     "test_the_commands_report", "test_a_damaged_value_file_is_one_line_on_the_command_line",
                     "test_the_fit_command", "test_the_bar_moves_per_game"],
    "test_luck_value.py": ["test_the_fit_command", "test_a_fit_that_would_not_fit"],
    "test_parallel_env.py": ["test_torchrl_wraps_the_parallel_form"],
    "test_tournament.py": ["test_cli_", "test_an_agent_that_forks", "test_isolated_", "test_a_constructor_that_calls_os_exit",
                           "test_a_child_forked_during", "test_ratings_and_reports", "test_same_seed_same_results_for_one_and_two_workers"],
    "test_web.py": ["test_cli_", "test_tournament_and_compare_save_replays"],
    "test_workers.py": ["test_a_worker_count_far_above_the_cpus_is_refused_before_anything_is_written"],
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.path.name
        if name in E2E_FILES or any(item.name.startswith(p) for p in E2E_TESTS.get(name, ())):
            item.add_marker(pytest.mark.e2e)


def pytest_configure(config):
    # Tests marked xdist_group share expensive state (test_ray's simulated cluster), so that
    # `-n 2` keeps each group in one worker; unmarked tests are spread as before.
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
