"""Batched self-play rollouts for `train/ppo.py`: many tables side by side, worker processes.

A rollout is a batch of *whole games*. Each worker plays `num_envs` tables at
once; every loop it advances each table to its next live decision, groups the
waiting decisions by who controls the seat (the learner, a frozen snapshot,
the heuristic, random) and answers each group with one forward pass (or one
`act` call per scripted seat). A table starts a new game only while about
half a game still fits in its share of the rollout's env steps, and every
game in progress is finished, so no trajectory is cut off.

Only the learner's seats produce transitions. Each learner seat of each table
has its own stream; `Table.add_rewards` adds every reward the env hands out
to the seat's *latest* transition, whoever's turn it was, and a seat's stream
ends (`done`) when the game ends (a seat eliminated earlier collects nothing more).
"""

from __future__ import annotations

import multiprocessing as mp
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

import envs

# torch and the network are imported where a rollout plays, not with this module: the trainers'
# --help, which imports it, stays quick.
if TYPE_CHECKING:
    import torch

    from agents.network import ActorCritic


@dataclass(frozen=True)
class RolloutConfig:
    """Everything a collector needs, built once per run (`RolloutConfig.of`) and handed the same way
    to every collector: worker processes, Ray actors and the batched engine."""

    game: str
    players: int
    critic: str
    hidden: int
    num_envs: int  # tables per worker (the batched engine plays num_envs * max(1, workers))
    workers: int
    rollout_steps: int
    self_play: float
    vs_heuristic: float
    vs_random: float
    reward_scale: float  # rewards are multiplied by it before they are stored
    features: bool = False  # the policy also reads the game's hand-made features
    hint: bool = False  # ... and a one-hot of the heuristic's move
    win_bonus: float = 0.0  # score units for first place, before the reward scale
    rules: dict = field(default_factory=dict)  # rule options of every env played

    @classmethod
    def of(cls, args, variant, reward_scale: float) -> "RolloutConfig":
        """From a run's arguments and its variant (train.ppo.Variant: features, hint, win bonus, rules)."""
        return cls(args.game, args.players, args.critic, args.hidden, args.num_envs, args.workers, args.rollout_steps,
                   args.self_play, args.vs_heuristic, args.vs_random, reward_scale, variant.features, variant.hint,
                   variant.win_bonus, dict(variant.rules))


def measure_scales(game: str, num_players: int, critic: str, seed: int, games: int = 40, features: bool = False,
                   hint: bool = False, rules: dict | None = None) -> dict:
    """Per-feature mean/std of observations (and critic inputs) and a reward scale, from random play.

    Observations are raw counts and totals (a running total up to 101, scores
    in the hundreds); the network divides by these fixed numbers. The reward
    scale is 1 / std of a seat's return in a random game.
    """
    from agents.network import critic_input, policy_input

    env = envs.make_raw(game, num_players=num_players, **(rules or {}))
    to_input = policy_input(game, num_players, features, hint)
    rng = np.random.default_rng([seed, 7])
    obs_rows, critic_rows, returns = [], [], []
    for g in range(games):
        env.reset(seed=int(rng.integers(2**31)))
        ret = dict.fromkeys(env.possible_agents, 0.0)
        while not all(env.terminations.values()):
            agent = env.agent_selection
            if env.terminations[agent]:
                env.step(None)
                continue
            o = env.observe(agent)
            x = to_input(o["observation"], o["action_mask"])
            obs_rows.append(x)
            critic_rows.append(critic_input(env, agent, x, critic))
            legal = np.flatnonzero(o["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            for a, r in env.rewards.items():
                ret[a] += r
        returns.extend(ret.values())

    def mean_std(rows):
        x = np.asarray(rows, np.float64)
        std = x.std(0)
        return x.mean(0).astype(np.float32), np.where(std < 1e-6, 1.0, std).astype(np.float32)

    obs_mean, obs_std = mean_std(obs_rows)
    critic_mean, critic_std = mean_std(critic_rows)
    ret_std = float(np.std(returns))
    return {
        "obs_mean": obs_mean,
        "obs_std": obs_std,
        "critic_mean": critic_mean,
        "critic_std": critic_std,
        "reward_scale": 1.0 / ret_std if ret_std > 1e-8 else 1.0,
    }


class Buffer:
    """Transitions of the learner's seats, in the order they were decided."""

    def __init__(self) -> None:
        self.obs, self.masks, self.critic_in = [], [], []
        self.actions, self.logprobs, self.values = [], [], []
        self.rewards, self.dones, self.next_index = [], [], []

    def add(self, obs, mask, critic_in, action, logprob, value) -> int:
        self.obs.append(obs)
        self.masks.append(mask)
        if critic_in is not None:  # only the global critic stores its own input
            self.critic_in.append(critic_in)
        self.actions.append(action)
        self.logprobs.append(logprob)
        self.values.append(value)
        self.rewards.append(0.0)
        self.dones.append(False)
        self.next_index.append(-1)
        return len(self.actions) - 1

    def arrays(self, obs_size: int, num_actions: int, critic_size: int) -> dict:
        n = len(self.actions)
        return {
            "obs": np.asarray(self.obs, np.float32).reshape(n, obs_size),
            "masks": np.asarray(self.masks, bool).reshape(n, num_actions),
            "critic_in": np.asarray(self.critic_in, np.float32).reshape(len(self.critic_in), -1 if self.critic_in else 0),
            "actions": np.asarray(self.actions, np.int64),
            "logprobs": np.asarray(self.logprobs, np.float32),
            "values": np.asarray(self.values, np.float32),
            "rewards": np.asarray(self.rewards, np.float32),
            "dones": np.asarray(self.dones, bool),
            "next_index": np.asarray(self.next_index, np.int64),
        }


class Table:
    """One game in the batch: who controls each seat, and each learner seat's open transition."""

    def __init__(self, env, win_bonus: float = 0.0) -> None:
        self.env = env
        self.win_bonus = win_bonus  # already multiplied by the reward scale
        self.controllers: list = []
        self.label = ""
        self.open: list[int] = []
        self.returns: list[float] = []
        self.scripted: dict[int, object] = {}
        self.steps = 0  # env steps played at this table in this rollout
        self.env_steps_this_game = 0

    def start(self, seed: int, controllers: list, label: str, scripted: dict) -> None:
        self.env.reset(seed=seed)
        self.controllers, self.label, self.scripted = controllers, label, scripted
        self.env_steps_this_game = 0
        n = len(controllers)
        self.open = [-1] * n
        self.returns = [0.0] * n
        for agent in scripted.values():
            agent.reset()

    def decided(self, seat: int, k: int, buf: Buffer) -> None:
        """Transition k is the seat's new decision: it follows the seat's previous one."""
        if self.open[seat] >= 0:
            buf.next_index[self.open[seat]] = k
        self.open[seat] = k

    def close(self, seat: int, buf: Buffer) -> None:
        if self.open[seat] >= 0:
            buf.dones[self.open[seat]] = True
            self.open[seat] = -1

    def advance(self, buf: Buffer) -> bool:
        """Step terminated agents (None) until a live agent must act; False when the game is over."""
        env = self.env
        while True:
            if not env.agents or all(env.terminations.values()):
                if self.win_bonus:
                    self.reward_first_place(buf)
                for seat in range(len(self.open)):
                    self.close(seat, buf)
                return False
            agent = env.agent_selection
            if not env.terminations[agent]:
                return True
            self.close(env.possible_agents.index(agent), buf)
            env.step(None)

    def add_rewards(self, buf: Buffer, scale: float) -> None:
        """Rewards of the last step go to each learner seat's latest transition, whoever acted."""
        rewards = self.env.rewards
        for seat, agent in enumerate(self.env.possible_agents):
            r = rewards.get(agent, 0.0)
            if r:
                self.returns[seat] += r
                if self.open[seat] >= 0:
                    buf.rewards[self.open[seat]] += r * scale

    def reward_first_place(self, buf: Buffer) -> None:
        """--win-bonus: the seat that finishes first gets a last reward (tied firsts share it).
        Eliminated seats finish behind every seat still in, so they are never first."""
        ranks = self.final_ranks()
        firsts = ranks.count(1)
        for seat, rank in enumerate(ranks):
            if rank == 1 and self.open[seat] >= 0:
                buf.rewards[self.open[seat]] += self.win_bonus / firsts

    def final_ranks(self) -> list[int]:
        env = self.env
        ranks = env.infos[env.agents[0]].get("final_ranks") if env.agents else None
        if ranks is None or not any(ranks):  # fall back on returns (rank 1 = best)
            return [1 + sum(o > r for o in self.returns) for r in self.returns]
        return [int(r) for r in ranks]


def draw_controllers(rng: np.random.Generator, config: RolloutConfig, pool_len: int):
    """Draw who sits at a table: self-play, or one learner seat vs one kind of opponent.

    Returns the seats' controllers ("learner", "heuristic", "random" or
    ("snapshot", k)) and the label the table's games are logged under.
    """
    n = config.players
    u = rng.random()
    if u < config.self_play:
        return ["learner"] * n, "self"
    u -= config.self_play
    if u < config.vs_heuristic:
        opponent, label = "heuristic", "heuristic"
    elif u < config.vs_heuristic + config.vs_random:
        opponent, label = "random", "random"
    else:
        # half the snapshot games against the latest, which the learner must beat to join the pool
        k = pool_len - 1 if rng.random() < 0.5 else int(rng.integers(pool_len))
        opponent, label = ("snapshot", k), f"snapshot_{k}"
    controllers = [opponent] * n
    controllers[int(rng.integers(n))] = "learner"
    return controllers, label


def load_policies(collector, policy: dict, pool: list) -> None:
    """The learner's weights into `collector.net`, the pool's into `collector.snapshots` (built as needed)."""
    import torch

    collector.net.load_state_dict({k: torch.as_tensor(v) for k, v in policy.items()})
    while len(collector.snapshots) < len(pool):
        collector.snapshots.append(collector.make_net())
    for net, weights in zip(collector.snapshots, pool):
        net.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})


def snapshot_moves(net: ActorCritic, obs: np.ndarray, masks: np.ndarray, gen: torch.Generator) -> torch.Tensor:
    """A frozen snapshot's moves: sampled from its masked policy (its value is never needed)."""
    import torch

    from agents.network import sample

    with torch.no_grad():
        probs = torch.softmax(net.masked_logits(torch.from_numpy(obs), torch.from_numpy(masks)), -1)
        return sample(probs, gen)


class RolloutWorker:
    """Plays tables side by side and returns the learner's transitions (one process, or in-process).

    Who sits at a table is `seat`, and the agents that play scripted seats
    are `SCRIPTED` (controller -> agent kind): a subclass changes those (the
    warm start's teacher, `train/ppo_warmstart.py`) and `answer`.
    """

    SCRIPTED = {"heuristic": "heuristic", "random": "random"}

    def __init__(self, config: RolloutConfig, num_envs: int | None = None) -> None:
        from agents.network import ActorCritic, critic_size, input_size, policy_input

        self.config = config
        self.game, self.n, self.critic = config.game, config.players, config.critic
        self.reward_scale = config.reward_scale
        self.envs = [envs.make_raw(self.game, num_players=self.n, **config.rules) for _ in range(num_envs or config.num_envs)]
        facts = envs.info(self.game, self.n, **config.rules)
        self.obs_size, self.num_actions = input_size(facts, config.features, config.hint), facts.num_actions  # the policy's input size
        self.critic_size = critic_size(facts, self.critic, config.features, config.hint)
        self.to_input = policy_input(self.game, self.n, config.features, config.hint)
        self.make_net = lambda: ActorCritic(self.obs_size, self.num_actions, self.critic_size, config.hidden)
        self.net = self.make_net()
        self.snapshots: list = []

    def seat(self, rng: np.random.Generator, pool_len: int):
        """The controllers of a table's next game, and the label its games are logged under."""
        return draw_controllers(rng, self.config, pool_len)

    def collect(self, policy: dict, pool: list, seed, num_steps: int) -> dict:
        """Play about num_steps env steps of whole games."""
        import torch

        from agents import make_agent

        rng = np.random.default_rng(seed)
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        load_policies(self, policy, pool)
        buf = Buffer()
        episodes = defaultdict(list)
        steps = 0
        tables = [Table(env, self.config.win_bonus * self.reward_scale) for env in self.envs]

        def start(t: Table) -> None:
            controllers, label = self.seat(rng, len(pool))
            scripted = {}
            for seat, c in enumerate(controllers):
                if c in self.SCRIPTED:
                    scripted[seat] = make_agent(self.SCRIPTED[c], self.game, self.n, seed=int(rng.integers(2**31)))
            t.start(int(rng.integers(2**31)), controllers, label, scripted)

        share = num_steps / len(tables)  # env steps per table
        lengths: list[int] = []
        for t in tables:
            start(t)
        live = tables
        while live:
            waiting = []
            for t in live:
                while not t.advance(buf):
                    ranks = t.final_ranks()
                    for seat, c in enumerate(t.controllers):
                        if c == "learner":
                            episodes[t.label].append({"return": t.returns[seat], "rank": ranks[seat]})
                    t.steps += t.env_steps_this_game
                    lengths.append(t.env_steps_this_game)
                    # A table starts another game only if about half a game still fits in its share,
                    # so the rollout's size comes out close to num_steps on average.
                    if t.steps + 0.5 * np.mean(lengths) > share:
                        break
                    start(t)
                else:
                    waiting.append(t)
            live = waiting
            actions = self._decide(live, buf, gen)
            for t, action in zip(live, actions):
                t.env.step(action)
                t.env_steps_this_game += 1
                steps += 1
                t.add_rewards(buf, self.reward_scale)
        out = buf.arrays(self.obs_size, self.num_actions, self.critic_size)
        out["episodes"] = dict(episodes)
        out["env_steps"] = steps
        return out

    def _decide(self, live: list[Table], buf: Buffer, gen: torch.Generator) -> list[int]:
        """One forward pass per controller for every waiting decision."""
        import torch

        groups = defaultdict(list)
        views = []
        for i, t in enumerate(live):
            agent = t.env.agent_selection
            seat = t.env.possible_agents.index(agent)
            view = t.env.observe(agent)
            c = t.controllers[seat]
            # Scripted agents read the observation dict; networks read the input vector (+ features, hint).
            x = None if c in ("heuristic", "random") else self.to_input(view["observation"], view["action_mask"])
            views.append((agent, seat, view, x))
            groups[c if isinstance(c, str) else c[1]].append(i)
        actions = [0] * len(live)
        with torch.no_grad():
            for key, idx in groups.items():
                self.answer(key, idx, live, views, buf, gen, actions)
        return actions

    def answer(self, key, idx: list[int], live: list[Table], views: list, buf: Buffer, gen, actions: list) -> None:
        """Fill `actions[i]` for the decisions `idx` of one controller (`key`)."""
        import torch

        from agents.network import critic_input

        if key == "learner":
            obs = np.stack([views[i][3] for i in idx])
            masks = np.stack([views[i][2]["action_mask"] for i in idx]).astype(bool)
            crit = (
                obs
                if self.critic == "plain"
                else np.stack([critic_input(live[i].env, views[i][0], views[i][3], self.critic) for i in idx])
            )
            a, logp, _, v = self.net.get_action_and_value(
                torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(crit), generator=gen
            )
            a, logp, v = a.tolist(), logp.tolist(), v.tolist()
            for j, i in enumerate(idx):
                t, seat = live[i], views[i][1]
                k = buf.add(obs[j], masks[j], crit[j] if self.critic == "global" else None, a[j], logp[j], v[j])
                t.decided(seat, k, buf)
                actions[i] = a[j]
        elif isinstance(key, int):  # a frozen snapshot
            obs = np.stack([views[i][3] for i in idx])
            masks = np.stack([views[i][2]["action_mask"] for i in idx]).astype(bool)
            for i, a in zip(idx, snapshot_moves(self.snapshots[key], obs, masks, gen).tolist()):
                actions[i] = a
        else:  # a scripted seat (heuristic, random): the Agent interface, one call per seat
            for i in idx:
                actions[i] = live[i].scripted[views[i][1]].act(views[i][2])


def _worker_main(conn, config: RolloutConfig, worker_class: type) -> None:
    import torch

    torch.set_num_threads(1)  # one core per worker
    worker = worker_class(config)
    while True:
        msg = conn.recv()
        if msg[0] == "close":
            break
        _, policy, pool, seed, num_steps = msg
        conn.send(worker.collect(policy, pool, seed, num_steps))
    conn.close()


def _numpy(state_dict: dict) -> dict:
    return {k: v.detach().cpu().numpy() for k, v in state_dict.items()}


class RolloutWorkers:
    """`config.workers` processes (spawned, one core each) running `worker_class`, or collection in
    this process when 0."""

    def __init__(self, config: RolloutConfig, worker_class: type = RolloutWorker) -> None:
        self.num_workers = config.workers
        self.rollout_steps = config.rollout_steps
        self.local = None
        self.conns, self.procs = [], []
        if self.num_workers == 0:
            self.local = worker_class(config)
            return
        ctx = mp.get_context("spawn")  # fork after torch has started threads can deadlock
        for _ in range(self.num_workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker_main, args=(child, config, worker_class), daemon=True)
            p.start()
            self.conns.append(parent)
            self.procs.append(p)

    def collect(self, policy: dict, pool: list, seed: tuple, num_steps: int | None = None) -> dict:
        policy, pool = _numpy(policy), [_numpy(p) for p in pool]
        num_steps = num_steps or self.rollout_steps
        if self.local is not None:
            parts = [self.local.collect(policy, pool, [*seed, 0], num_steps)]
        else:
            share = -(-num_steps // self.num_workers)
            for w, conn in enumerate(self.conns):
                conn.send(("collect", policy, pool, [*seed, w], share))
            parts = [conn.recv() for conn in self.conns]
        return merge(parts)

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("close",))
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        self.conns, self.procs = [], []


def merge(parts: list[dict]) -> dict:
    """Concatenate workers' batches; each worker's next_index moves by the transitions before it."""
    out = {}
    offset = 0
    next_index = []
    for p in parts:
        ni = p["next_index"].copy()
        ni[ni >= 0] += offset
        next_index.append(ni)
        offset += len(p["actions"])
    for key in ("obs", "masks", "critic_in", "actions", "logprobs", "values", "rewards", "dones"):
        out[key] = np.concatenate([p[key] for p in parts])
    out["next_index"] = np.concatenate(next_index)
    out["env_steps"] = sum(p["env_steps"] for p in parts)
    episodes = defaultdict(list)
    for p in parts:
        for label, eps in p["episodes"].items():
            episodes[label].extend(eps)
    out["episodes"] = dict(episodes)
    rets = [e["return"] for label, eps in episodes.items() if label != "self" for e in eps]
    out["mean_return"] = float(np.mean(rets)) if rets else float("nan")
    return out
