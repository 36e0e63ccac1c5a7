"""PPO decision speed, for ``python -m experiments.speed --agents``.

For every shipped checkpoint of the chosen games: microseconds per decision of
`PPOAgent.act` on one observation, and of `act_batch` on a batch of 4,096
views (``--num-envs``), each beside a reference in the same process and round: torch's own
forward pass of the same actor (`ActorCritic.masked_logits` and an argmax),
one row at a time against `act`, the whole batch at once against `act_batch`,
on the policy input computed beforehand (so for checkpoints that read features,
the difference includes the features' cost). The compiled actor alone on those same
inputs (`PPOAgent._greedy`: logits and the first most probable legal move) is timed too,
which compares the networks like for like.
The views are the decisions of random games. CPU time of this process, on one
thread (torch too), and the ratio is the median of the rounds' own ratios, so
a change of load hits both alike. Torch's batched forward is BLAS, which rounds
a row by the batch around it; `act_batch` gives every row the bits it gets
alone (tests/test_ppo.py), and the table says what that costs.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

BATCH = 4096


def _views(agent, count: int = 64) -> tuple[list[dict], np.ndarray, np.ndarray]:
    import envs

    env = envs.make_raw(agent.game, num_players=agent.num_players)
    views, seed = [], 0
    while len(views) < count:
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            views.append({"observation": obs["observation"].copy(), "action_mask": obs["action_mask"].copy()})
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[seed % len(legal)]))
        seed += 1
    views = views[:count]
    return views, np.stack([v["observation"] for v in views]).astype(np.float32), np.stack([v["action_mask"] for v in views])


def _cpu_us(fn, calls: int) -> float:
    start = time.process_time()
    fn()
    return (time.process_time() - start) / calls * 1e6


def measure(path, repeats: int, batch: int = BATCH) -> dict:
    """act and act_batch µs per decision, and torch's, over `repeats` interleaved rounds."""
    import torch

    from agents.ppo import PPOAgent

    agent = PPOAgent.load(path, seed=0)
    views, obs, masks = _views(agent)
    x = np.stack([agent._to_input(o, m) for o, m in zip(obs, masks)]).astype(np.float32)
    pick = np.arange(batch) % len(views)
    big_obs, big_masks, big_x = obs[pick], masks[pick], torch.from_numpy(x[pick])
    seats = np.zeros(batch, np.int64)
    net, one_x, one_m = agent.net, [torch.from_numpy(r[None]) for r in x], [torch.from_numpy(m[None].astype(bool)) for m in masks]
    big_m = torch.from_numpy(big_masks.astype(bool))
    big_xn, big_mn = np.ascontiguousarray(x[pick]), np.ascontiguousarray(big_masks.astype(np.int8))

    def act():
        for v in views:
            agent.act(v)

    def torch_one():
        with torch.no_grad():
            for r, m in zip(one_x, one_m):
                int(net.masked_logits(r, m).argmax())

    def act_batch():
        agent.act_batch(big_obs, big_masks, seats)

    def torch_batch():
        with torch.no_grad():
            net.masked_logits(big_x, big_m).argmax(-1)

    def actor_batch():
        agent._greedy(big_xn, big_mn)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        act(), torch_one(), act_batch(), torch_batch(), actor_batch()  # compiled and warm before timing
        rounds = [(_cpu_us(act, len(views)), _cpu_us(torch_one, len(views)), _cpu_us(act_batch, batch), _cpu_us(torch_batch, batch),
                   _cpu_us(actor_batch, batch)) for _ in range(repeats)]
    finally:
        torch.set_num_threads(threads)
    med = [statistics.median(r[i] for r in rounds) for i in range(5)]
    return {"act_us": med[0], "torch_one_us": med[1], "act_batch_us": med[2], "torch_batch_us": med[3], "actor_batch_us": med[4],
            "act_vs_torch": statistics.median(r[1] / r[0] for r in rounds),
            "batch_vs_torch": statistics.median(r[3] / r[2] for r in rounds),
            "actor_vs_torch": statistics.median(r[3] / r[4] for r in rounds),
            "reads": "observation" if agent._plain else "features" + (" + hint" if agent._hinter is not None else "")}


def print_agent_speed(games: list[str], repeats: int, batch: int = BATCH) -> None:
    from agents.ppo import CHECKPOINT_DIR

    paths = [p for p in sorted(CHECKPOINT_DIR.glob("*.pt")) if any(p.stem.startswith(g + "_") and p.stem[len(g) + 1].isdigit() for g in games)]
    print(f"\nPPO decisions, µs per decision (CPU time, one thread), median of {repeats} interleaved rounds; torch: the same actor's "
          "forward pass on the policy input (the features computed beforehand, untimed)")
    print(f"| checkpoint | reads | act | torch, one row | act vs torch | act_batch ({batch:,} rows) | torch, {batch:,} rows "
          "| act_batch vs torch | compiled actor alone | actor alone vs torch |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        m = measure(path, repeats, batch)
        print(f"| {path.stem} | {m['reads']} | {m['act_us']:.1f} | {m['torch_one_us']:.1f} | {m['act_vs_torch']:.1f}x "
              f"| {m['act_batch_us']:.2f} | {m['torch_batch_us']:.2f} | {m['batch_vs_torch']:.2f}x | {m['actor_batch_us']:.2f} "
              f"| {m['actor_vs_torch']:.2f}x |")
