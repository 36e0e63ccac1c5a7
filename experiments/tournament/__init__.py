"""Tournament harness: any agents, any game, any player count, duplicate deals.

    python -m experiments.tournament --game neu --players 4 --agents heuristic,random --deals 2000
    python -m experiments.tournament --game neu --agents mine=bots.py:Greedy,heuristic --db results.sqlite

As a library (runs as written in a plain script or ``python -``, workers included):

    from experiments.tournament import markdown, run_tournament
    result = run_tournament("neu", ["heuristic", "random"], num_players=4, deals=50, workers=2)
    print(markdown([result]))

Agents are any spec of `agents.spec`: ``random``, ``heuristic``, ``ppo``,
``ppo:PATH``, ``FILE.py:Name``, ``package.module:Name``, ``label=SPEC``; from
Python also a class, a factory or an agent object (copied per seat). An agent
that raises (SystemExit and ``os._exit`` included), returns anything but an
integer action the env's own mask allows, or exceeds ``--move-timeout`` stops
the run with an error naming it, its seat, the deal and the move;
``--on-error forfeit`` scores that game as lost by it and goes on. The limit
holds in-process against an agent that catches Exception; ``--isolate`` plays
every agent in a child process that the limit can kill (`match`, `isolate`).

## Tables: who sits where
A *table* is a lineup of one agent per seat. The agents you give become
tables by one of three modes (``--mode``):

* ``fill`` (default when you give at most as many agents as seats): the list
  is the lineup, and **the last agent fills the seats left over**.
  ``heuristic,random`` at 4 players is one heuristic against three randoms;
  ``ppo,heuristic`` is one PPO against three heuristics;
  ``heuristic,random,random,random`` says the same seat by seat.
* ``round-robin`` (default when you give more agents than seats): one table
  for every set of ``num_players`` distinct agents.
* ``one-vs-rest``: one table for every ordered pair (X, Y) of distinct
  agents: one X against ``num_players - 1`` Ys. This is what
  ``experiments.compare`` plays, so that every pair meets in both roles.

The same agent in several seats shares one name and one row of statistics;
each seat gets its own agent object (agents may keep memory).

## Duplicate deals
A table plays ``deals`` deals. Deal ``i`` has one seed, derived from
``(seed, i)`` only, and is replayed once for each cyclic rotation of the
seats: in rotation ``r`` the lineup's agent ``j`` sits in seat ``(j + r) % n``.
So over one deal every agent sits in every seat with the same cards, and
different tables share the same deals too. Agents are seeded from
``(seed, deal, table, rotation, seat)`` and ``reset()`` before every game,
which makes a game's result independent of the process that plays it:
``--workers K`` gives identical results for every K.

``--plain`` plays the same number of games with an independent deal per game
(the usual design), for measuring what duplicate deals buy; ``--estimator adjusted`` also
reports each pair's difference from luck-adjusted scores (`luck`: the luck of every chance
event, taken out after the game from its moves).

## Engines
``--engine auto`` (the default) plays a table on the batched engine
(`envs.vector_env`, thousands of games per call) when every agent at it has
``act_batch`` (the batched protocol of `agents.base`: random, the heuristics
and PPO have it) and no ``--move-timeout`` is set, and one AEC env per game
otherwise; ``--engine vector`` insists on the batched engine, ``--engine aec``
never uses it. Both paths play the same games: every game's records (scores,
ranks, rewards, forfeits, replays) are identical, so the statistics are too.
The report says which path ran (``engine`` in results.json, "played on" in
results.md).

## Statistics
The unit of the statistics is a deal at one table: for each agent, its mean
over all its seats in all rotations of that deal. Reported per agent, pooled
over tables (each deal of each table counts once) and per table:

* ``score`` — the game's own currency (``infos["final_scores"]``);
* ``reward`` — the sum of the env's rewards over the game (each at float32,
  the batched engine's precision, so that both engines sum the same numbers);
* ``win`` — first place, ties shared (two players ranked 1 get 1/2 each);
* ``rank`` — final rank (1 = best, ``infos["final_ranks"]``);

each with a 95% confidence interval, normal on the per-deal means:
``mean ± 1.96 · sd / sqrt(deals)``.

Pairwise, for every two agents that meet: the mean score difference (same
deals, paired) with its CI, how often one finishes ahead of the other
(ties 1/2; the heat map), and what duplicate deals buy (``variance_reduction``
in results.json, "plain deals need ×k games" in results.md): with ``D_g`` the
score difference in game ``g`` and ``d_i`` its mean over the ``n`` rotations
of deal ``i``, the estimate's variance is ``var(d_i) / deals`` with duplicate
deals and ``var(D_g) / games`` with an independent deal per game; their ratio
k is how many times the games independent deals would need for the same
confidence interval (k > 1: duplicate deals help; k < 1: they cost precision).

Ratings (`ratings`): a Bradley–Terry fit to every comparison of two agents
at a game (the better rank wins it, ties count half), on the Elo scale with
the agents averaging 0, and a 95% bootstrap interval over deals. The fit is a
function of the set of games, so the order they were played or read in
changes nothing, and an agent that plays like another rates level with it.

The parts: `seating` (agents, tables, seeds, the check of the settings),
`match` (one game), `runner` (many: worker processes, Ray), `vector` (the
batched engine), `isolate` (agents in child processes), `stats`, `ratings`,
`reports` and `command` (the CLI).
"""

from __future__ import annotations

from experiments.tournament.command import add_run_flags, check_backend, finish_run, main, parse_agents, run_cli
from experiments.tournament.match import AgentError, AgentExit, MoveTimeout, check_action, forfeit_record, play_game
from experiments.tournament.reports import markdown, plot, write_reports
from experiments.tournament.runner import Job, play, play_job, run_tournament, start_method
from experiments.tournament.seating import (
    BACKENDS, ENGINES, MODES, ON_ERROR, AgentSpec, agent_seed, check_agents, check_game, check_settings, deal_seed, distinct,
    make_tables, seat_lineup, seeds_of,
)
from experiments.tournament.stats import STATS, Z95, agent_stats, forfeits, mean_ci, pairwise, summarize, variance_reduction, win_shares
from experiments.tournament.ratings import bradley_terry

__all__ = [
    "AgentError", "AgentExit", "AgentSpec", "BACKENDS", "ENGINES", "Job", "MODES", "MoveTimeout", "ON_ERROR", "STATS", "Z95",
    "add_run_flags", "agent_seed", "agent_stats", "check_action", "check_agents", "check_backend", "check_game", "check_settings",
    "deal_seed", "distinct", "finish_run", "forfeit_record", "forfeits", "main", "make_tables", "markdown", "mean_ci",
    "bradley_terry", "pairwise", "parse_agents", "play", "play_game", "play_job", "plot", "run_cli", "run_tournament",
    "seat_lineup", "seeds_of", "start_method", "summarize", "variance_reduction", "win_shares", "write_reports",
]
