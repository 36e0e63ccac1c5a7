"""The first run says it is compiling before numba starts (envs/vector/compiling.py), not a timing test."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from envs.vector import compiling

ROOT = Path(__file__).resolve().parents[1]

# Stops the process at the first compilation, after the notice's own listener has run.
FIRST_COMPILE = """
import sys
from numba.core import event
import envs, envs.vector

class Stop(event.Listener):
    def on_start(self, ev):
        print("COMPILE " + ev.data["dispatcher"].py_func.__name__, file=sys.stderr, flush=True)
        sys.exit(0)
    def on_end(self, ev):
        pass

event.register("numba:compile", Stop())
envs.vector_env("neu", num_envs=2, num_players=4, seed=0).reset()
"""


def test_with_an_empty_cache_the_notice_comes_before_numba_compiles_anything(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))  # a machine that has never compiled them
    done = subprocess.run([sys.executable, "-c", FIRST_COMPILE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = done.stderr.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[:1] == [compiling.NOTICE] and lines[1].startswith("COMPILE "), lines[:3]


def _event(func, failed=False):
    return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=func)}, is_failed=failed)


def test_the_notice_is_said_once_then_one_line_per_kernel_and_never_for_other_code():
    out = io.StringIO()
    notice = compiling.CompileNotice(out)
    notice.on_start(_event(subprocess.run))  # not a function of this project
    notice.on_end(_event(subprocess.run))
    assert out.getvalue() == ""
    kernel, inner = compiling.CompileNotice.on_start, compiling.CompileNotice.on_end  # functions of this project
    notice.on_start(_event(kernel))
    notice.on_start(_event(inner))  # compiled inside the first one: no line of its own
    notice.on_end(_event(inner))
    notice.on_end(_event(kernel))
    notice.on_start(_event(kernel))
    notice.on_end(_event(kernel, failed=True))  # a compilation that failed is not reported as done
    lines = out.getvalue().splitlines()
    assert lines[0] == compiling.NOTICE and len(lines) == 2
    assert lines[1].startswith("  compiled envs.vector.compiling.on_start in ") and lines[1].endswith("(1 so far)")
