"""Moves made by code the caller does not trust: a move time limit that holds, exits refused,
the action checked against the env's own mask.

`guarded_act(policy, observation, move_timeout)` returns ``policy(observation)``
or raises, for the caller to name the agent:

* `MoveTimeout` when the move took longer than ``move_timeout`` seconds;
* `AgentExit` when the policy called ``os._exit`` (refused while it moves:
  the process stays up and the failure can be reported). Only the moving
  call is guarded: in a process forked during the move (a
  ``multiprocessing`` helper, a child) and in other threads ``os._exit``
  exits as usual;
* whatever the policy raised, ``SystemExit`` included.

`check_action(action, mask)` says why an action is not a legal integer move
under the env's mask (never the policy's copy in its observation, which it may
have edited), and `failure(exception, move_timeout)` says in a few words what
went wrong.

How the time limit holds, and where it stops: a POSIX interval timer
(``SIGALRM``) raises `MoveTimeout`, a ``BaseException``, inside the policy's
code, so an ``except Exception`` in a retry loop does not swallow it; the timer
repeats every `RETRY_ALARM_S` until the policy returns, and a move that
returns after the limit is a timeout whatever the policy did with the alarm.
Python runs signal handlers only between bytecodes, so one long call into C
(``sum(range(10**11))``, a blocking read) is not interrupted: the limit takes
effect when that call returns. Signals reach only the main thread; from another
thread (or without ``setitimer``) the limit is checked when the move returns,
and a policy that never returns hangs its caller. The timer takes over
``SIGALRM`` during the move and gives the old handler back afterwards. A
policy that swallows ``BaseException`` on every alarm, or ends its process
from C, is beyond any in-process guard: run it in a child process that can be
killed.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from typing import Any, Callable

import numpy as np

RETRY_ALARM_S = 0.05  # after the limit, the alarm repeats this often until the policy returns


class MoveTimeout(BaseException):
    """Raised in a policy's code when its move time is up: a BaseException, so that the
    policy's ``except Exception`` cannot swallow it."""


class AgentExit(BaseException):
    """Raised in place of ``os._exit`` while a policy moves: the process stays, the agent is named."""


def check_move_timeout(move_timeout: Any) -> float | None:
    """None, or a positive finite number of seconds; ValueError otherwise."""
    if move_timeout is None:
        return None
    if (isinstance(move_timeout, bool) or not isinstance(move_timeout, (int, float, np.integer, np.floating))
            or not (math.isfinite(move_timeout) and move_timeout > 0)):
        raise ValueError(f"move_timeout must be a positive number of seconds or None, got {move_timeout!r}")
    return float(move_timeout)


class _Alarm:
    """The timer of one move; `rang` stays set once the limit has passed."""

    def __init__(self) -> None:
        self.rang = False

    def __call__(self, signum, frame):
        self.rang = True
        raise MoveTimeout


_REAL_EXIT = os._exit  # the one os._exit of this interpreter, before any guard replaced it


class _ExitRefused:
    """``os._exit`` while a policy moves: refused in the process (and thread) that moves, the real exit
    anywhere else (a child forked during the move, a helper thread's process after a fork)."""

    def __init__(self, pid: int, thread: int) -> None:
        self.pid, self.thread = pid, thread

    def __call__(self, code: int = 0):
        if os.getpid() != self.pid or threading.get_ident() != self.thread:
            _REAL_EXIT(code)
        raise AgentExit(f"called os._exit({code})")


def _restore_exit_in_child() -> None:
    """A forked child gets the real ``os._exit`` back: the guard belongs to its parent's move."""
    if isinstance(os._exit, _ExitRefused):
        os._exit = _REAL_EXIT


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_restore_exit_in_child)


def guarded_act(policy: Callable[[Any], Any], observation: Any, move_timeout: float | None = None) -> Any:
    """``policy(observation)`` under the guards of the module docstring."""
    real_exit = os._exit
    os._exit = _ExitRefused(os.getpid(), threading.get_ident())
    try:
        if move_timeout is None:
            return policy(observation)
        start = time.perf_counter()
        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            action = policy(observation)
            if time.perf_counter() - start > move_timeout:
                raise MoveTimeout
            return action
        alarm = _Alarm()
        old = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, move_timeout, RETRY_ALARM_S)
        try:
            action = policy(observation)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        if alarm.rang:  # the policy caught the alarm and went on
            raise MoveTimeout
        return action
    finally:
        os._exit = real_exit


def check_action(action: Any, mask: np.ndarray) -> str | None:
    """Why `action` is not a legal move under `mask`, or None (a 0-d integer array counts, as in the env)."""
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return f"returned {action!r} ({type(action).__name__}), not an integer action"
    if not 0 <= int(action) < len(mask):
        return f"returned action {int(action)}, outside 0..{len(mask) - 1}"
    if not mask[int(action)]:
        return f"returned action {int(action)}, which the action mask rules out"
    return None


def failure(e: BaseException, move_timeout: float | None) -> str:
    """What went wrong in a policy's move, in a few words."""
    if isinstance(e, MoveTimeout):
        return f"took more than {move_timeout:g} s to move"
    if isinstance(e, AgentExit):
        return str(e)
    if isinstance(e, SystemExit):
        return f"raised SystemExit({e.code!r})"
    first = str(e).splitlines()[0] if str(e) else ""
    return f"raised {type(e).__name__}: {first}".rstrip(": ")
