"""--workers: a count far above the machine's CPUs is refused in one line before anything is
written, in every command that takes it, and a pool never starts more processes than jobs."""

from __future__ import annotations

import concurrent.futures

import pytest

from experiments import compare, speed
from experiments import tournament as T
from experiments.tournament import command as tournament_command
from tests.helpers import cli_error_line
from train import ppo
from train.cli import max_workers

TOO_MANY = str(max_workers() + 1)


@pytest.mark.parametrize("main, argv", [
    (tournament_command.main, ["--game", "neu", "--deals", "2", "--workers", TOO_MANY]),
    (tournament_command.main, ["--game", "neu", "--deals", "2", "--workers", "100000"]),
    (compare.main, ["--games", "neu", "--agents", "random,heuristic", "--deals", "2", "--workers", TOO_MANY]),
    (ppo.parse_args, ["--game", "neu", "--workers", TOO_MANY]),
    (speed.main, ["--tournament", "--workers", TOO_MANY]),
], ids=["tournament", "tournament-1e5", "compare", "train.ppo", "speed"])
def test_a_worker_count_far_above_the_cpus_is_refused_before_anything_is_written(main, argv, tmp_path, capsys):
    out = tmp_path / "out"
    line = cli_error_line(main, argv + (["--out", str(out)] if main is not speed.main else []), capsys)
    assert "far above this machine's" in line and f"at most {max_workers()}" in line
    assert not out.exists()


def test_the_api_refuses_it_too_and_a_ray_cluster_is_not_bound_by_it():
    with pytest.raises(ValueError, match="far above this machine's"):
        T.run_tournament("neu", ["random", "heuristic"], 2, deals=1, workers=max_workers() + 1, progress=False)
    T.check_settings(workers=max_workers() + 1, backend="ray")  # the cluster's CPUs size a Ray pool


def test_the_pool_never_starts_more_processes_than_jobs(monkeypatch):
    sizes = []
    real = concurrent.futures.ProcessPoolExecutor

    def recording(max_workers=None, *args, **kwargs):
        sizes.append(max_workers)
        return real(max_workers, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", recording)
    res = T.run_tournament("neu", ["random", "heuristic"], 2, deals=1, workers=max_workers(), progress=False,
                           engine="aec", duplicate=False)
    assert res["records"] and sizes and max(sizes) <= 2, sizes  # one deal at two tables: two jobs at most
