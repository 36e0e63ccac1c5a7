"""Agents in a child process of their own, for agents the in-process guards cannot hold (``--isolate``).

`IsolatedAgent` builds its agent in a child process and sends it every
``seed``, ``reset`` and ``act`` over a pipe. With a move time limit it waits
that long for the answer and then kills the child, whatever the agent is
doing: a long call into C, a loop that catches every exception, a blocking
read. An agent that ends its process (``os._exit``, a crash in C, a signal)
is seen as the pipe closing. Either way the move fails (`match.MoveTimeout`,
`match.AgentExit`) and the next call starts a fresh child.

The child leads a process group of its own, and on Linux it dies with its
parent and adopts its own orphans: stopping it (a timeout, the end of the run,
the child ended by ``SIGTERM``) kills the whole tree below it, so helpers the
agent forked are not left behind, even those that left the group with
``setsid()`` and forked again. It keeps none of the pipes it inherited from its
parent (another isolated agent's, a worker pool's), so a run never waits on a
pipe that only a forgotten child holds open. Its stdout and stderr go to a pipe the
parent reads: the first `OUTPUT_LIMIT` bytes of each isolated agent are
passed on to the parent's stderr, and the rest is counted, not kept; an agent
that writes more is stopped at once and its move fails, naming the bytes
written (a forfeit under ``--on-error forfeit``).

Answers come back as plain bytes, never as a pickle: an integer action, or
a short text saying why the move failed or what the agent returned instead
of an integer. Anything else (an answer too long, out of turn, of an unknown
kind) is refused unread and the child stopped, so nothing the child sends can
run code in the tournament's process, and half an answer followed by silence
is a timeout like no answer. What the agent is owed before it moves (a search
agent's information state, `envs.belief.informed`) travels to the child with
the move, under the same limit.

The cost is a pipe round trip per move (tens of microseconds, pickling the
observation), which is why the harness does not isolate every agent.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import select
import signal
import struct
import sys
import threading
import time
from typing import Any

import numpy as np

from experiments.tournament import match

OUTPUT_LIMIT = 1 << 20  # bytes of an isolated agent's stdout and stderr passed on; more and it is stopped
_LIVE: set = set()  # process groups of the children alive in this process, killed at its exit


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc (empty where there is no /proc)."""
    out: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(ppid, []).append(int(entry))
    return out


def descendants(pid: int) -> list[int]:
    """The processes below `pid` in the process tree, now."""
    children, found, todo = _children(), [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def kill_tree(pid: int, include_root: bool = True) -> None:
    """Stop `pid` and every process below it, wherever they moved their group or session: all are
    stopped first (so that none forks or exits while the tree is read, and none is handed to
    another parent), the tree read again until it holds still, then all are killed."""
    stopped: set[int] = set()
    for _ in range(50):
        tree = set(descendants(pid)) | ({pid} if include_root else set())
        if tree <= stopped:
            break
        for p in tree - stopped:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
        stopped |= tree
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _prctl(option: int, value: int) -> bool:
    """Linux's prctl(2); False where it is missing."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


def adopt_orphans() -> bool:
    """Make this process the one that orphans below it are handed to (Linux's child subreaper),
    so that `kill_tree` still finds a process whose parent exited. False where it is not offered."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


@atexit.register
def _kill_live_groups() -> None:
    for pid in list(_LIVE):
        try:
            ended, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue  # not a child of this process (any more): the number may be someone else's now
        if ended == 0:  # still running
            kill_tree(pid)
        _kill_group(pid)


# What crosses from the child to the parent: frames of plain bytes, never a pickle, so nothing
# the child sends can run code in the parent. A frame is its call's number and its length
# (`_HEADER`), then one kind byte and its data: READY (a byte of flags: which hooks the agent
# has), NONE (a call without an answer), ACTION (a signed 64-bit integer), OTHER (what the agent
# returned instead of an integer, as text) or ERROR (why it failed, as text).
_HEADER = struct.Struct("<II")
_ACTION = struct.Struct("<q")
READY, NONE, ACTION, OTHER, ERROR = b"R", b"N", b"A", b"O", b"E"
MAX_ANSWER = 4096  # bytes of one answer's data; a longer one is refused unread
_INFORMS, _CHEAT_INFORMS = 1, 2  # READY's flags


def _frame(number: int, kind: bytes, data: bytes = b"") -> bytes:
    data = kind + data[: MAX_ANSWER - 1]
    return _HEADER.pack(number, len(data)) + data


def _encode(number: int, result: Any) -> bytes:
    """An agent's return value as a frame: an integer, nothing, or a short text saying what it was."""
    if result is None:
        return _frame(number, NONE)
    value = result
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        value = value[()]
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and -2**63 <= value < 2**63:
        return _frame(number, ACTION, _ACTION.pack(int(value)))
    try:
        text = f"{value!r}"[:200]
    except BaseException:  # an object whose repr fails is named by its type alone
        text = "an object"
    return _frame(number, OTHER, f"{text} ({type(value).__name__})".encode(errors="replace"))


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


_PARENT_ENDS: set[int] = set()  # this process's ends of its isolated children's pipes


def _release_inherited(keep: set[int]) -> None:
    """Point the parent's ends of other isolated children's pipes, inherited by a fork, at
    /dev/null: held here, they would keep those pipes open after their owners died, and a run
    would wait on them forever."""
    if not _PARENT_ENDS:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for fd in _PARENT_ENDS - keep:
        try:
            os.dup2(null, fd)  # not closed: the inherited objects that own them may still close them
        except OSError:
            pass
    os.close(null)
    _PARENT_ENDS.clear()


def _serve(calls, answers, spec, game: str, num_players: int, out=None, parent: int = 0) -> None:
    """The child: build the agent, then answer calls until the pipe closes."""
    os.setsid()  # a group of its own, which `_stop` kills whole
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    # Killed with its parent, whatever ends the parent; and the parent of its orphans, so that
    # a helper that left the group (setsid) and forked again is still in its tree (`kill_tree`).
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent and os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    adopt_orphans()
    _release_inherited({calls.fileno(), answers.fileno()} | ({out.fileno()} if out is not None else set()))
    if out is not None:  # stdout and stderr into the parent's capped reader
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        out.close()
    fd = answers.fileno()
    try:
        agent = spec.make(game, num_players, seed=0)
        hooks = (_INFORMS if callable(getattr(agent, "inform", None)) else 0) | \
            (_CHEAT_INFORMS if callable(getattr(agent, "cheat_inform", None)) else 0)
    except BaseException as e:
        _write_all(fd, _frame(0, ERROR, match.failure(e, None).encode(errors="replace")))
        return
    _write_all(fd, _frame(0, READY, bytes([hooks])))
    while True:
        try:
            number, batch = calls.recv()  # the parent's calls: trusted, so a pickle is fine this way
        except (EOFError, OSError):
            return
        try:
            result = None
            for name, arg in batch:  # the seed, reset and information state of a move come with it
                method = getattr(agent, name, None)
                result = method(*arg) if callable(method) else None
            answer = _encode(number, result)
        except BaseException as e:  # SystemExit too: the agent failed, the child answers
            answer = _frame(number, ERROR, match.failure(e, None).encode(errors="replace"))
        _write_all(fd, answer)


class IsolatedAgent:
    """An agent that lives in a child process (see the module docstring)."""

    times_itself = True  # match.act leaves the move limit to it

    def __init__(self, spec, game: str, num_players: int, move_timeout: float | None, start_method: str) -> None:
        self.spec, self.game, self.num_players = spec, game, num_players
        self.move_timeout = move_timeout
        self._context = multiprocessing.get_context(start_method)
        self._process = None
        self._conn = None  # calls to the child
        self._answers = None  # the child's answers (frames of bytes)
        self._hooks = 0
        self._ends: set = set()  # this process's ends of the child's pipes
        self._number = 0  # the number of the last call sent
        self._pending: list[tuple[str, tuple]] = []
        self.output_bytes = 0  # everything its children wrote, passed on or not
        self._flooded = False

    def _start(self) -> None:
        calls_read, calls_write = self._context.Pipe(duplex=False)
        answers_read, answers_write = self._context.Pipe(duplex=False)
        out_read, out_write = self._context.Pipe(duplex=False)
        self._process = self._context.Process(
            target=_serve, args=(calls_read, answers_write, self.spec, self.game, self.num_players, out_write, os.getpid()),
            daemon=True)
        self._process.start()
        _LIVE.add(self._process.pid)
        for end in (calls_read, answers_write, out_write):
            end.close()
        self._ends = {calls_write.fileno(), answers_read.fileno(), out_read.fileno()}
        _PARENT_ENDS.update(self._ends)
        threading.Thread(target=self._read_output, args=(out_read, self._process.pid), daemon=True).start()
        self._conn, self._answers = calls_write, answers_read
        self._number = 0
        self._hooks = self._answer(0, None, READY)[0]  # built, or why not

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
        _PARENT_ENDS.discard(fd)
        out.close()

    def _stop(self) -> None:
        if self._process is not None:
            kill_tree(self._process.pid)
            _kill_group(self._process.pid)
            _LIVE.discard(self._process.pid)
            self._process.kill()
            self._process.join()
        _PARENT_ENDS.difference_update(self._ends - {None})
        self._ends = set()
        for conn in (self._conn, self._answers):
            if conn is not None:
                conn.close()
        self._process = self._conn = self._answers = None

    def _read(self, count: int, deadline: float | None) -> bytes:
        """`count` bytes of the child's answers, or MoveTimeout at `deadline` (a child that sends
        half an answer and stalls is stopped like one that sends nothing), or EOFError."""
        fd, got = self._answers.fileno(), b""
        while len(got) < count:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise match.MoveTimeout
            chunk = os.read(fd, count - len(got))
            if not chunk:
                raise EOFError
            got += chunk
        return got

    def _refuse(self, what: str):
        self._stop()
        raise match.AgentRaised(f"sent {what}; answers must be an integer action or an error, refused unread")

    def _answer(self, number: int, timeout: float | None, expected: bytes | None = None) -> Any:
        """The answer to call `number`, decoded from plain bytes (never unpickled)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            got, size = _HEADER.unpack(self._read(_HEADER.size, deadline))
            if got != number:
                self._refuse(f"an answer to call {got} when call {number} was asked")
            if not 1 <= size <= MAX_ANSWER:
                self._refuse(f"an answer of {size} bytes (at most {MAX_ANSWER})")
            data = self._read(size, deadline)
        except match.MoveTimeout:
            self._stop()
            raise
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
        kind, body = data[:1], data[1:]
        if kind == ERROR:
            raise match.AgentRaised(body.decode(errors="replace"))
        if expected is not None and kind != expected:
            self._refuse(f"a {kind!r} answer where {expected!r} was due")
        if kind == READY and len(body) == 1:
            return body
        if kind == NONE and not body:
            return None
        if kind == ACTION and len(body) == _ACTION.size:
            return _ACTION.unpack(body)[0]
        if kind == OTHER:
            raise match.AgentRaised(f"returned {body.decode(errors='replace')}, not an integer action")
        self._refuse(f"an answer of kind {kind!r} with {len(body)} bytes")

    def _flood_message(self) -> str:
        return f"wrote more than {OUTPUT_LIMIT} bytes of output (stopped at {self.output_bytes})"

    def seed(self, seed: int | None) -> None:
        # Sent with the next move, so that a failure in it is that move's failure (named, or forfeited).
        self._pending.append(("seed", (seed,)))

    def reset(self) -> None:
        self._pending.append(("reset", ()))

    # The hooks of `envs.belief.informed`: present when the agent in the child has them (it says
    # so when it starts, which asking for one does). What they are given travels with the move.
    @property
    def inform(self):
        if self._process is None:
            self._start()
        return self._queue_inform if self._hooks & _INFORMS else None

    @property
    def cheat_inform(self):
        if self._process is None:
            self._start()
        return self._queue_cheat_inform if self._hooks & _CHEAT_INFORMS else None

    def _queue_inform(self, info: dict) -> None:
        self._pending.append(("inform", (info,)))

    def _queue_cheat_inform(self, engine: Any) -> None:
        self._pending.append(("cheat_inform", (engine,)))

    def act(self, observation: dict) -> Any:
        calls, self._pending = self._pending + [("act", (observation,))], []
        if self._process is None:
            self._start()
        self._number += 1
        self._conn.send((self._number, calls))
        return self._answer(self._number, self.move_timeout)

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:
            pass


match.SPEC_HOLDERS.add(IsolatedAgent)  # an isolated upper bound is known by its spec (match.upper_bound)
