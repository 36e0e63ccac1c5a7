"""Per-process envs and agent objects, reused across the games a worker plays.

Agents may keep memory within a game, so each spec gets one object per seat
(the batched engine asks for seat -1: one object for every row). The runner and
the batched engine both take their agents from here.
"""

from __future__ import annotations

from experiments.tournament import match
from experiments.tournament.seating import AgentSpec

_CACHE: dict = {}


def env_of(game: str, num_players: int, rule_options: tuple):
    """The raw env this process plays `game` on."""
    key = ("env", game, num_players, rule_options)
    if key not in _CACHE:
        import envs

        _CACHE[key] = envs.make_raw(game, num_players=num_players, **dict(rule_options))
    return _CACHE[key]


def cached_agent(spec: AgentSpec, game: str, num_players: int, seat: int, isolate_with: tuple | None = None):
    """One agent object per spec and seat in this process. With `isolate_with`
    (the move limit and the start method), one `isolate.IsolatedAgent` instead."""
    # A string spec is its own key; any other is known by identity (kept alive in the cache, so its id is never reused).
    kind = spec.kind if isinstance(spec.kind, str) else id(spec.kind)
    key = ("agent", spec.name, kind, spec.kwargs, game, num_players, seat, isolate_with)
    if key not in _CACHE:
        if isolate_with is None:
            try:  # under the move guard: a constructor that calls os._exit is named, not obeyed
                agent = match.guarded_act(lambda _: spec.make(game, num_players, seed=0), None)
            except match.AgentExit as e:
                raise match.AgentError(f"agent {spec.name!r} could not be built: {e}") from None
        else:
            from experiments.tournament.isolate import IsolatedAgent

            move_timeout, start_method = isolate_with
            agent = IsolatedAgent(spec, game, num_players, move_timeout, start_method)
        _CACHE[key] = (spec, agent)
    return _CACHE[key][1]
