"""PPO rollout workers as Ray actors: the same `RolloutWorker`, anywhere on a Ray cluster.

    python -m train.ppo --backend ray --workers 8 --ray-address auto

`RayRolloutWorkers` is a drop-in for `train.rollout.RolloutWorkers`: the
learner (the update) stays in the driver; each rollout worker is a Ray actor
holding one CPU, spread over the cluster's nodes. Every `collect` sends each
actor the whole state a rollout depends on (the policy's weights, the
snapshot pool, its seed and its share of the steps), so worker ``w`` plays
exactly what local worker process ``w`` plays: the same seed gives the same
run as ``--backend local`` with the same ``--workers``.

An actor that dies (its process or its node lost) is restarted by Ray, up to
`max_restarts` times, and the `collect` it was running is sent again to the
new one; since that call carries everything, the run goes on as if nothing
had happened.
"""

from __future__ import annotations

import os

from train.distributed import cluster_cpus, connect


class _RolloutActor:
    """One rollout worker in a Ray actor process (one torch thread, like a local worker)."""

    def __init__(self, config, worker_class: type) -> None:
        import torch

        torch.set_num_threads(1)
        self.worker = worker_class(config)

    def collect(self, policy: dict, pool: list, seed, num_steps: int) -> dict:
        return self.worker.collect(policy, pool, seed, num_steps)

    def pid(self) -> int:
        return os.getpid()


class RayRolloutWorkers:
    """`config.workers` Ray actors playing rollouts; the interface of `train.rollout.RolloutWorkers`."""

    def __init__(self, config, address: str | None = None, worker_class: type | None = None, max_restarts: int = 3) -> None:
        from train.rollout import RolloutWorker

        ray = connect(address)
        self.ray = ray
        self.num_workers = config.workers
        self.rollout_steps = config.rollout_steps
        if self.num_workers < 1:
            raise ValueError(f"the Ray backend needs at least 1 rollout worker, got {self.num_workers}")
        cpus = cluster_cpus(ray)
        if self.num_workers > cpus:
            # An actor holds a CPU; more actors than CPUs would wait for ever for one.
            raise ValueError(f"{self.num_workers} rollout workers need {self.num_workers} CPUs; the Ray cluster has {cpus}")
        actor = ray.remote(num_cpus=1, max_restarts=max_restarts, max_task_retries=max_restarts)(_RolloutActor)
        self.actors = [
            actor.options(scheduling_strategy="SPREAD").remote(config, worker_class or RolloutWorker)
            for _ in range(self.num_workers)
        ]

    def collect(self, policy: dict, pool: list, seed: tuple, num_steps: int | None = None) -> dict:
        from train.rollout import _numpy, merge

        ray = self.ray
        num_steps = num_steps or self.rollout_steps
        share = -(-num_steps // self.num_workers)  # as the local workers split it
        policy_ref = ray.put(_numpy(policy))  # stored once, read by every actor
        pool_ref = ray.put([_numpy(p) for p in pool])
        refs = [a.collect.remote(policy_ref, pool_ref, [*seed, w], share) for w, a in enumerate(self.actors)]
        try:
            parts = ray.get(refs)
        except ray.exceptions.RayActorError as e:
            raise RuntimeError(f"a rollout worker was lost more often than it could be restarted: {str(e).strip().splitlines()[0]}") from None
        except ray.exceptions.RayTaskError as e:
            raise e.cause if isinstance(e.cause, BaseException) else e from None
        return merge(parts)

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors = []
