"""Train one PPO policy shared by every seat with RLlib, through RLlib's own PettingZooEnv.

    pip install 'cardzoo[rllib]'
    python -m experiments.recipes.rllib_ppo --game neu --players 4 --steps 20000

RLlib's `PettingZooEnv` takes the AEC env as it is; the one change is the key
RLlib's action-masking RLModule (`ActionMaskingTorchRLModule`, shipped in
``ray.rllib.examples``) reads, made by `envs.rllib.rllib_env`. Every seat maps
to the one policy ``"shared"``, so the policy learns by self-play. Afterwards
it plays every seat in turn against random players.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

from experiments.recipes.common import parse_args, report, require, score_vs_random


def main(argv=None) -> int:
    args = parse_args("rllib_ppo", __doc__.splitlines()[0], argv, steps=20_000)
    require("rllib_ppo", ["ray.rllib"], "rllib")
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    from envs.rllib import rllib_env

    register_env("cardzoo", lambda cfg: PettingZooEnv(rllib_env(cfg["game"], num_players=cfg["players"])))
    batch = min(4000, max(128, args.steps // 4))
    config = (
        PPOConfig()
        .environment("cardzoo", env_config={"game": args.game, "players": args.players})
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"head_fcnet_hiddens": [64, 64]})
                }
            )
        )
        .env_runners(num_env_runners=0)  # sample in this process: small budgets, small machines
        .training(train_batch_size_per_learner=batch, minibatch_size=min(128, batch), num_epochs=4)
        .debugging(seed=args.seed)
    )
    if os.environ.get("RAY_ADDRESS"):
        ray.init()  # join the cluster the user named
    else:
        # A fresh one-CPU instance of our own, never some other Ray session on the machine.
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        with warnings.catch_warnings():
            # RLlib's env check steps one random action; when it is illegal, env()
            # ends that check game with -1 (PettingZoo classic's rule) and warns.
            warnings.filterwarnings("ignore", message=".*made an illegal move")
            algo = config.build_algo()
        start, sampled = time.time(), 0
        while sampled < args.steps:
            result = algo.train()
            sampled = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        seconds = time.time() - start
        module = algo.get_module("shared")

        def act(observation, action_mask):
            obs = {"observations": torch.as_tensor(observation)[None], "action_mask": torch.as_tensor(action_mask)[None]}
            with torch.no_grad():
                logits = module.forward_inference({"obs": obs})["action_dist_inputs"][0]
            return int(np.argmax(logits.numpy()))

        score = score_vs_random(act, args.game, args.players, args.eval_games, seed=10_000 + args.seed)
        algo.stop()
    finally:
        ray.shutdown()
    report("RLlib PPO (one shared policy)", args, sampled, seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())
