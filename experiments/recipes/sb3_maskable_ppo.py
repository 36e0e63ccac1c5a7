"""Train sb3-contrib's MaskablePPO on one seat of a game against heuristic players.

    pip install 'cardzoo[sb3]'
    python -m experiments.recipes.sb3_maskable_ppo --game neu --players 4 --steps 20000

`agents.make_single_agent` is a plain `gymnasium.Env` with sb3-contrib's
``action_masks()``, so MaskablePPO needs no wrapper. The learner plays seat 0
against heuristic opponents; afterwards it plays every seat in turn against
random players and the mean return per game is printed.
"""

from __future__ import annotations

import sys
import time

from agents import make_single_agent
from experiments.recipes.common import parse_args, report, require, score_vs_random


def main(argv=None) -> int:
    args = parse_args("sb3_maskable_ppo", __doc__.splitlines()[0], argv, steps=20_000)
    require("sb3_maskable_ppo", ["stable_baselines3", "sb3_contrib"], "sb3")
    from sb3_contrib import MaskablePPO

    env = make_single_agent(args.game, num_players=args.players, seat=0, opponents="heuristic")
    n_steps = min(2048, max(32, args.steps))
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=min(64, n_steps), seed=args.seed, verbose=0)
    start = time.time()
    model.learn(total_timesteps=args.steps)
    seconds = time.time() - start

    def act(observation, action_mask):
        action, _ = model.predict(observation, action_masks=action_mask, deterministic=True)
        return int(action)

    score = score_vs_random(act, args.game, args.players, args.eval_games, seed=10_000 + args.seed)
    report("sb3-contrib MaskablePPO", args, model.num_timesteps, seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())
