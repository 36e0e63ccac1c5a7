"""Say so when numba compiles this project's kernels, before it starts.

Numba compiles a kernel on its first call and keeps it on disk (``cache=True``),
so only the first run on a machine waits for it, about a minute in all. That
wait must not look like a hang: at the first compilation in a process (numba's
``numba:compile`` event, which fires on cache misses only, never on a cache
hit) this prints `NOTICE` to stderr, then one line per kernel as it is done.
Importing `envs.vector` (which every batched engine and compiled agent does)
turns it on.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from numba.core import event

NOTICE = "compiling batched kernels (first run only, about a minute)"
ROOT = Path(__file__).resolve().parents[2]  # the folder holding envs/, agents/, ...


class CompileNotice(event.Listener):
    """Prints `NOTICE` before the first kernel of this project compiles, then each one when done."""

    def __init__(self, stream=None) -> None:
        self.stream, self.said, self.depth, self.done, self.started = stream, False, 0, 0, []

    @staticmethod
    def ours(ev) -> bool:
        code = getattr(ev.data["dispatcher"].py_func, "__code__", None)
        return code is not None and Path(code.co_filename).resolve().is_relative_to(ROOT)

    def on_start(self, ev) -> None:
        if not self.ours(ev):
            return
        out = self.stream or sys.stderr
        if not self.said:
            print(NOTICE, file=out, flush=True)
            self.said = True
        self.depth += 1
        self.started.append(time.monotonic())

    def on_end(self, ev) -> None:
        if not self.ours(ev) or not self.started:  # (a compilation under way when this was registered)
            return
        self.depth -= 1
        seconds = time.monotonic() - self.started.pop()
        if self.depth == 0 and not getattr(ev, "is_failed", False):  # a kernel Python calls (the ones it inlines or calls compile inside it)
            self.done += 1
            func = ev.data["dispatcher"].py_func
            print(f"  compiled {func.__module__}.{func.__name__} in {seconds:.0f} s ({self.done} so far)",
                  file=self.stream or sys.stderr, flush=True)


LISTENER = CompileNotice()
event.register("numba:compile", LISTENER)
