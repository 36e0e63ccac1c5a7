"""numba's cache is keyed by each kernel's own sources (envs/kernel_cache.py): a kernel that calls a
kernel in another file never runs stale machine code after that file changes, and an edit
recompiles only the kernels that use the edited file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CALLER = """
from numba import njit
from envs.probe_callee import callee

@njit(cache=True)
def caller():
    return callee() + 1
"""
CALLEE = """
from numba import njit

@njit(cache=True, inline="always")
def callee():
    return {value}
"""
RUN = "import envs, envs.probe_caller as p; print(p.caller(), p.caller._cache._cache_path)"


def _copy(tmp_path: Path) -> Path:
    """envs/ (the kernels' package) in a folder of its own, with a caller and a callee kernel in two files."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "envs", tree / "envs", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    (tree / "envs" / "probe_caller.py").write_text(CALLER)
    (tree / "envs" / "probe_callee.py").write_text(CALLEE.format(value=10))
    return tree


def _run(tree: Path, stderr: list | None = None, **env) -> tuple[int, str]:
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", RUN], cwd=tree, env={**environ, "PYTHONPATH": str(tree), **env},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    if stderr is not None:
        stderr.append(done.stderr)
    value, folder = done.stdout.split()
    return int(value), folder


def test_a_change_to_a_called_kernels_file_is_never_run_stale(tmp_path):
    tree = _copy(tmp_path)
    first, folder = _run(tree)
    assert first == 11 and Path(folder).parents[1] == tree / ".numba-cache" and any(Path(folder).rglob("*.nbi"))
    assert _run(tree) == (11, folder)  # the same sources: the same cache
    callee = tree / "envs" / "probe_callee.py"
    callee.write_text(CALLEE.format(value=20))  # the caller's file, and its timestamp, stay as they were
    second, new_folder = _run(tree)
    assert second == 21 and new_folder != folder
    callee.write_text(CALLEE.format(value=10))  # back again: the first cache serves
    assert _run(tree) == (11, folder)


def test_numba_cache_dir_is_the_parent_and_is_never_pruned(tmp_path):
    tree = _copy(tmp_path)
    given = tmp_path / "given"
    other = given / ("0" * 16)
    other.mkdir(parents=True)
    os.utime(other, (0, 0))  # a stale cache of other sources
    value, folder = _run(tree, NUMBA_CACHE_DIR=str(given))
    assert value == 11 and Path(folder).parents[1] == given and other.is_dir()
    mine = tree / ".numba-cache" / ("1" * 16)
    mine.mkdir(parents=True)
    os.utime(mine, (0, 0))
    _run(tree)  # the project's own folder: key folders no process used for a week go
    assert not mine.exists()


@pytest.mark.parametrize("blocked_by", ["numba_cache_dir", "a_file_named_numba_cache"])
def test_a_cache_folder_that_cannot_be_made_says_so_and_never_runs_stale_code(tmp_path, blocked_by):
    """No keyed folder: kernels compile afresh (an empty temporary cache), never from numba's own
    cache, which would keep the caller's old machine code after the callee's file changes."""
    tree = _copy(tmp_path)
    env = {}
    if blocked_by == "numba_cache_dir":
        blocked = tmp_path / "a_file"
        blocked.write_text("not a folder")
        env["NUMBA_CACHE_DIR"] = str(blocked / "cache")
    else:
        (tree / ".numba-cache").write_text("not a folder")
    said: list[str] = []
    value, folder = _run(tree, said, **env)
    assert value == 11 and "cannot use the kernel cache" in said[0] and said[0].count("\n") == 1
    assert not Path(folder).exists()  # the temporary cache is gone at exit
    (tree / "envs" / "probe_callee.py").write_text(CALLEE.format(value=20))
    assert _run(tree, **env)[0] == 21


def test_a_dangling_link_named_py_never_breaks_the_import(tmp_path):
    tree = _copy(tmp_path)
    (tree / "envs" / ".#mybot.py").symlink_to(tmp_path / "gone" / "mybot.py")  # an editor's lock link
    (tree / "envs" / "folder.py").mkdir()
    assert _run(tree)[0] == 11


def test_a_linked_cache_folder_is_never_pruned_through_the_link(tmp_path):
    tree = _copy(tmp_path)
    target = tmp_path / "elsewhere"
    stale = target / ("2" * 16)
    stale.mkdir(parents=True)
    os.utime(stale, (0, 0))
    (tree / ".numba-cache").symlink_to(target, target_is_directory=True)
    inside = tree / ".numba-cache" / ("3" * 16)
    assert _run(tree)[0] == 11
    assert stale.is_dir() and not inside.exists()


def test_each_kernel_is_keyed_by_the_files_it_compiles_in():
    """Read from the source: a game's kernels depend on its own files and the shared ones, never
    on another game's; the readable heuristic's constants reach its game's kernels only."""
    from envs import kernel_cache as K

    games = ["neu", "deadfall", "not_for_me", "not_your_mas_jong"]
    for game in games:
        for module, name in [(f"envs.vector.{game}", "step_rows"), ("agents.lineups", game),
                             (f"agents.heuristic.kernels.{game}", "play_rows")]:
            files = {p.relative_to(K.ROOT).as_posix() for p in K.sources_of(module, name)}
            assert f"envs/vector/{game}.py" in files, (module, name)
            for other in games:
                if other != game:
                    assert f"envs/vector/{other}.py" not in files and f"agents/heuristic/{other}.py" not in files, (module, name, other)
            assert "envs/vector/loops.py" in files
    assert "agents/heuristic/neu.py" in {p.relative_to(K.ROOT).as_posix() for p in K.sources_of("agents.lineups", "neu")}


PLAY = """
import json, numpy as np, envs, numba
from numba.core.registry import CPUDispatcher
out = {}
for game in ("neu", "deadfall", "not_for_me", "not_your_mas_jong"):
    venv = envs.vector_env(game, 2, 3 if game == "not_your_mas_jong" else 4, seed=0)
    obs, mask, seat = venv.reset()
    venv.step(mask.argmax(1))
    module = __import__(f"envs.vector.{game}", fromlist=["x"])
    kernels = [k for k in vars(module).values() if isinstance(k, CPUDispatcher) and k.__module__ == module.__name__]
    out[game] = [sum(sum(k.stats.cache_hits.values()) for k in kernels), sum(sum(k.stats.cache_misses.values()) for k in kernels)]
print(json.dumps(out))
"""


def test_editing_one_games_kernels_leaves_the_other_games_caches_warm(tmp_path):
    """numba's own counters: after an edit to Deadfall's kernel file, its kernels compile again
    (cache misses) and the other three games' load from the cache (hits only)."""
    import json

    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "envs", tree / "envs", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))

    def play():
        done = subprocess.run([sys.executable, "-c", PLAY], cwd=tree, capture_output=True, text=True, timeout=900,
                              env={**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}, "PYTHONPATH": str(tree)})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    cold = play()
    assert all(misses > 0 for _, misses in cold.values()), cold
    warm = play()
    assert all(hits > 0 and misses == 0 for hits, misses in warm.values()), warm
    kernel = tree / "envs" / "vector" / "deadfall.py"
    kernel.write_text(kernel.read_text() + "\n# an edit\n")
    edited = play()
    assert edited["deadfall"][1] > 0, edited
    assert all(hits > 0 and misses == 0 for g, (hits, misses) in edited.items() if g != "deadfall"), edited
