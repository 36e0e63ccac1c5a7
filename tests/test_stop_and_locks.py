"""Long commands stopped by SIGTERM clean up as on Ctrl-C, and lock or claim files left by a
process that no longer runs (or a pid since given to another process) never block a run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments import cli as experiments_cli
from train.runfolder import LOCK, RunFolder, _started, lock_owner, owner_text

ROOT = Path(__file__).resolve().parents[1]


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _terminate_when(proc: subprocess.Popen, ready, limit: float = 240) -> tuple[int, str]:
    start = time.monotonic()
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - start < limit, "the command never got going"
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out + err


@pytest.mark.parametrize("command", ["experiments.exploit", "train.ppo"])
def test_sigterm_stops_a_long_command_as_ctrl_c_does_and_leaves_no_lock(command, tmp_path):
    out = tmp_path / "run"
    args = [command, "--game", "neu", "--players", "2", "--steps", "50000000", "--out", str(out)]
    if command == "experiments.exploit":
        args += ["--target", "heuristic"]
    else:
        args += ["--rollout-steps", "2000", "--num-envs", "16"]
    ready = (lambda: (out / LOCK).exists()) if command == "experiments.exploit" else (lambda: (out / "checkpoint.pt").exists())
    code, said = _terminate_when(_start(args, tmp_path), ready)
    assert code == 130 and "interrupted" in said and "Traceback" not in said, said
    assert not (out / LOCK).exists()
    if command == "train.ppo":  # the run goes on from its checkpoint
        again = subprocess.run([sys.executable, "-m", *args[:args.index("--steps") + 1], "4000", *args[args.index("--steps") + 2:],
                                "--resume"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr


def test_solve_stopped_by_sigterm_leaves_no_claim(tmp_path):
    out = tmp_path / "solved"
    proc = _start(["experiments.solve", "--game", "neu", "--minutes", "10", "--target", "1e-12", "--out", str(out)], tmp_path)
    code, said = _terminate_when(proc, lambda: (out / experiments_cli.CLAIM).exists())
    assert code == 130 and "Traceback" not in said, said
    assert not out.exists() or not any(out.iterdir())


class _Args:
    resume = False
    overwrite = False


@pytest.mark.parametrize("text", [f"{2**70}\n", "-5\n", "pid\n", "", f"{os.getpid()} 1\n"],
                         ids=["beyond-a-c-long", "negative", "not-a-number", "empty", "live-pid-other-start"])
def test_a_lock_of_no_running_owner_is_taken_over(text, tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / LOCK).write_text(text)
    assert lock_owner(text) is None
    run = RunFolder.open(str(folder), _Args(), {})
    assert run.locked and lock_owner((folder / LOCK).read_text()) == os.getpid()
    assert "taking over a stale" in capsys.readouterr().out
    run.release()


def test_a_live_trainers_lock_is_refused(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (folder / LOCK).write_text(f"{other.pid} {_started(other.pid)}\n")  # as that trainer would write it
        with pytest.raises(ValueError, match=f"another trainer \\(pid {other.pid}\\)"):
            RunFolder.open(str(folder), _Args(), {})
    finally:
        other.kill()
        other.wait()
    assert owner_text().split()[0] == str(os.getpid())


@pytest.mark.parametrize("text", [f"{2**70}\n", f"{os.getpid()} 1\n"], ids=["beyond-a-c-long", "live-pid-other-start"])
def test_a_report_claim_of_no_running_owner_is_named_stale(text, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / experiments_cli.CLAIM).write_text(text)
    said = experiments_cli.stale_claim(folder)
    assert said is not None and "no longer running" in said and "rm -r" in said


def test_exploit_takes_a_folder_holding_only_a_dead_trainers_lock(tmp_path):
    from train import best_response as br

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / LOCK).write_text(f"{2**40}\n")
    args = br.Args(game="neu", players=2, out=str(folder))
    run = br.open_run(args)
    assert run.locked
    run.release()
    (folder / "progress.csv").write_text("update\n")
    with pytest.raises(ValueError, match="already holds files"):
        br.open_run(args)
