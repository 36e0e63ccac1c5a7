"""Agents in a child process of their own, for agents the in-process guards cannot hold (``--isolate``).

`IsolatedAgent` builds its agent in a child process and sends it every
``seed``, ``reset`` and ``act`` over a pipe. With a move time limit it waits
that long for the answer and then kills the child, whatever the agent is
doing: a long call into C, a loop that catches every exception, a blocking
read. An agent that ends its process (``os._exit``, a crash in C, a signal)
is seen as the pipe closing. Either way the move fails (`match.MoveTimeout`,
`match.AgentExit`) and the next call starts a fresh child.

The child leads a process group of its own: stopping it (a timeout, the end
of the run, the child ended by ``SIGTERM``) kills the whole group, so helpers
the agent forked are not left behind. Its stdout and stderr go to a pipe the
parent reads: the first `OUTPUT_LIMIT` bytes of each isolated agent are
passed on to the parent's stderr, and the rest is counted, not kept; an agent
that writes more is stopped at once and its move fails, naming the bytes
written (a forfeit under ``--on-error forfeit``).

The cost is a pipe round trip per move (tens of microseconds, pickling the
observation), which is why the harness does not isolate every agent.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import sys
import threading
from typing import Any

from experiments.tournament import match

OUTPUT_LIMIT = 1 << 20  # bytes of an isolated agent's stdout and stderr passed on; more and it is stopped
_LIVE: set = set()  # process groups of the children alive in this process, killed at its exit


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


@atexit.register
def _kill_live_groups() -> None:
    for pid in list(_LIVE):
        _kill_group(pid)


def _serve(conn, spec, game: str, num_players: int, out=None) -> None:
    """The child: build the agent, then answer calls until the pipe closes."""
    os.setsid()  # a group of its own, which `_stop` kills whole
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    if out is not None:  # stdout and stderr into the parent's capped reader
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        out.close()
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
        self.output_bytes = 0  # everything its children wrote, passed on or not
        self._flooded = False

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        out_read, out_write = self._context.Pipe(duplex=False)
        self._process = self._context.Process(target=_serve, args=(child, self.spec, self.game, self.num_players, out_write), daemon=True)
        self._process.start()
        _LIVE.add(self._process.pid)
        child.close()
        out_write.close()
        threading.Thread(target=self._read_output, args=(out_read, self._process.pid), daemon=True).start()
        self._conn = parent
        self._answer(None)  # built, or why not

    def _read_output(self, out, pid: int) -> None:
        """Pass on the child's output up to `OUTPUT_LIMIT` bytes; past it, stop the child."""
        fd = out.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            room = OUTPUT_LIMIT - self.output_bytes
            self.output_bytes += len(chunk)
            if room > 0:
                try:
                    sys.stderr.buffer.write(chunk[:room]) if hasattr(sys.stderr, "buffer") else sys.stderr.write(chunk[:room].decode(errors="replace"))
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
            if self.output_bytes > OUTPUT_LIMIT:
                self._flooded = True
                _kill_group(pid)
                break
        out.close()

    def _stop(self) -> None:
        if self._process is not None:
            _kill_group(self._process.pid)
            _LIVE.discard(self._process.pid)
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
            if self._flooded:
                raise match.AgentRaised(self._flood_message()) from None
            raise match.AgentExit(f"ended its process (exit code {code})") from None
        if self._flooded:
            self._stop()
            raise match.AgentRaised(self._flood_message())
        if status == "error":
            raise match.AgentRaised(value)
        return value

    def _flood_message(self) -> str:
        return f"wrote more than {OUTPUT_LIMIT} bytes of output (stopped at {self.output_bytes})"

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
