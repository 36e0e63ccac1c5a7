"""Soak test: play many games in every env and check the invariants at every step.

    python -m experiments.soak --deals 100000
    python -m experiments.soak --game neu --players 4 --agents random --seed 17 --deals 1   # replay one

Games cycle over every available env (`envs.available_games()`), every player
count and every agent kind (uniform random; the game's heuristic where
`agents.make_agent("heuristic", ...)` works; and a mix: heuristic on even
seats, random on odd); ``--game NAME`` or ``--games A,B`` and ``--players``
narrow that. Game ``i`` of a run uses seed ``--seed + i`` for the
deal, the agents and the checks, so a failure is replayed exactly by the
command printed next to it. The exit status is 1 if any game failed.

Every game is played by `envs.testing.play_checked_game`, which checks the
invariants at every step (listed in `envs.testing`; the property, leak and fuzz
tests use the same checks), with ``--deep-every`` / ``--leak-every`` setting how
often the costlier ones run.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from collections import Counter

import envs
from envs.testing import GameResult, InvariantError
from envs.testing import play_checked_game as checked_game
from experiments import cli
from experiments.cli import ArgumentParser

# -- playing games ------------------------------------------------------------


def play_checked_game(game: str, num_players: int, seed: int, agent_kind: str = "random", rule_options: dict | None = None,
                      **checks) -> GameResult:
    """`envs.testing.play_checked_game` with one kind of agent; a failure names the replay command."""
    from agents import make_agents

    bots = make_agents(agent_kind, game, num_players, seed)
    for b in bots:
        b.reset()
    replay = "" if rule_options else f" (replay: {replay_command(game, num_players, agent_kind, seed)})"
    return checked_game(game, num_players, seed, [b.act for b in bots], rule_options, where=replay, **checks)


# -- command line ---------------------------------------------------------------


def player_counts(game: str) -> list[int]:
    engine_cls = envs.module(game).raw_env.engine_cls
    return list(range(engine_cls.min_players, engine_cls.max_players + 1))


def heuristic_available(game: str, n: int) -> bool:
    from agents import make_agents

    try:
        make_agents("heuristic", game, n, 0)
    except (ValueError, ImportError, NotImplementedError):
        return False
    return True


def replay_command(game: str, n: int, kind: str, seed: int) -> str:
    return f"python -m experiments.soak --game {game} --players {n} --agents {kind} --seed {seed} --deals 1"


def _parse_args(argv):
    p = ArgumentParser(prog="python -m experiments.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=cli.count, default=1000, help="games to play, each on a new deal")
    p.add_argument("--game", action="append", help="only this game (repeatable; default: every available game)")
    p.add_argument("--games", default=None, help="only these games, comma-separated (default: every available game)")
    p.add_argument("--players", type=cli.count, action="append", help="only this player count (repeatable)")
    p.add_argument("--agents", default="random,heuristic,mixed", help="comma-separated: random, heuristic, mixed")
    p.add_argument("--seed", type=cli.seed, default=0, help="game i uses seed SEED + i")
    p.add_argument("--deep-every", type=cli.count_or_zero, default=10, help="check every masked-in action every K steps (0 = never)")
    p.add_argument("--leak-every", type=cli.count_or_zero, default=10, help="check information leaks every K steps (0 = never)")
    p.add_argument("--max-failures", type=cli.count, default=20, help="stop after this many failed games")
    p.add_argument("--time-limit", type=cli.seconds, default=0, help="stop after this many seconds (0 = no limit)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    available = envs.available_games()
    if not available:
        p.error("no game is implemented yet")
    games = list(args.game or [])
    if args.games is not None:
        games += cli.parse_games(args.games, p)
    args.game = games or None
    games = games or available
    for g in games:
        if g not in available:
            p.error(f"unknown or unavailable game {g!r}; available: {', '.join(available)}")
    kinds = [k.strip() for k in args.agents.split(",") if k.strip()]
    for k in kinds:
        if k not in ("random", "heuristic", "mixed"):
            p.error(f"unknown agent kind {k!r}; valid: random, heuristic, mixed")
    if not kinds:
        p.error("--agents is empty; valid: random, heuristic, mixed")
    combos = []
    for g in games:
        counts = player_counts(g)
        for n in args.players or counts:
            if n not in counts:
                if args.game and args.players:
                    p.error(f"{g} is played by {counts[0]} to {counts[-1]} players, not {n}")
                continue
            for k in kinds:
                if k == "random" or heuristic_available(g, n):
                    combos.append((g, n, k))
    if not combos:
        p.error("nothing to play: no available game/player count/agent kind combination")
    return args, combos


def main(argv=None) -> int:
    args, combos = _parse_args(argv)
    from tqdm import tqdm

    failures = []
    per_game: Counter = Counter()
    steps = 0
    start = time.perf_counter()
    bar = tqdm(total=args.deals, unit="game", disable=args.no_progress, dynamic_ncols=True)
    played = 0
    for i in range(args.deals):
        if args.time_limit and time.perf_counter() - start > args.time_limit:
            break
        game, n, kind = combos[i % len(combos)]
        seed = args.seed + i
        try:
            result = play_checked_game(
                game, n, seed, kind, deep_every=args.deep_every, leak_every=args.leak_every, illegal_samples=1
            )
            steps += result.steps
        except Exception as e:  # noqa: BLE001 - any crash is a failure to report, not a reason to stop
            if isinstance(e, InvariantError):
                detail = str(e).split(": ", 1)[1].rsplit(" (replay: ", 1)[0]
            else:
                detail = f"{type(e).__name__}: {e}"
            if args.deals == 1:
                detail += "\n" + traceback.format_exc()
            failures.append((game, n, kind, seed, detail))
            bar.write(f"FAIL {game} {n}p {kind} seed {seed}: {detail.splitlines()[0]}")
            if len(failures) >= args.max_failures:
                played += 1
                per_game[game] += 1
                bar.update(1)
                bar.write(f"stopping after {len(failures)} failures (--max-failures)")
                break
        played += 1
        per_game[game] += 1
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - start
    rate = played / elapsed if elapsed > 0 else math.inf
    print(
        f"soak: {played} games ({', '.join(f'{g} {c}' for g, c in per_game.items())}), "
        f"{steps} agent steps in {elapsed:.1f}s: {rate:.1f} games/s, {steps / max(elapsed, 1e-9):.0f} steps/s "
        f"(with checks); {len(failures)} failure(s)"
    )
    for game, n, kind, seed, detail in failures:
        print(f"FAILED {game} {n}p {kind} seed {seed}: {detail}")
        print(f"  replay: {replay_command(game, n, kind, seed)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
