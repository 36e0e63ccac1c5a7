"""Ratings and head-to-head results over every game in a SQLite record, across runs.

    python -m experiments.leaderboard --db results.sqlite
    python -m experiments.leaderboard --db results.sqlite --game neu --players 4

The record is written by ``compare`` and ``tournament`` with ``--db FILE``
(`experiments.record`). For each game and player count it prints:

* a Bradley–Terry rating over every recorded game (`experiments.tournament.ratings`:
  the Elo scale, agents averaging 0, a 95% bootstrap interval over deals; the
  order of the runs changes nothing), with the games, win rate and mean rank
  of each agent; agents are matched by label across runs, so give your agent
  the same label every time;
* head to head: for every two agents that met, the share of their meetings in
  which the row agent finished ahead of the other (ties 1/2; a game with two seats
  of one agent counts each pair of seats) and the number of games in which they met.

The rating sums up the head-to-head shares of every pair at once, weighting each
pair by how often it met.
"""

from __future__ import annotations

import math

import itertools
import sys
from typing import Sequence

from experiments import cli
from experiments.cli import ArgumentParser


def leaderboard(records: Sequence[dict]) -> dict:
    """Ratings, per-agent results and head-to-head shares of one game and player count."""
    from experiments.tournament import agent_stats, bradley_terry

    names = list(dict.fromkeys(a for r in records for a in r["agents"]))
    ratings = bradley_terry(records, names)
    ahead: dict[tuple[str, str], list[float]] = {}  # one entry per pair of seats (two heuristics: two of each)
    met: dict[tuple[str, str], set[int]] = {}  # the games in which the two met
    for g, r in enumerate(records):
        for i, j in itertools.permutations(range(len(r["agents"])), 2):
            a, b = r["agents"][i], r["agents"][j]
            if a != b:
                ri, rj = r["ranks"][i], r["ranks"][j]
                ahead.setdefault((a, b), []).append(1.0 if ri < rj else 0.5 if ri == rj else 0.0)
                met.setdefault((a, b), set()).add(g)
    stats = agent_stats(records)
    runs = len({r["run_id"] for r in records})
    order = sorted(names, key=lambda n: -(ratings[n]["rating"] if ratings and n in ratings else
                                          -math.inf if ratings else stats[n]["win"]["mean"]))
    return {
        "agents": order,
        "runs": runs,
        "games": len(records),
        "ratings": ratings,
        "stats": stats,
        "head_to_head": {f"{a} vs {b}": {"ahead": sum(v) / len(v), "games": len(met[a, b]), "seat_pairs": len(v)}
                         for (a, b), v in ahead.items()},
    }


def format_board(game: str, num_players: int, board: dict) -> str:
    lines = [f"## {game}, {num_players} players: {board['games']} games from {board['runs']} run(s)", ""]
    lines += ["| # | agent | rating [95% CI] | games | win rate | mean rank |", "|---|---|---|---|---|---|"]
    for i, name in enumerate(board["agents"], 1):
        s = board["stats"][name]
        sk = board["ratings"].get(name) if board["ratings"] else None
        rating = f"{sk['rating']:+.0f} [{sk['ci_low']:+.0f}, {sk['ci_high']:+.0f}]" if sk else "–"
        lines.append(f"| {i} | {name} | {rating} | {s['games']} | {s['win']['mean']:.3f} | {s['rank']['mean']:.2f} |")
    names = board["agents"]
    if len(names) > 1:
        lines += ["", "Head to head (row finished ahead of column, over every pair of their seats; ties 1/2; the games in which they met in brackets):", ""]
        lines += ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for a in names:
            cells = []
            for b in names:
                h = board["head_to_head"].get(f"{a} vs {b}")
                cells.append("–" if h is None else f"{h['ahead']:.1%} ({h['games']})")
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    from experiments import record

    p = ArgumentParser(prog="python -m experiments.leaderboard", description="Ratings and head-to-head results over a SQLite record of games.")
    p.add_argument("--db", required=True, help="SQLite file written by compare or tournament with --db")
    p.add_argument("--game", default=None, help="only this game (default: every game in the record)")
    p.add_argument("--players", type=cli.count, default=None, help="only this player count (default: every count)")
    args = p.parse_args(argv)
    if why := record.check_db(args.db, must_exist=True):  # read only: nothing is written, not even a schema
        p.error(why)
    records = record.read_games(args.db, args.game, args.players)
    if not records:
        what = " ".join(x for x in (args.game, f"{args.players} players" if args.players else None) if x)
        p.error(f"{args.db} holds no games" + (f" of {what}" if what else ""))
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in records:
        groups.setdefault((r["game"], r["num_players"]), []).append(r)
    for (game, n), recs in sorted(groups.items()):
        print(format_board(game, n, leaderboard(recs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
