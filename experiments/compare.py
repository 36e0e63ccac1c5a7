"""The main job: every available agent against every other, in every available game.

    python -m experiments.compare                      # everything, about 5 minutes on 2 cores
    python -m experiments.compare --games neu --players 2,4 --agents heuristic,random --deals 2000

For each game (at its default player count unless ``--players``), the agents
that exist for it are found at run time: ``random`` always, ``heuristic`` when
`agents/heuristic/<game>.py` exists, ``ppo`` when `make_agent("ppo", ...)`
finds a checkpoint; the others are skipped with a printed note. They play a
duplicate-deal tournament (`experiments.tournament`) in ``one-vs-rest`` mode:
for every pair (X, Y), one X against ``n - 1`` Ys, every agent in every seat
over the same deals.

Deals: with ``--deals auto`` (the default) each game gets an equal share of
what is left of ``--budget`` seconds of play (default 260 s, so the whole job
stays within 5 minutes on 2 cores) and plays deals 0, 1, 2, ... (at most
``--max-deals``) until its share is spent; only deals finished at every table
count. The number of deals played is printed and stored, and the results are
exactly those of ``--deals N`` with that N, which gives identical results run
to run, for any ``--workers``.

Output: the results table on stdout, and under ``results/<timestamp>/``
(``--out`` to choose) ``results.json``, ``<game>_<n>p.csv`` (summary),
``<game>_<n>p_games.csv`` (every game), ``results.md`` and per game
``<game>_<n>p_ratings.png`` and ``<game>_<n>p_winrate.png``;
``results/latest`` links to the newest default folder.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Sequence

from experiments.cli import ArgumentParser
from experiments.tournament import (
    AgentSpec,
    check_game,
    make_tables,
    markdown,
    play,
    summarize,
    write_reports,
)

DEFAULT_BUDGET_S = 260.0  # seconds of play; start-up, statistics and plots take the rest of 5 minutes


def available_agents(kinds: Sequence[str], game: str, num_players: int) -> tuple[list[AgentSpec], list[str]]:
    """The agent kinds that exist for this game, and a note for each one skipped."""
    found, notes = [], []
    for kind in kinds:
        spec = AgentSpec.of(kind)
        try:
            spec.make(game, num_players, seed=0)
        except (ValueError, ImportError, FileNotFoundError, OSError, NotImplementedError) as e:
            notes.append(f"{game} {num_players}p: skipping {kind} ({e})")
            continue
        found.append(spec)
    return found, notes


def parse_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    import envs
    from agents import AGENT_KINDS

    p = ArgumentParser(prog="python -m experiments.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default=None, help="comma-separated game names (default: every available game)")
    p.add_argument("--players", default=None, help="comma-separated player counts (default: each game's default)")
    default_kinds = ",".join(reversed(AGENT_KINDS))  # strongest first, so pairs read "heuristic vs random"
    p.add_argument("--agents", default=default_kinds, help=f"comma-separated agent kinds (default: {default_kinds})")
    p.add_argument("--out", default=None, help="output folder (default: results/<timestamp>, linked from results/latest)")
    p.add_argument("--deals", default="auto", help="deals per table, or 'auto' to fit --budget")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, help="seconds of play for the whole job with --deals auto")
    p.add_argument("--max-deals", type=int, default=2000, help="cap on deals per table with --deals auto")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel processes (results do not depend on it)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--save-replays", default=None, metavar="DIR", help="also write every game as DIR/*.replay.jsonl (see experiments.replay)")
    args = p.parse_args(argv)

    available = envs.available_games()
    games = parse_list(args.games) if args.games is not None else available
    if not games:
        p.error(f"--games is empty; valid games: {', '.join(available)}")
    for g in games:
        if g not in available:
            hint = " (the number of deals is --deals)" if g.isdigit() else ""
            p.error(f"unknown game {g!r}; valid games: {', '.join(available)}{hint}")
    kinds = parse_list(args.agents)
    if not kinds:
        p.error(f"--agents is empty; valid agents: {', '.join(AGENT_KINDS)}")
    for k in kinds:
        if k not in AGENT_KINDS:
            p.error(f"unknown agent {k!r}; valid agents: {', '.join(AGENT_KINDS)}")
    kinds = list(dict.fromkeys(kinds))
    players: list[int | None] = [None]
    if args.players is not None:
        try:
            players = [int(x) for x in parse_list(args.players)]
        except ValueError:
            p.error(f"--players must be comma-separated integers, got {args.players!r}")
        if not players:
            p.error("--players is empty")
    runs = []
    for g in games:
        for n in players:
            try:
                runs.append((g, check_game(g, n)))
            except ValueError as e:
                p.error(str(e))
    if args.deals == "auto":
        fixed_deals = None
    else:
        try:
            fixed_deals = int(args.deals)
        except ValueError:
            fixed_deals = 0
        if fixed_deals < 1:
            p.error(f"--deals must be a positive integer or 'auto', got {args.deals!r}")
    if args.workers < 1:
        p.error("--workers must be at least 1")

    t_start = time.perf_counter()
    plan, notes = [], []
    for g, n in runs:
        specs, skipped = available_agents(kinds, g, n)
        notes += skipped
        if len(specs) < 2:
            notes.append(f"{g} {n}p: skipped, fewer than two agents available ({', '.join(s.name for s in specs) or 'none'})")
            continue
        plan.append((g, n, specs, make_tables(specs, n, "one-vs-rest")))
    for note in notes:
        print("note:", note)
    if not plan:
        print("nothing to compare", file=sys.stderr)
        return 2

    results = []
    for i, (g, n, specs, tables) in enumerate(plan):
        label = f"{g} {n}p"
        if fixed_deals is not None:
            records = play(g, tables, n, range(fixed_deals), args.seed, args.workers, progress=label, save_replays=args.save_replays)
        else:
            # This game's share of what is left of the budget; play stops there, keeping whole deals.
            share = (args.budget - (time.perf_counter() - t_start)) / (len(plan) - i)
            deadline = time.perf_counter() + share
            records = play(g, tables, n, range(args.max_deals), args.seed, args.workers, progress=label, deadline=deadline,
                           save_replays=args.save_replays)
        deals = len({r["deal"] for r in records})
        res = summarize(records, tables, g, n, deals=deals, seed=args.seed, duplicate=True, mode="one-vs-rest")
        res["records"] = records
        results.append(res)
        print(f"{label}: {deals} deals per table × {len(tables)} tables × {n} rotations = {len(records)} games", flush=True)

    wall = time.perf_counter() - t_start
    if args.out is not None:
        out = Path(args.out)
    else:
        out = Path("results") / time.strftime("%Y%m%d-%H%M%S")
    write_reports(results, out, plots=not args.no_plots)
    md = markdown(results)
    header = (
        f"# cardzoo comparison\n\n`python -m experiments.compare {' '.join(argv if argv is not None else sys.argv[1:])}`"
        f" — seed {args.seed}, {wall:.0f} s on {args.workers} worker(s).\n\n"
    )
    (out / "results.md").write_text(header + md + "".join(f"\nNote: {x}" for x in notes) + ("\n" if notes else ""))
    if args.out is None:
        latest = Path("results") / "latest"
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(out.name, target_is_directory=True)
    print()
    print(md, end="")
    print(f"\n{sum(len(r['records']) for r in results)} games in {wall:.0f} s; wrote {out}/" + (" (results/latest)" if args.out is None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
