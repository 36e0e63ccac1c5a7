"""Recipes: train on cardzoo with another RL library, each runnable as a module.

    python -m experiments.recipes.sb3_maskable_ppo --game neu --players 4 --steps 20000
    python -m experiments.recipes.rllib_ppo        --game neu --players 4 --steps 20000
    python -m experiments.recipes.tianshou_dqn     --game neu --players 4 --steps 20000
    python -m experiments.recipes.torchrl_ppo      --game neu --players 4 --steps 20000
    python -m experiments.recipes.cleanrl_ppo      --game neu --players 4 --steps 20000
    python -m experiments.recipes.pufferlib_ppo    --game neu --players 4 --steps 20000

Each takes ``--game``, ``--players``, ``--steps`` (environment steps to train
for) and ``--seed``, trains, and prints the trained policy's mean return per
game against random players (0 is random's own level: rewards are zero-sum).
The libraries are optional extras: ``pip install 'cardzoo[sb3]'``,
``'cardzoo[rllib]'``, ``'cardzoo[tianshou]'``, ``'cardzoo[torchrl]'``,
``'cardzoo[pufferlib]'``; ``cleanrl_ppo`` needs only gymnasium and torch.
See docs/recipes.md.
"""
