"""Playing one game: agents move in turn, each move timed and checked against the env's own mask.

An agent fails when it raises (SystemExit and calls to ``os._exit`` included),
returns anything but a legal integer action, or takes longer than the move
time limit. A failure raises `AgentError` naming the agent, its seat, the deal
and the move, or with ``on_error="forfeit"`` ends the game as lost by that seat
(`forfeit_record`).

The guards are `envs.move_guard`'s: a move time limit that an ``except
Exception`` cannot swallow, ``os._exit`` refused while an agent moves, the
action checked against the env's own mask (its docstring says how far the
limit reaches). An agent beyond them (one long call into C, a loop that
swallows ``BaseException``, an agent that ends its process from C) plays with
``isolate=True`` (``--isolate``) in a child process that the limit kills
(`isolate`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from agents.spec import is_upper_bound
from envs.belief import informed
from envs.move_guard import AgentExit, MoveTimeout, check_action, guarded_act
from envs.move_guard import failure as _failure

MAX_STEPS = 200_000  # a game longer than this is a bug in an engine or agent


class AgentError(RuntimeError):
    """An agent raised, returned an action that is not a legal integer, took too long, or tried to exit."""


class AgentRaised(Exception):
    """An agent in another process (`isolate`) raised; the message says what."""


SPEC_HOLDERS: set[type] = set()  # cardzoo's own stand-ins for an agent built elsewhere (isolate.IsolatedAgent)


def upper_bound(agent) -> bool:
    """Whether `agent` is an upper bound that cardzoo built (`agents.spec.is_upper_bound`): only
    such an agent is handed the real game. An isolated one is known by the spec it was built from."""
    if type(agent) in SPEC_HOLDERS:
        return is_upper_bound(agent.spec.kind)
    return is_upper_bound(agent)


def _informs(agent) -> bool:
    """Whether `agent` has an ``inform`` hook; an agent whose hook cannot even be looked up (an
    isolated one that fails to start) counts as having one: its move will say what went wrong."""
    try:
        return callable(getattr(agent, "inform", None))
    except Exception:
        return True


def act(agent, obs: dict, move_timeout: float | None, engine=None, seat: int | None = None,
        cheat: bool | None = None):
    """The agent's move under `envs.move_guard`: MoveTimeout after `move_timeout` seconds,
    AgentExit for os._exit. With `engine` and `seat`, what the agent is owed before it moves
    (a search agent's information state, `envs.belief.informed`) is part of the move, under the
    same guard and limit. An isolated agent keeps its own time (it can kill its process): its
    information state travels to its process with the move."""
    timed = move_timeout if move_timeout and not getattr(agent, "times_itself", False) else None
    if engine is None:
        return guarded_act(agent.act, obs, timed)
    cheat = upper_bound(agent) if cheat is None else cheat
    return guarded_act(informed(agent, engine, seat, upper_bound=cheat), obs, timed)



def act_batch(agent, obs, mask, seat, rows=None):
    """The agent's moves for a batch of rows (the batched protocol; ``rows=`` which batch rows they are, for
    an agent with state per row), AgentExit for os._exit."""
    if rows is None:
        return guarded_act(lambda _: agent.act_batch(obs, mask, seat), None)
    return guarded_act(lambda _: agent.act_batch(obs, mask, seat, rows=rows), None)


def failure(e: BaseException, move_timeout: float | None) -> str:
    """What went wrong in an agent's move, in a few words."""
    return str(e) if isinstance(e, AgentRaised) else _failure(e, move_timeout)


def play_game(env, agents: Sequence[Any], seed: int, labels: Sequence[str] | None = None, where: str = "",
              on_error: str = "raise", move_timeout: float | None = None,
              upper_bounds: Sequence[bool] | None = None) -> dict:
    """Play one game; per seat: final score, summed reward, final rank.

    An agent that fails (see the module docstring) raises `AgentError` naming
    it, its seat and the move; with ``on_error="forfeit"`` the game ends there
    as lost by that seat instead (see `forfeit_record`). Moves are checked
    against the env's own mask, never the agent's copy in its observation. `upper_bounds`
    says which seats are handed the real game (default: those of `upper_bound`).
    """
    n = len(agents)
    cheats = list(upper_bounds) if upper_bounds is not None else [upper_bound(a) for a in agents]
    labels = list(labels) if labels is not None else [type(a).__name__ for a in agents]
    base = env.unwrapped
    # An agent that is told its information state gets its information-set key too: the engine keeps
    # the history the key needs (only at such a table: it costs a few µs a step).
    base.keep_history(any(_informs(a) for a in agents))
    env.reset(seed=seed)
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
                action = act(agents[s], obs, move_timeout, base.game, s, cheats[s])
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


def game_record(t: int, deal: int, rotation: int, ds: int, labels: list[str], g: dict) -> dict:
    """One game's record: where it was played (table, deal, rotation, the deal's seed), who sat where, its result."""
    if g["forfeit"]:
        g["forfeit"]["agent"] = labels[g["forfeit"]["seat"]]
    return {"table": t, "deal": deal, "rotation": rotation, "deal_seed": ds, "agents": labels, **g}
