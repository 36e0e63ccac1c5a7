"""Agents in a child process of their own, for agents the in-process guards cannot hold (``--isolate``).

`IsolatedAgent` builds its agent in a child process and sends it every
``seed``, ``reset`` and ``act`` over a pipe. With a move time limit it waits
that long for the answer and then kills the child, whatever the agent is
doing: a long call into C, a loop that catches every exception, a blocking
read. An agent that ends its process (``os._exit``, a crash in C, a signal)
is seen as the pipe closing. Either way the move fails (`match.MoveTimeout`,
`match.AgentExit`) and the next call starts a fresh child.

The cost is a pipe round trip per move (tens of microseconds, pickling the
observation), which is why the harness does not isolate every agent.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

from experiments.tournament import match


def _serve(conn, spec, game: str, num_players: int) -> None:
    """The child: build the agent, then answer calls until the pipe closes."""
    try:
        agent = spec.make(game, num_players, seed=0)
    except BaseException as e:
        conn.send(("error", match.failure(e, None)))
        return
    conn.send(("ok", None))
    while True:
        try:
            calls = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = None
            for name, arg in calls:  # the seed and reset of a game come with its first move
                method = getattr(agent, name, None)
                result = method(*arg) if callable(method) else None
            conn.send(("ok", result))
        except BaseException as e:  # SystemExit too: the agent failed, the child answers
            conn.send(("error", match.failure(e, None)))


class IsolatedAgent:
    """An agent that lives in a child process (see the module docstring)."""

    times_itself = True  # match.act leaves the move limit to it

    def __init__(self, spec, game: str, num_players: int, move_timeout: float | None, start_method: str) -> None:
        self.spec, self.game, self.num_players = spec, game, num_players
        self.move_timeout = move_timeout
        self._context = multiprocessing.get_context(start_method)
        self._process = None
        self._conn = None
        self._pending: list[tuple[str, tuple]] = []

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve, args=(child, self.spec, self.game, self.num_players), daemon=True)
        self._process.start()
        child.close()
        self._conn = parent
        self._answer(None)  # built, or why not

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None

    def _answer(self, timeout: float | None) -> Any:
        try:
            if timeout is not None and not self._conn.poll(timeout):
                self._stop()
                raise match.MoveTimeout
            status, value = self._conn.recv()
        except (EOFError, OSError):
            self._process.join(5)
            code = self._process.exitcode
            self._stop()
            raise match.AgentExit(f"ended its process (exit code {code})") from None
        if status == "error":
            raise match.AgentRaised(value)
        return value

    def seed(self, seed: int | None) -> None:
        # Sent with the next move, so that a failure in it is that move's failure (named, or forfeited).
        self._pending.append(("seed", (seed,)))

    def reset(self) -> None:
        self._pending.append(("reset", ()))

    def act(self, observation: dict) -> Any:
        calls, self._pending = self._pending + [("act", (observation,))], []
        if self._process is None:
            self._start()
        self._conn.send(calls)
        return self._answer(self.move_timeout)

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:
            pass
