"""The main job: every available agent against every other, in every available game.

    python -m experiments.compare                      # everything, about 30 s on 2 cores once compiled
    python -m experiments.compare --games neu --players 2,4 --agents heuristic,random --deals 2000

For each game (at its default player count unless ``--players``), the agents
that exist for it are found at run time: ``random`` always, ``heuristic`` when
`agents/heuristic/<game>.py` exists, ``ppo`` when `make_agent("ppo", ...)`
finds a checkpoint; the others are skipped with a printed note. They play a
duplicate-deal tournament (`experiments.tournament`) in ``one-vs-rest`` mode:
for every pair (X, Y), one X against ``n - 1`` Ys, every agent in every seat
over the same deals.

Deals: each game plays a fixed number of deals per table (``DEFAULT_DEALS``:
the slower games get fewer), or ``--deals N`` for every game. On 2 cores the
job takes about 30 s once the batched kernels are compiled; a machine's first
run compiles them first, the games side by side, about 1½ minutes more
(`envs.vector.compiling`, `experiments.tournament.runner.compile_games`). The same command gives the
same numbers on every machine and for any ``--workers``.

Output: the results table on stdout, and under ``results/<timestamp>/``
(``--out`` to choose a new folder; the folder appears only once every report is
written, and ``results/latest`` moves to it then) ``results.json``, ``<game>_<n>p.csv`` (summary),
``<game>_<n>p_games.csv`` (every game), ``results.md`` and per game
``<game>_<n>p_ratings.png`` and ``<game>_<n>p_winrate.png``;
``results/latest`` links to the newest default folder. ``--db FILE`` also
appends every game to a SQLite file (`experiments.record`) that
``python -m experiments.leaderboard`` reads. Any agent spec works in
``--agents`` (``mine=bots.py:Greedy``; see `agents.spec`).
"""

from __future__ import annotations

import sys
import time
from typing import Sequence

from experiments import cli
from experiments.cli import ArgumentParser
from experiments.tournament import (
    AgentSpec,
    add_run_flags,
    check_backend,
    check_game,
    check_settings,
    distinct,
    make_tables,
    markdown,
    parse_agents,
    play,
    run_cli,
    finish_run,
    summarize,
)
from experiments.tournament import luck
from experiments.tournament.runner import compile_games
from experiments.tournament.vector import choose_tables, path_name as engine_path

# Deals per table per game, 51,600 games: chosen on the readable engines (0.23, 0.06, 0.19 and 0.56 CPU-seconds
# per deal over the six ppo/heuristic/random tables, in the order below); on the batched engine the job plays in
# about 30 s on 2 cores.
DEFAULT_DEALS = {"not_for_me": 400, "deadfall": 1000, "neu": 500, "not_your_mas_jong": 250}
FALLBACK_DEALS = 300  # a game added later, until it is measured


def available_agents(specs: Sequence[AgentSpec], game: str, num_players: int) -> tuple[list[AgentSpec], list[str]]:
    """The agents that exist for this game, and a note for each one skipped."""
    found, notes = [], []
    for spec in specs:
        try:
            spec.make(game, num_players, seed=0)
        except (ValueError, ImportError, FileNotFoundError, OSError, NotImplementedError) as e:
            notes.append(f"{game} {num_players}p: skipping {spec.name} ({str(e).splitlines()[0]})")
            continue
        found.append(spec)
    return found, notes


def exploitability(game: str, num_players: int, specs: Sequence[AgentSpec], args) -> dict:
    """The best-response edge over each agent (`experiments.exploit`), at the budget the user asked for."""
    from experiments.exploit import exploit

    out = {}
    for spec in specs:
        r = exploit(game, num_players, spec.kind, steps=args.exploit_steps, seed=args.seed, deals=args.exploit_deals,
                    curve_points=0, say=None, warm_start="none")  # from scratch: the column's budget is all training
        out[spec.name] = {"edge": r.edge, "edge_ci": r.edge_ci, "budget": r.budget, "deals": r.deals, "run_folder": r.run_folder}
        if not args.quiet:
            print(f"{game} {num_players}p: best response against {spec.name}: {r.edge:+.3g} ± {r.edge_ci:.2g} ({r.budget})", flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    import os

    import envs
    from agents import AGENT_KINDS
    from agents.spec import SEARCH_KINDS, SPEC_LIST, split_label
    from experiments import record

    p = ArgumentParser(prog="python -m experiments.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", "--game", default=None, help="comma-separated game names (default: every available game)")
    p.add_argument("--players", default=None, help="comma-separated player counts (default: each game's default)")
    default_kinds = ",".join(reversed(AGENT_KINDS))  # strongest first, so pairs read "heuristic vs random"
    p.add_argument("--agents", default=default_kinds,
                   help=f"comma-separated agents: {SPEC_LIST}")
    p.add_argument("--deals", type=cli.count, default=None,
                   help="deals per table for every game (default: per game, " + ", ".join(f"{g} {d}" for g, d in DEFAULT_DEALS.items()) + ")")
    p.add_argument("--out", default=None, help="new folder for the reports (default: results/<timestamp>, linked from results/latest)")
    add_run_flags(p, workers_default=os.cpu_count() or 1)
    p.add_argument("--save-replays", default=None, metavar="DIR", help="also write every game as DIR/*.replay.jsonl (see experiments.replay)")
    p.add_argument("--exploit-steps", type=cli.count, default=None, metavar="N",
                   help="also train a best response for N steps against every agent and report its edge (experiments.exploit)")
    p.add_argument("--exploit-deals", type=cli.count, default=200, help="held-out deals for the best-response edge")
    args = p.parse_args(argv)

    cli.check_out(args.out, p)  # at once; claimed below, once every other check has passed
    available = envs.available_games()
    games = cli.parse_games(args.games, p) if args.games is not None else available
    specs = parse_agents(args.agents, p)
    for s in specs:
        text = split_label(s.kind)[1] if isinstance(s.kind, str) else None
        if text is not None and ":" not in text and text not in AGENT_KINDS + SEARCH_KINDS:
            p.error(f"unknown agent {text!r}; valid agents: {SPEC_LIST}")
    specs = distinct(specs)
    players: list[int | None] = [None]
    if args.players is not None:
        try:
            players = [cli.count(x) for x in cli.names(args.players)]
        except Exception:
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
    if args.db and (why := record.check_db(args.db)):
        p.error(why)

    plan, notes = [], []
    for g, n in runs:
        found, skipped = available_agents(specs, g, n)
        notes += skipped
        if len(found) < 2:
            notes.append(f"{g} {n}p: skipped, fewer than two agents available ({', '.join(s.name for s in found) or 'none'})")
            continue
        plan.append((g, n, found, make_tables(found, n, "one-vs-rest"), args.deals or DEFAULT_DEALS.get(g, FALLBACK_DEALS)))
    for note in notes:
        print("note:", note)
    if not plan:
        print("nothing to compare", file=sys.stderr)
        return 2
    for g, n, found, tables, _ in plan:
        check_backend(p, args, found, g, n)
        try:
            choose_tables(g, tables, n, args.engine, args.move_timeout, args.isolate)
            if args.estimator == "adjusted":  # a damaged value file: refused before the folder is claimed
                luck.value_for(g, n, {s.name for s in found})
        except ValueError as e:
            p.error(f"{g} {n}p: {e}")
    try:
        check_settings(workers=args.workers, backend=args.backend)
    except ValueError as e:
        p.error(str(e))
    folder = cli.claim_out(args.out, p, prefix="", link_latest=True)  # last: nothing after it refuses
    command = cli.command_line("python -m experiments.compare", argv)
    metadata = cli.run_metadata(command, args.seed, deals={f"{g}_{n}p": d for g, n, _, _, d in plan})

    estimator = args.estimator or "duplicate"

    def body() -> int:
        with folder:  # released if play fails
            t_start = time.perf_counter()
            results = []
            if args.backend == "local":  # a machine's first run compiles the games side by side
                options = dict(engine=args.engine, isolate=args.isolate, move_timeout=args.move_timeout, seed=args.seed)
                compile_games([(g, n, tables, options) for g, n, _, tables, _ in plan], args.workers)
            for g, n, found, tables, deals in plan:
                label = f"{g} {n}p"
                records = play(g, tables, n, range(deals), args.seed, args.workers, progress=False if args.quiet else label,
                               on_error=args.on_error, move_timeout=args.move_timeout, save_replays=args.save_replays,
                               backend=args.backend, ray_address=args.ray_address, engine=args.engine, isolate=args.isolate,
                               duplicate=estimator != "plain", luck=estimator == "adjusted")
                path = engine_path(g, tables, n, args.engine, args.move_timeout, args.isolate)
                res = summarize(records, tables, g, n, deals=deals, seed=args.seed, duplicate=estimator != "plain", mode="one-vs-rest",
                                rule_options={}, engine=path, estimator=estimator)
                res["records"] = records
                if args.exploit_steps:
                    res["exploitability"] = exploitability(g, n, found, args)
                results.append(res)
                print(f"{label}: {deals} deals per table × {len(tables)} tables × {n} rotations = {len(records)} games ({path})", flush=True)
            wall = time.perf_counter() - t_start
            where = "Ray" if args.backend == "ray" else f"{args.workers} worker(s)"
            header = f"# cardzoo comparison\n\n`{command}` — seed {args.seed}, {wall:.0f} s on {where}.\n\n"
            final = finish_run(results, args, folder, metadata, header=header, notes=notes)
        print()
        print(markdown(results, notes=False), end="")
        print(f"\n{sum(len(r['records']) for r in results)} games in {wall:.0f} s; wrote {final}/"
              + (" (results/latest)" if args.out is None else "") + (f" and {args.db}" if args.db else ""))
        return 0

    return run_cli(body)


if __name__ == "__main__":
    from experiments.tournament.command import as_command

    sys.exit(as_command(main))
