"""Say so when numba compiles this project's kernels, before it starts.

Numba compiles a kernel on its first call and keeps it on disk (``cache=True``),
so only the first run on a machine waits for it. That wait must not look like a
hang: at the first compilation of a game's kernels in a process (numba's
``numba:compile`` event, which fires on cache misses only, never on a cache hit)
this prints one line to stderr naming the game and how long it takes
(`COMPILE_SECONDS`), then one line per kernel as it is done. Importing
`envs.vector` (which every batched engine and compiled agent does) turns it on.
Tournaments compile in the main process before they fork their workers, so that
the workers inherit the kernels and the notice is said once (`experiments.tournament`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from numba.core import event

NOTICE = "compiling batched kernels (first run on this machine only; cached afterwards)"
ROOT = Path(__file__).resolve().parents[2]  # the folder holding envs/, agents/, ...
# Seconds to compile each game's kernels on an empty cache (engine, heuristic and play-out loops),
# measured in `python -m experiments.compare` on a 2-core machine: the first run's time minus a
# warm run's, per game.
COMPILE_SECONDS = {"not_for_me": 30, "deadfall": 27, "neu": 27, "not_your_mas_jong": 37}
GAME_NAMES = {"not_for_me": "Not For Me", "deadfall": "Deadfall", "neu": "Neu", "not_your_mas_jong": "Not Your Ma's Jong"}


def game_of(module: str, name: str = "") -> str | None:
    """The game whose kernels a module holds ("envs.vector.neu", "agents.heuristic.kernels.neu"),
    or else the game a kernel is named by ("agents.lineups", "neu"), if one."""
    last = module.rsplit(".", 1)[-1]
    for word in (last, name.lstrip("_")):
        game = next((g for g in sorted(COMPILE_SECONDS, key=len, reverse=True) if word == g or word.startswith(g + "_")), None)
        if game is not None:
            return game
    return None


def notice(game: str | None) -> str:
    """The line said before a game's kernels (or the shared ones) compile."""
    if game is None:
        return NOTICE
    return (f"compiling {GAME_NAMES[game]}'s batched kernels (first run on this machine only, about "
            f"{COMPILE_SECONDS[game]} s on 2 cores; cached afterwards)")


def failed(ev) -> bool:
    """Whether a compilation's END event carries an exception. Read from the details numba keeps:
    its own ``Event.is_failed`` is inverted in numba 0.68 (True when nothing failed)."""
    return getattr(ev, "_exc_details", None) is not None


class CompileNotice(event.Listener):
    """Prints `notice` before the first kernel of each game (or of the shared code) compiles, then each one when done."""

    def __init__(self, stream=None) -> None:
        self.stream, self.said, self.depth, self.done, self.started = stream, set(), 0, 0, []

    @staticmethod
    def ours(ev) -> bool:
        code = getattr(ev.data["dispatcher"].py_func, "__code__", None)
        return code is not None and Path(code.co_filename).resolve().is_relative_to(ROOT)

    def on_start(self, ev) -> None:
        if not self.ours(ev):
            return
        func = ev.data["dispatcher"].py_func
        game = game_of(func.__module__, func.__name__)
        if game not in self.said and (game is not None or not self.said):  # the shared notice once, before any game's
            print(notice(game), file=self.stream or sys.stderr, flush=True)
            self.said.add(game)
        self.depth += 1
        self.started.append(time.monotonic())

    def on_end(self, ev) -> None:
        if not self.ours(ev) or not self.started:  # (a compilation under way when this was registered)
            return
        self.depth -= 1
        seconds = time.monotonic() - self.started.pop()
        if self.depth == 0 and not failed(ev):  # a kernel Python calls (the ones it inlines or calls compile inside it)
            self.done += 1
            func = ev.data["dispatcher"].py_func
            print(f"  compiled {func.__module__}.{func.__name__} in {seconds:.0f} s ({self.done} so far)",
                  file=self.stream or sys.stderr, flush=True)


LISTENER = CompileNotice()
event.register("numba:compile", LISTENER)
