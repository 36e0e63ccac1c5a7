"""Training: PPO (`train.ppo`) and its variants (warm start, distillation, expert iteration, best
responses), rollouts, export, and exact solving of the small presets (`train.cfr`).

torch's OpenMP threads (libgomp, on Linux) spin for a while before they sleep
when they wait for the next operation. When other processes hold the cores, a
spinning thread keeps the thread it waits for off the CPU: a PPO update with
two threads took 10.5 s instead of 0.4 s on a 2-core machine running two other
busy processes. A short spin keeps the quiet-machine speed (0.41 s) and took
1.06 s under that load (fully passive waiting, OMP_WAIT_POLICY=PASSIVE: 0.45
and 0.85 s). It must be chosen before torch loads, so it is set here, where
every `python -m train.X` starts; a setting already in the environment wins.
"""

import os

if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")
