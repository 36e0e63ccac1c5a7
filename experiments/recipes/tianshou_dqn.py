"""Train a Tianshou DQN learner in seat 0 against random players, like Tianshou's tic-tac-toe example.

    pip install 'cardzoo[tianshou]'
    python -m experiments.recipes.tianshou_dqn --game neu --players 4 --steps 20000

Tianshou's own `PettingZooEnv` takes the AEC env as it is; its multi-agent
manager (`MultiAgentOffPolicyAlgorithm`) gives seat 0 a DQN and every other
seat Tianshou's masked random policy. Tianshou keeps each step's infos in its
replay buffer, which works because every info value is a number and every step
has the same keys. Afterwards the learner plays every seat in turn against
random players.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from experiments.recipes.common import parse_args, report, require, score_vs_random


def main(argv=None) -> int:
    args = parse_args("tianshou_dqn", __doc__.splitlines()[0], argv, steps=20_000)
    require("tianshou_dqn", ["tianshou"], "tianshou")
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    import envs

    def get_env() -> PettingZooEnv:
        return PettingZooEnv(envs.make(args.game, num_players=args.players))

    env = get_env()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[128, 128])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0),
        optim=AdamOptimizerFactory(lr=1e-4),
        n_step_return_horizon=3,
        gamma=0.9,
        target_update_freq=320,
    )
    opponents = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in range(args.players - 1)]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *opponents], env=env)

    training_envs = DummyVectorEnv([get_env for _ in range(4)])
    training_envs.seed(args.seed)
    collector = Collector[CollectStats](
        algorithm, training_envs, VectorReplayBuffer(20_000, len(training_envs)), exploration_noise=True
    )
    collector.reset()
    batch_size = 64
    epoch_steps = min(args.steps, 1000)
    start = time.time()
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=math.ceil(args.steps / epoch_steps),
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=10,
            batch_size=batch_size,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            # Tianshou reports each collected episode's return of the learner (seat 0).
            multi_agent_return_reduction=lambda returns: returns[:, 0],
        )
    )
    seconds = time.time() - start

    def act(observation, action_mask):
        with torch.no_grad():
            q, _ = net(torch.as_tensor(observation)[None])
        q = q[0].numpy()
        return int(np.flatnonzero(action_mask)[np.argmax(q[action_mask.astype(bool)])])

    score = score_vs_random(act, args.game, args.players, args.eval_games, seed=10_000 + args.seed)
    report("Tianshou DQN (seat 0) vs random", args, int(result.train_step), seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())
