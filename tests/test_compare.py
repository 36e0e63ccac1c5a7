"""The main job: bad input gets one line and exit code 2; a tiny run writes every report."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from tests.helpers import cli_error_line


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "experiments.compare", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--games", "chess"], "unknown game 'chess'; valid games: "),
        (["--agents", "random,alphago"], "unknown agent 'alphago'; valid agents: random, heuristic, ppo"),
        (["--games", "neu", "--players", "1"], "neu: players must be from 2 to 7, got 1"),
        (["--players", "four"], "--players must be comma-separated integers"),
        (["--deals", "0"], "argument --deals: must be a whole number from 1"),
    ],
)
def test_bad_input_is_one_clear_line(args, expected, capsys):
    from experiments import compare

    line = cli_error_line(compare.main, args, capsys)
    assert expected in line
    if "valid games" in expected:
        assert "neu" in line


def test_bad_input_from_the_shell_has_no_traceback():
    r = run("--games", "neu,chess")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert "unknown game 'chess'; valid games: " in r.stderr and "neu" in r.stderr


def test_tiny_run_writes_json_csv_md_png(tmp_path):
    out = tmp_path / "out"
    r = run("--games", "neu", "--agents", "heuristic,random", "--deals", "2", "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "| neu | 4 | heuristic |" in r.stdout and "heuristic vs random" in r.stdout
    for name in ("results.json", "results.md", "neu_4p.csv", "neu_4p_games.csv", "neu_4p_ratings.png", "neu_4p_winrate.png"):
        assert (out / name).stat().st_size > 0, name
    (res,) = json.loads((out / "results.json").read_text())
    assert res["game"] == "neu" and res["num_players"] == 4 and res["deals"] == 2
    assert res["agents"] == ["heuristic", "random"]
    # one-vs-rest: one heuristic vs three randoms, and one random vs three heuristics
    assert [t["lineup"] for t in res["tables"]] == [["heuristic", "random", "random", "random"], ["random", "heuristic", "heuristic", "heuristic"]]
    assert res["games_played"] == 2 * 2 * 4
    rows = list(csv.DictReader((out / "neu_4p_games.csv").open()))
    assert len(rows) == 16
    assert (out / "results.md").read_text().startswith("# cardzoo comparison")
    assert (out / "neu_4p_winrate.png").read_bytes()[:4] == b"\x89PNG"


def test_default_output_folder_and_latest_link(tmp_path):
    import os

    env_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(
        [sys.executable, "-m", "experiments.compare", "--games", "neu", "--players", "2", "--deals", "1", "--workers", "1", "--no-plots"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": env_root},
    )
    assert r.returncode == 0, r.stderr
    latest = tmp_path / "results" / "latest"
    assert latest.is_symlink() and (latest / "results.json").exists()
    assert "note: neu 2p: skipping ppo" in r.stdout or "ppo" in json.loads((latest / "results.json").read_text())[0]["agents"]


def test_compare_and_tournament_take_the_same_run_flags(capsys):
    """One vocabulary: every flag the tournament takes for a run, the main job takes too."""
    from experiments import compare
    from experiments import tournament as T

    def flags(main):
        with pytest.raises(SystemExit):
            main(["--help"])
        return {w.strip(",") for w in capsys.readouterr().out.split() if w.startswith("--")}

    shared = {"--seed", "--workers", "--out", "--quiet", "--engine", "--backend", "--deals", "--db", "--on-error"}
    assert shared <= flags(T.main)
    assert shared <= flags(compare.main)


def test_quiet_compare_prints_no_progress_bar(tmp_path):
    r = run("--games", "neu", "--players", "2", "--agents", "random,heuristic", "--deals", "2", "--quiet", "--no-plots",
            "--workers", "1", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert "game/s" not in r.stderr and "it/s" not in r.stderr


def test_the_exploitability_column_appears_when_asked(tmp_path):
    import os
    from pathlib import Path

    # Run from tmp_path (the best responses' run folders go to ./runs), importing this checkout.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    common = ["--games", "neu", "--players", "2", "--agents", "random,heuristic", "--deals", "2", "--quiet", "--no-plots", "--workers", "1"]

    def compare(*args):
        return subprocess.run([sys.executable, "-m", "experiments.compare", *common, *args], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env=env)

    r = compare("--exploit-steps", "3000", "--exploit-deals", "8", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    report = next((tmp_path / "o").glob("*.md")).read_text()
    assert "best-response edge" in report and "3000 steps" in report.replace(",", "")
    rows = [line for line in report.splitlines() if line.startswith(("| neu | 2 | random |", "| neu | 2 | heuristic |"))]
    assert len(rows) == 2 and all(line.count("±") >= 1 and line.rstrip().endswith("|") for line in rows)
    assert compare("--out", str(tmp_path / "p")).returncode == 0
    assert "best-response edge" not in next((tmp_path / "p").glob("*.md")).read_text()


def test_the_aec_path_with_workers_does_not_hang_after_the_parent_loaded_a_checkpoint(tmp_path):
    # The parent loads the PPO checkpoints (torch starts GNU OpenMP's thread pool there), then forks
    # workers to compile two games side by side; a worker whose torch used that pool waited forever.
    import os
    import signal

    cmd = [sys.executable, "-m", "experiments.compare", "--engine", "aec", "--games", "deadfall,neu", "--deals", "1",
           "--workers", "2", "--no-plots", "--quiet", "--out", str(tmp_path / "run")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("compare --engine aec with 2 workers did not finish in 240 s")
    assert proc.returncode == 0, out
    assert (tmp_path / "run" / "results.json").is_file()
