"""Playing one game: agents move in turn, each move timed and checked against the env's own mask.

An agent fails when it raises (SystemExit and calls to ``os._exit`` included),
returns anything but a legal integer action, or takes longer than the move
time limit. A failure raises `AgentError` naming the agent, its seat, the deal
and the move, or with ``on_error="forfeit"`` ends the game as lost by that seat
(`forfeit_record`).

How the move time limit holds: a POSIX interval timer raises `MoveTimeout`, a
``BaseException``, in the agent's code, so ``except Exception`` in a retry
loop does not swallow it; the timer repeats until the agent returns, and a move
that returns after the limit is a timeout whatever the agent did with the
exception. What an in-process limit cannot do is interrupt one long call into
C (``sum(range(10**11))``, a blocking read): Python runs signal handlers only
between bytecodes, so the limit takes effect when that call returns. An agent
that swallows ``BaseException`` on every alarm, or that ends its process from
C, is beyond any in-process guard; ``isolate=True`` (``--isolate``) plays each
agent in a child process of its own, which the limit kills (`isolate`).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

MAX_STEPS = 200_000  # a game longer than this is a bug in an engine or agent
RETRY_ALARM_S = 0.05  # after the limit, the alarm repeats this often until the agent returns


class AgentError(RuntimeError):
    """An agent raised, returned an action that is not a legal integer, took too long, or tried to exit."""


class MoveTimeout(BaseException):
    """Raised in an agent's code when its move time is up: a BaseException, so that an agent's
    ``except Exception`` cannot swallow it."""


class AgentRaised(Exception):
    """An agent in another process (`isolate`) raised; the message says what."""


class AgentExit(BaseException):
    """Raised in place of ``os._exit`` while an agent moves: the process stays, the agent is named."""


class _Clock:
    """The move timer of one move; `expired` stays set once the limit has passed."""

    def __init__(self) -> None:
        self.expired = False

    def alarm(self, signum, frame):
        self.expired = True
        raise MoveTimeout


def _exit_refused(code: int = 0):
    raise AgentExit(f"called os._exit({code})")


class _ExitRefused:
    """While an agent moves, ``os._exit`` raises `AgentExit`: an agent that ends the process would take the run with it."""

    def __enter__(self):
        self.real = os._exit
        os._exit = _exit_refused

    def __exit__(self, *exc):
        os._exit = self.real


def act(agent, obs: dict, move_timeout: float | None):
    """The agent's move; MoveTimeout after `move_timeout` seconds, AgentExit for os._exit."""
    with _ExitRefused():
        if not move_timeout or getattr(agent, "times_itself", False):
            return agent.act(obs)
        import signal

        clock = _Clock()
        old = signal.signal(signal.SIGALRM, clock.alarm)
        signal.setitimer(signal.ITIMER_REAL, move_timeout, RETRY_ALARM_S)
        try:
            action = agent.act(obs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        if clock.expired:  # the agent caught the alarm and went on
            raise MoveTimeout
        return action


def act_batch(agent, obs, mask, seat):
    """The agent's moves for a batch of rows (the batched protocol), AgentExit for os._exit."""
    with _ExitRefused():
        return agent.act_batch(obs, mask, seat)


def check_action(action: Any, mask: np.ndarray) -> str | None:
    """Why `action` is not a legal move under `mask`, or None."""
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action = action[()]  # a 0-d integer array, as the env takes one
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return f"returned {action!r} ({type(action).__name__}), not an integer action"
    if not 0 <= int(action) < len(mask):
        return f"returned action {int(action)}, outside 0..{len(mask) - 1}"
    if not mask[int(action)]:
        return f"returned action {int(action)}, which the action mask rules out"
    return None


def failure(e: BaseException, move_timeout: float | None) -> str:
    """What went wrong in an agent's move, in a few words."""
    if isinstance(e, MoveTimeout):
        return f"took more than {move_timeout:g} s to move"
    if isinstance(e, (AgentExit, AgentRaised)):
        return str(e)
    if isinstance(e, SystemExit):
        return f"raised SystemExit({e.code!r})"
    first = str(e).splitlines()[0] if str(e) else ""
    return f"raised {type(e).__name__}: {first}".rstrip(": ")


def play_game(env, agents: Sequence[Any], seed: int, labels: Sequence[str] | None = None, where: str = "",
              on_error: str = "raise", move_timeout: float | None = None) -> dict:
    """Play one game; per seat: final score, summed reward, final rank.

    An agent that fails (see the module docstring) raises `AgentError` naming
    it, its seat and the move; with ``on_error="forfeit"`` the game ends there
    as lost by that seat instead (see `forfeit_record`). Moves are checked
    against the env's own mask, never the agent's copy in its observation.
    """
    n = len(agents)
    labels = list(labels) if labels is not None else [type(a).__name__ for a in agents]
    env.reset(seed=seed)
    base = env.unwrapped
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    rewards = [0.0] * n
    final = None
    for steps, name in enumerate(env.agent_iter()):
        if steps >= MAX_STEPS:
            raise RuntimeError(f"game with seed {seed} did not end in {MAX_STEPS} steps")
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            action = None
        else:
            s = seat[name]
            problem = None
            try:
                action = act(agents[s], obs, move_timeout)
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # SystemExit, MoveTimeout and AgentExit too: the agent failed, not the run
                problem = failure(e, move_timeout)
            if problem is None:
                problem = check_action(action, base.action_mask(name))
            if problem is not None:
                msg = f"agent {labels[s]!r} (seat {s}{where}, move {steps}) {problem}"
                if on_error == "forfeit":
                    return forfeit_record(n, s, msg)
                raise AgentError(msg)
            action = int(action)
        env.step(action)
        # The adapter clears rewards at the next step, so summing after every step counts each once.
        # Each at float32, the batched engine's precision, so that both paths sum the same numbers.
        for a, r in env.rewards.items():
            rewards[seat[a]] += float(np.float32(r))
        if final is None:
            final = next((info for info in env.infos.values() if any(info["final_ranks"])), None)
    if final is None:
        raise RuntimeError(f"game with seed {seed} ended without final scores")
    return result_record(final["final_scores"], final["final_ranks"], rewards)


def result_record(scores: Sequence[Any], ranks: Sequence[Any], rewards: Sequence[Any]) -> dict:
    """A finished game as the statistics read it."""
    return {
        "scores": [int(x) for x in scores],
        "ranks": [int(x) for x in ranks],
        "rewards": [float(r) for r in rewards],
        "forfeit": None,
    }


def forfeit_record(n: int, seat: int, error: str) -> dict:
    """A game lost by forfeit: that seat ranks last with reward -1, every other seat
    shares first place with reward 1/(n-1) (zero-sum, like the games' own rewards);
    scores are 0, as no score was reached."""
    return {
        "scores": [0] * n,
        "ranks": [n if s == seat else 1 for s in range(n)],
        "rewards": [-1.0 if s == seat else 1.0 / (n - 1) for s in range(n)],
        "forfeit": {"seat": seat, "error": error},
    }

