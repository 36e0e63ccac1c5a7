"""What every recipe shares: its command line, and one check of the trained policy against random players."""

from __future__ import annotations

import importlib
import sys
from typing import Callable, Sequence

import numpy as np

import envs
from agents import make_single_agent
from experiments import cli
from experiments.cli import ArgumentParser


def parse_args(prog: str, description: str, argv: Sequence[str] | None, steps: int,
               extra: Callable[[ArgumentParser], None] | None = None):
    """The options every recipe takes; `extra(parser)` adds a recipe's own."""
    p = ArgumentParser(prog=f"python -m experiments.recipes.{prog}", description=description)
    p.add_argument("--game", default="neu", help=f"one of: {', '.join(envs.available_games())}")
    p.add_argument("--players", type=cli.count, default=4, help="player count")
    p.add_argument("--steps", type=cli.count, default=steps, help="environment steps to train for")
    p.add_argument("--seed", type=cli.seed, default=0, help="seed of the training run and of the check games")
    p.add_argument("--eval-games", type=cli.count_or_zero, default=40, help="games against random players after training")
    if extra is not None:
        extra(p)
    args = p.parse_args(argv)
    if args.game not in envs.available_games():
        p.error(f"unknown game {args.game!r}; valid games: {', '.join(envs.available_games())}")
    try:
        envs.make_raw(args.game, num_players=args.players)
    except ValueError as e:
        p.error(str(e))
    return args


def require(prog: str, modules: Sequence[str], extra: str, how: str | None = None) -> None:
    """Exit 2 with one line when the recipe's library is not installed (or not importable); `how`
    replaces the line's ``pip install 'cardzoo[extra]'``."""
    missing = []
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:  # ray without the rllib extra's dependencies fails here, too
            missing.append(m)
    if missing:
        how = how or f"pip install 'cardzoo[{extra}]'"
        sys.stderr.write(f"python -m experiments.recipes.{prog}: error: needs {', '.join(missing)}: {how}\n")
        sys.exit(2)


def score_vs_random(act: Callable[[np.ndarray, np.ndarray], int], game: str, players: int, games: int,
                    seed: int) -> float:
    """Mean return per game of `act(observation, action_mask) -> action` against random players.

    The policy takes every seat in turn over deals seed, seed + 1, ...; rewards
    are zero-sum, so random play scores 0 on average.
    """
    if games == 0:
        return float("nan")
    tables = [make_single_agent(game, num_players=players, seat=s, opponents="random") for s in range(players)]
    total = 0.0
    for g in range(games):
        env = tables[g % players]
        obs, info = env.reset(seed=seed + g)
        while True:
            obs, reward, terminated, truncated, info = env.step(int(act(obs, info["action_mask"])))
            total += reward
            if terminated or truncated:
                break
    return total / games


def report(library: str, args, steps_done: int, seconds: float, score: float) -> None:
    print(f"{library}: {args.game}, {args.players} players, {steps_done} environment steps in {seconds:.0f} s")
    print(f"mean return per game vs {args.players - 1} random players over {args.eval_games} games: "
          f"{score:+.3f} (random play: 0)")
