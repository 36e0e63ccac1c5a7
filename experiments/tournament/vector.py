"""Tables on the batched engine: every game of a batch of deals stepped together, agents called once per batch.

A table plays here when every agent at it has ``act_batch`` (the batched
protocol of `agents.base`) and its game has a batched engine. Each batch row is
one game, a (deal, rotation) of the table; row ``i`` starts from the deal's
seed (`envs.vector.VectorEnv.reset` with explicit seeds), so it deals the
cards the AEC env deals for that seed. Before the batch starts, every agent
gets ``seed_rows`` with the seeds its one-game copy would get in each seat
(`seating.agent_seed`) and ``reset_rows``; so an agent that follows the
protocol makes, in every row, the move its one-game copy makes on the AEC
path, and the records are the same on both paths, forfeits included.

When every agent at the table chooses in compiled code (the heuristic, random
and greedy PPO: `agents.lineups`), the whole batch is one compiled call
(`envs.vector.VectorEnv.play_games`): the same moves from the same kernels and
streams, with no Python between steps, and a row stops when its game ends.
Otherwise Python steps the batch, one ``act_batch`` call per agent and step;
rows whose game has ended then keep moving (the engine starts a new game there
at once) with their first legal action until the batch's last game ends; their
moves are never shown to an agent, and nothing of those games is kept.

What the batched path does not do: time moves (`--move-timeout` plays on the
AEC path, since one call decides many games) and keep an agent's copy per
seat (one object per agent serves every row and seat, which is what
``act_batch`` is for).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from experiments.tournament import match, seating
from experiments.tournament.cache import cached_agent
from experiments.tournament.seating import AgentSpec, seat_lineup

ROWS_PER_BATCH = 2048  # games stepped together: per-call costs vanish, and a long run still splits over workers


def has_engine(game: str) -> bool:
    from envs.vector import KERNELS

    return game in KERNELS


def batch_agent(spec: AgentSpec, game: str, num_players: int):
    """The one agent object that plays every row of a batch for `spec` in this process."""
    return cached_agent(spec, game, num_players, seat=-1)


def choose_tables(game: str, tables: Sequence[Sequence[AgentSpec]], num_players: int, engine: str,
                  move_timeout: float | None = None, isolate: bool = False) -> frozenset:
    """The tables (indices) to play on the batched engine; ValueError when ``engine="vector"`` cannot be honoured."""
    if engine == "aec":
        return frozenset()
    from agents.base import can_act_batch

    why = None
    if not has_engine(game):
        why = f"{game} has no batched engine"
    elif move_timeout is not None:
        why = "--move-timeout times single moves, which the batched engine does not make"
    elif isolate:
        why = "--isolate plays each agent in a process of its own, one move at a time"
    chosen = set()
    for t, table in enumerate(tables):
        missing = [s.name for s in seating.distinct(table) if why is None and not can_act_batch(batch_agent(s, game, num_players))]
        if why is None and not missing:
            chosen.add(t)
        elif engine == "vector":
            raise ValueError(f"engine 'vector': {why or 'agent ' + repr(missing[0]) + ' has no act_batch'}; use engine 'auto' or 'aec'")
    return frozenset(chosen)


def path_name(game: str, tables: Sequence[Sequence[AgentSpec]], num_players: int, engine: str,
              move_timeout: float | None = None, isolate: bool = False) -> str:
    """Which path plays the tables, for the report: "vector", "aec", or "vector+aec" when they are mixed."""
    chosen = choose_tables(game, tables, num_players, engine, move_timeout, isolate)
    if not chosen:
        return "aec"
    return "vector" if len(chosen) == len(tables) else "vector+aec"


def play_tasks(job, tables: Sequence[Sequence[AgentSpec]], tasks: Sequence[tuple[int, int]]) -> list[dict]:
    """Every rotation of every (table, deal) in `tasks` on the batched engine; records as `runner.play_job` makes them."""
    out: list[dict] = []
    by_table: dict[int, list[int]] = {}
    for t, deal in tasks:
        by_table.setdefault(t, []).append(deal)
    for t, deals in by_table.items():
        out += _play_table(job, t, tables[t], deals)
    return out


def _play_table(job, t: int, table: Sequence[AgentSpec], deals: Sequence[int]) -> list[dict]:
    import envs

    n = job.num_players
    specs = seating.distinct(table)
    games = [(deal, r) for deal in deals for r in range(n)]
    N = len(games)
    deal_of = np.array([deal for deal, _ in games], np.int64)
    rotation_of = np.array([r for _, r in games], np.int64)
    # deal_seed and agent_seed for every row at once
    seeds = seating.seeds_of(job.seed, deal_of) if job.duplicate else seating.seeds_of(job.seed, deal_of, rotation_of, 1)
    # who: the index in `specs` of the agent in each row's seats (one lineup per rotation)
    lineups = [seat_lineup(table, r) for r in range(n)]
    who = np.array([[specs.index(s) for s in lineup] for lineup in lineups], np.int64)[rotation_of]
    labels = [[s.name for s in lineups[r]] for _, r in games]
    rows = np.arange(N, dtype=np.int64)
    agents = [batch_agent(s, job.game, n) for s in specs]
    seat_seeds = None
    for a in agents:
        if callable(getattr(a, "seed_rows", None)):
            if seat_seeds is None:
                seat_seeds = _seat_seeds(job, t, deal_of, rotation_of)
            a.seed_rows(rows, seat_seeds)
        elif callable(getattr(a, "seed", None)):
            # One stream for the whole batch: the same games as long as the batches are (their size is fixed).
            a.seed(seating.batch_seed(job.seed, deals[0], t))
        if callable(getattr(a, "reset_rows", None)):
            a.reset_rows(rows)

    if not job.record_moves:  # every agent compiled: the whole batch in one compiled call
        played = _play_compiled(job, t, games, labels, who, agents, seeds, seat_seeds, deal_of, rotation_of)
        if played is not None:
            return played
    per_row = [callable(getattr(a, "seed_rows", None)) or callable(getattr(a, "reset_rows", None)) for a in agents]
    venv = envs.vector_env(job.game, N, n, **dict(job.rule_options))
    obs, mask, seat = venv.reset(seeds=seeds)
    live = np.ones(N, bool)
    moves_made = np.zeros(N, np.int64)
    rewards = np.zeros((N, n), np.float64)
    results: list[dict | None] = [None] * N
    moves: list[list] = [[] for _ in range(N)] if job.record_moves else []
    while live.any():
        if int(moves_made.max()) >= match.MAX_STEPS:
            raise RuntimeError(f"a game of table {t} did not end in {match.MAX_STEPS} steps")
        # Rows whose game has ended: their first legal move (the mask holds 0/1, and argmax on bools stops at the first True).
        actions = mask.view(np.bool_).argmax(axis=1).astype(np.int64)
        mover = who[rows, seat]
        for k, agent in enumerate(agents):
            sel = np.flatnonzero(live & (mover == k))
            if sel.size == 0:
                continue
            # Only the rows where this agent is to act (never an opponent's hand); an agent with streams or
            # memory per batch row (`agents.base`) is told which rows they are.
            chosen, problem = _decide(agent, obs[sel], mask[sel], seat[sel], sel if per_row[k] else None)
            problems = None if problem is None else [problem] * sel.size
            bad = _illegal(chosen, mask[sel]) if problems is None else np.ones(sel.size, bool)
            good = sel[~bad]
            actions[good] = chosen[~bad]
            if job.record_moves:
                for row in good.tolist():
                    moves[row].append((int(seat[row]), int(actions[row])))
            for j in np.flatnonzero(bad).tolist():
                row = int(sel[j])
                problem = problems[j] if problems is not None else match.check_action(chosen[j], mask[row])
                deal, r = games[row]
                s = int(seat[row])
                msg = f"agent {labels[row][s]!r} (seat {s}, deal {deal}, rotation {r}, move {int(moves_made[row])}) {problem}"
                if job.on_error != "forfeit":
                    raise match.AgentError(msg)
                results[row] = match.forfeit_record(n, s, msg)
                live[row] = False
        moves_made[live] += 1
        obs, mask, seat, step_rewards, done = venv.step(actions)
        # Summed as the AEC path sums them: each step's reward at the engine's float32 precision, in float64.
        rewards[live] += step_rewards[live]
        for row in np.flatnonzero(done & live).tolist():
            results[row] = match.result_record(venv.final_scores[row], venv.final_ranks[row], rewards[row])
            live[row] = False
    out = []
    for row, (deal, r) in enumerate(games):
        g = results[row]
        if job.record_moves:
            g["moves"] = moves[row]
        out.append(match.game_record(t, deal, r, int(seeds[row]), labels[row], g))
    return out


def _seat_seeds(job, t: int, deal_of: np.ndarray, rotation_of: np.ndarray) -> np.ndarray:
    """The seed of each row's seat s: what its one-game agent gets (`seating.agent_seed`)."""
    return np.stack([seating.seeds_of(job.seed, deal_of, t, rotation_of, s, 2) for s in range(job.num_players)], axis=1)


def _play_compiled(job, t: int, games: list, labels: list, who: np.ndarray, agents: list, seeds: np.ndarray,
                   seat_seeds: np.ndarray | None, deal_of: np.ndarray, rotation_of: np.ndarray) -> list[dict] | None:
    """`_play_table`'s records from one compiled call (`envs.vector.VectorEnv.play_games`), when
    every agent at the table chooses in compiled code (`agents.lineups`): the same moves, drawn
    from the same streams, as the loop below; None otherwise, and when a move comes out
    illegal (the loop then plays the batch and says what went wrong)."""
    import envs
    from agents.lineups import RANDOM, lineup_kernel, lineup_params

    compiled = lineup_kernel(agents, job.game, job.num_players)
    if compiled is None:
        return None
    loop, kinds, heuristic_params = compiled
    if (kinds == RANDOM).any() and seat_seeds is None:
        seat_seeds = _seat_seeds(job, t, deal_of, rotation_of)
    params = lineup_params(agents, kinds, heuristic_params, job.game, who, seat_seeds)
    venv = envs.vector_env(job.game, len(games), job.num_players, **dict(job.rule_options))
    venv.reset(seeds=seeds)
    played = venv.play_games(np.arange(len(games)), loop, params, limit=match.MAX_STEPS)
    if not isinstance(played, dict):
        return None
    # Python lists first: reading a numpy array one number at a time costs more than the games
    scores, ranks, values, deal_seeds = (a.tolist() for a in (played["scores"], played["ranks"], played["values"], seeds))
    return [match.game_record(t, deal, r, deal_seeds[row], labels[row], match.result_record(scores[row], ranks[row], values[row]))
            for row, (deal, r) in enumerate(games)]


def _decide(agent: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray,
            rows: np.ndarray | None = None) -> tuple[np.ndarray, str | None]:
    """An agent's moves for the rows given (on copies, so that no agent edits what the next one sees), and
    None; or, when the call fails, what went wrong (every game the agent was to move in fails with it)."""
    try:
        a = np.asarray(match.act_batch(agent, obs.copy(), mask.copy(), seat.copy(), rows))
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        return np.zeros(len(seat), np.int64), "in act_batch " + match.failure(e, None)
    if a.shape != seat.shape:
        return np.zeros(len(seat), np.int64), f"returned act_batch actions of shape {a.shape} for {len(seat)} rows"
    if a.dtype == object:  # Python ints are moves; anything else is named by its type
        odd = next((x for x in a.tolist() if isinstance(x, bool) or not isinstance(x, (int, np.integer))), None)
        if odd is not None:
            return np.zeros(len(seat), np.int64), f"returned act_batch actions of dtype object holding a {type(odd).__name__}"
        try:
            a = a.astype(np.int64)
        except OverflowError:
            return np.zeros(len(seat), np.int64), "returned act_batch actions of dtype object beyond int64"
    return a, None


def _illegal(chosen: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Rows whose action is not an integer the env's mask allows."""
    if chosen.dtype == np.bool_ or not np.issubdtype(chosen.dtype, np.integer):
        return np.ones(len(chosen), bool)
    inside = (chosen >= 0) & (chosen < mask.shape[1])
    bad = ~inside
    bad[inside] = mask[np.flatnonzero(inside), chosen[inside]] == 0
    return bad
