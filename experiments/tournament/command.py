"""The tournament command and the flags it shares with `experiments.compare`.

    python -m experiments.tournament --game neu --players 4 --agents heuristic,random --deals 2000
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Sequence

from experiments.cli import ArgumentParser
from experiments.tournament import seating, vector
from experiments.tournament.match import AgentError
from experiments.tournament.reports import markdown, write_reports
from experiments.tournament.runner import run_tournament
from experiments.tournament.seating import BACKENDS, ENGINES, MODES, ON_ERROR, AgentSpec, distinct


def split_agents(text: str) -> list[str]:
    """--agents as specs: split at the commas, except those between a search agent's options
    (``pimc:worlds=8,horizon=game,random`` is two agents)."""
    from agents.search.options import OPTION_KEYS
    from agents.spec import SEARCH_KINDS, split_label

    items: list[str] = []
    for part in (a.strip() for a in text.split(",")):
        if not part:
            continue
        key = part.partition("=")[0]
        prev = split_label(items[-1])[1] if items else ""
        if key in OPTION_KEYS and prev.partition(":")[0] in SEARCH_KINDS and ":" in prev:
            items[-1] += "," + part  # an option of the search agent before it
        else:
            items.append(part)
    return items


def parse_agents(text: str, parser: argparse.ArgumentParser) -> list[AgentSpec]:
    """--agents: comma-separated specs; each must build (so a typo fails before any game)."""
    from agents.spec import SPEC_LIST

    items = split_agents(text)
    if not items:
        parser.error(f"--agents is empty; valid agents: {SPEC_LIST}")
    specs = [AgentSpec.of(a) for a in items]
    try:
        distinct(specs)
    except ValueError as e:
        parser.error(str(e))
    return specs


def add_run_flags(p: argparse.ArgumentParser, workers_default: int) -> None:
    """The flags `tournament` and `compare` share."""
    from experiments import cli

    p.add_argument("--seed", type=cli.seed, default=0, help="base seed of every deal and agent")
    p.add_argument("--workers", type=cli.count, default=workers_default, help="parallel processes (results do not depend on it)")
    p.add_argument("--db", default=None, help="append every game to this SQLite file (see experiments.record)")
    p.add_argument("--on-error", choices=ON_ERROR, default="raise",
                   help="an agent that fails: stop with an error naming it, or forfeit that game and go on")
    p.add_argument("--move-timeout", type=cli.positive_seconds, default=None, help="seconds an agent may take per move (default: no limit)")
    p.add_argument("--isolate", action="store_true",
                   help="play every agent in a child process of its own, which --move-timeout kills (long C calls, agents that "
                        "catch every exception or end their process); costs a pipe round trip per move")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--estimator", default=None, choices=("plain", "duplicate", "adjusted"),
                   help="plain: an independent deal per game; duplicate (default): every deal in every seat rotation; "
                        "adjusted: duplicate deals, and each pair's difference also from luck-adjusted scores "
                        "(docs/benchmarking.md; replays every game after play, so it costs time)")
    p.add_argument("--engine", default="auto", choices=ENGINES,
                   help="auto: the batched engine for every table whose agents all act in batches (act_batch), one env "
                        "per game otherwise; vector: insist on the batched engine; aec: one env per game (the records are the same)")
    p.add_argument("--backend", default="local", choices=BACKENDS,
                   help="local: --workers processes on this machine; ray: Ray tasks on a cluster (see docs/distributed.md)")
    p.add_argument("--ray-address", default=None,
                   help="with --backend ray: HOST:PORT of a running cluster's head, or 'auto' to join the one this machine "
                        "belongs to (default: start Ray on this machine, every core)")


def check_backend(p: argparse.ArgumentParser, args: argparse.Namespace, specs: Sequence[AgentSpec], game: str, num_players: int) -> None:
    """With --backend ray: join the cluster and make sure every agent reaches its workers (one-line errors, exit 2)."""
    if args.backend != "ray":
        if args.ray_address is not None:
            p.error("--ray-address needs --backend ray")
        return
    import functools

    from train.distributed import check_travel, connect

    try:
        connect(args.ray_address)
        check_travel({s.name: s for s in distinct(specs)}, functools.partial(AgentSpec.make, game=game, num_players=num_players, seed=0))
    except (ImportError, ConnectionError, ValueError) as e:
        p.error(str(e))


def finish_run(results: list[dict], args: argparse.Namespace, folder, metadata: dict, header: str = "", notes: Sequence[str] = ()):
    metadata["estimator"] = results[0].get("estimator", "duplicate") if results else "duplicate"
    adjusted = {f"{r['game']} {r['num_players']}p": {k: {f: p[f] for f in ("score_diff", "adjusted_diff", "var_plain", "var_adjusted", "adjusted_ratio")}
                                                      for k, p in r["pairwise"].items() if "adjusted_diff" in p} for r in results}
    if any(adjusted.values()):
        metadata["adjusted"] = adjusted  # the SQLite run record keeps the luck-adjusted differences too
    """Write the reports into the claimed folder (`experiments.cli.claim_out`) and record the run in
    --db: the reports move into place inside the record's transaction, so both happen or neither."""
    from experiments import record

    with folder:
        write_reports(results, folder.path, plots=not args.no_plots, metadata=metadata, header=header, notes=notes)
        if not args.db:
            return folder.commit()
        try:
            record.write_run(args.db, results, metadata, before_commit=folder.commit)
        except BaseException:
            if folder.committed:
                folder.undo()  # the record's COMMIT failed after the reports were in place
            raise
        return folder.final


def as_command(main, argv=None) -> int:
    """`main` as the process's own command (``python -m ...``): SIGTERM is Ctrl-C (the same clean-up,
    "interrupted", exit 130), and no process it started stays behind, whatever ends it: it adopts
    the orphans below it (Linux's child subreaper) and stops every process left below it when it
    ends. Only for a process that owns everything below it, never for main() called from Python."""
    from experiments.tournament.isolate import adopt_orphans, kill_tree
    from train.cli import interrupted

    signal.signal(signal.SIGTERM, interrupted)
    adopt_orphans()
    try:
        return main(argv)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        kill_tree(os.getpid(), include_root=False)


def run_cli(main_body) -> int:
    """Run a command: an agent failure, a failure to start workers or to write the reports is one line
    and exit 1, Ctrl-C exit 130 (and SIGTERM under `as_command`)."""
    try:
        return main_body()
    except (AgentError, RuntimeError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"error: could not write the reports or the record ({e}); nothing was kept\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; nothing was written\n")
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    import envs
    from agents.spec import SPEC_LIST
    from experiments import cli, record

    p = ArgumentParser(prog="python -m experiments.tournament", description="Duplicate-deal tournament between agents.")
    p.add_argument("--game", default="neu", help=f"one of: {', '.join(envs.GAMES)}")
    p.add_argument("--players", type=cli.count, default=None, help="player count (default: the game's default)")
    p.add_argument("--agents", default="heuristic,random",
                   help=f"comma-separated agents (see --mode): {SPEC_LIST}")
    p.add_argument("--mode", default=None, choices=MODES, help="how agents become tables (default: fill, or round-robin for more agents than seats)")
    p.add_argument("--deals", type=cli.count, default=500, help="deals per table; each is played once per seat rotation")
    add_run_flags(p, workers_default=1)
    p.add_argument("--plain", action="store_true", help="an independent deal per game instead of duplicate deals")
    p.add_argument("--out", default=None, help="new folder for JSON/CSV/Markdown/PNG (default: results/tournament-<time>)")
    p.add_argument("--save-replays", default=None, metavar="DIR", help="also write every game as DIR/*.replay.jsonl (see experiments.replay)")
    p.add_argument("--games", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.games is not None:
        p.error("a tournament plays one game, --game NAME; the number of deals is --deals N")
    if args.plain and args.estimator not in (None, "plain"):
        p.error(f"--plain is --estimator plain; it cannot go with --estimator {args.estimator}")

    cli.check_out(args.out, p)  # at once; claimed below, once every other check has passed
    specs = parse_agents(args.agents, p)
    try:
        n = seating.check_game(args.game, args.players)
        tables = seating.make_tables(specs, n, args.mode)
        seating.check_agents((s for t in tables for s in t), args.game, n)
        seating.check_settings(seed=args.seed, workers=args.workers, move_timeout=args.move_timeout, backend=args.backend,
                               engine=args.engine, deals=args.deals)
        vector.choose_tables(args.game, tables, n, args.engine, args.move_timeout, args.isolate)
        if args.estimator == "adjusted" and not args.plain:  # a damaged value file: refused before the folder is claimed
            from experiments.tournament import luck

            luck.value_for(args.game, n, {s.name for t in tables for s in t})
    except ValueError as e:
        p.error(str(e))
    check_backend(p, args, specs, args.game, n)
    if args.db and (why := record.check_db(args.db)):
        p.error(why)
    folder = cli.claim_out(args.out, p, prefix="tournament-", link_latest=False)  # last: nothing after it refuses
    metadata = cli.run_metadata(cli.command_line("python -m experiments.tournament", argv), args.seed, deals=args.deals)

    def body() -> int:
        with folder:  # released if play fails
            res = run_tournament(args.game, specs, n, args.deals, args.seed, args.workers, args.mode, not args.plain,
                                 progress=not args.quiet, on_error=args.on_error, move_timeout=args.move_timeout,
                                 save_replays=args.save_replays, backend=args.backend, ray_address=args.ray_address, engine=args.engine,
                                 isolate=args.isolate, estimator="plain" if args.plain else args.estimator)
            final = finish_run([res], args, folder, metadata)
        print(markdown([res], notes=False), end="")
        print(f"{res['games_played']} games in {res['wall_s']:.1f} s; wrote {final}/" + (f" and {args.db}" if args.db else ""))
        return 0

    return run_cli(body)

