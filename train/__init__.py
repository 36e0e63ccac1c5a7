"""Training: PPO (`train.ppo`), its warm-start variant, rollouts and export.

torch's OpenMP threads spin while they wait for the next operation. When
another process holds one of the cores, a spinning thread keeps the thread it
waits for off the CPU, and a PPO update with two threads ran 14x slower on a
2-core machine (10 s instead of 0.7 s). Passive waiting avoids that; it must
be chosen before torch loads, so it is set here, where every `python -m
train.X` starts. An OMP_WAIT_POLICY already in the environment wins.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
