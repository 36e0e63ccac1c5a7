"""Rollouts on the batched engine (`envs.vector_env`), all tables in one step.

`train/ppo.py` plays here instead of `train/rollout.py` when the policy reads
the plain observation (no hand-made features, no hint; `--engine auto`, the
default, or `--engine vector`). Each game is self-play (the learner holds
every seat) or one learner seat against one kind of opponent in the other
seats, drawn as `train/rollout.py` draws them (`draw_controllers`): past
snapshots of the network, the game's heuristic or random. Every step, the
waiting decisions of all `N` tables go through the learner's network in one
forward pass, the snapshots' through theirs (one pass per snapshot), the
heuristic's and random's through their `act_batch` (compiled, the same moves
as their `act`), and the compiled engine moves all `N` tables at once, in
this process.

The batch it returns is the one `train/rollout.py` returns, built the same way:

* each learner seat of each table has its own stream of transitions (`next_index`);
* every reward of a step is added to each seat's *latest* transition, whoever
  acted (a reward that arrives on another seat's turn is that seat's too);
* when a table's game ends, every seat's stream there ends (`done`);
* a table keeps starting games while about half a game still fits in its share
  of the rollout's env steps, and every game in progress is finished, so no
  stream is cut off. The engine starts a table's next game by itself; a table
  whose share is used up plays on with its first legal move, unrecorded and
  uncounted, until the last recorded game anywhere ends.

Table `t`'s `k`-th game in a rollout is the AEC env's `reset(seed=s + t + k * N)`
for a rollout seed `s` drawn from the update's seed, so runs are reproducible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import envs
from train.rollout import RolloutConfig, draw_controllers, load_policies, snapshot_moves

# torch and the network are imported where a rollout plays, as in train/rollout.py: the trainers'
# --help stays quick.
if TYPE_CHECKING:
    import torch

SEED_RANGE = 2**40  # rollout seeds; table seeds add at most N * games to it
HEURISTIC, RANDOM = -2, -3  # a table's opponent when it is scripted (snapshots are 0, 1, ...)
SCRIPTED = {"heuristic": HEURISTIC, "random": RANDOM}


def uses_vector_env(config: RolloutConfig) -> bool:
    """Whether `train.ppo` can collect on the batched engine: the policy reads the plain observation
    (the hint is computed one view at a time) and the game has a batched engine. Hand-made features
    are computed one view at a time too, so a run that reads them keeps its AEC tables and its
    games."""
    from envs.vector import KERNELS  # numba loads here, only when asked

    return config.game in KERNELS and not config.features and not config.hint


def another_game(steps_played, lengths_sum: int, lengths_count: int, share: float):
    """As in train/rollout.py: a row starts another game only if about half a game (of the mean
    length so far) still fits in its share of the rollout."""
    return steps_played + 0.5 * lengths_sum / lengths_count <= share


class GrowingColumns:
    """Columns of transitions that grow by doubling (a rollout's size is only known at its end)."""

    def __init__(self, columns: dict) -> None:
        self.n = 0
        self.cap = 1024
        self.cols = {k: np.zeros((self.cap, *shape), dtype) for k, (shape, dtype) in columns.items()}
        self.cols["next_index"][:] = -1

    def reserve(self, k: int) -> np.ndarray:
        """Indices of k new rows (zeroed, next_index -1)."""
        while self.n + k > self.cap:
            for key, a in self.cols.items():
                b = np.zeros((self.cap * 2, *a.shape[1:]), a.dtype)
                b[: self.cap] = a
                if key == "next_index":
                    b[self.cap :] = -1
                self.cols[key] = b
            self.cap *= 2
        idx = np.arange(self.n, self.n + k)
        self.n += k
        return idx

    def arrays(self) -> dict:
        return {k: a[: self.n].copy() for k, a in self.cols.items()}


class VectorRollout:
    """Same interface as `train.rollout.RolloutWorkers`, for self-play and snapshot tables on `envs.vector_env`.

    It plays `num_envs * max(1, workers)` tables in this process (the update
    that follows uses the same cores); torch's threads do the forward passes.
    """

    def __init__(self, config: RolloutConfig) -> None:
        from agents.network import ActorCritic, critic_size, input_size

        if not uses_vector_env(config):
            raise ValueError("the batched rollout plays policies that read the plain observation only "
                             "(no --features, no --hint)")
        self.config = config
        self.game, self.n, self.critic = config.game, config.players, config.critic
        self.reward_scale = config.reward_scale
        self.win_bonus = config.win_bonus * config.reward_scale
        self.num_tables = config.num_envs * max(1, config.workers)
        self.rollout_steps = config.rollout_steps
        self.rules = config.rules
        facts = envs.info(self.game, self.n, **self.rules)
        self.obs_size, self.num_actions = input_size(facts), facts.num_actions
        self.critic_size = critic_size(facts, self.critic)
        self.make_net = lambda: ActorCritic(self.obs_size, self.num_actions, self.critic_size, config.hidden)
        self.net = self.make_net()
        self.snapshots: list[ActorCritic] = []
        from agents import make_agent

        # The game's heuristic, compiled over the batch (agents/heuristic: the same moves as its act()).
        self.heuristic = make_agent("heuristic", self.game, self.n, seed=0) if config.vs_heuristic else None

    def decide(self, obs: np.ndarray, mask: np.ndarray, crit: np.ndarray, gen: torch.Generator):
        """The learner's moves for a batch of decisions: actions, log-probabilities, values."""
        import torch

        with torch.no_grad():
            a, logp, _, v = self.net.get_action_and_value(
                torch.from_numpy(obs), torch.from_numpy(mask), torch.from_numpy(crit), generator=gen
            )
        return a.numpy(), logp.numpy(), v.numpy()

    def collect(self, policy: dict, pool: list, seed, num_steps: int | None = None) -> dict:
        import torch

        num_steps = num_steps or self.rollout_steps
        threads = torch.get_num_threads()
        # Forward passes over a few hundred rows: one thread is fastest, more only wait on each other.
        torch.set_num_threads(1)
        try:
            return self._collect(policy, pool, num_steps, seed)
        finally:
            torch.set_num_threads(threads)

    def _collect(self, policy: dict, pool: list, num_steps: int, seed) -> dict:
        import torch

        rng = np.random.default_rng([*seed, 0])
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        load_policies(self, policy, pool)
        N, n = self.num_tables, self.n
        self.table_seed = int(rng.integers(SEED_RANGE))  # table t's k-th game: the AEC seed table_seed + t + k * N
        venv = envs.vector_env(self.game, N, n, seed=self.table_seed, **self.rules)
        if self.config.vs_random:  # one generator serves the random seats' rows in order
            from agents import make_agent

            random_agent = make_agent("random", self.game, n, seed=int(rng.integers(2**31)))
        scripted = {HEURISTIC: self.heuristic, RANDOM: random_agent if self.config.vs_random else None}
        glob = self.critic == "global"
        buf = GrowingColumns({
            "obs": ((self.obs_size,), np.float32), "masks": ((self.num_actions,), bool),
            "critic_in": ((self.critic_size if glob else 0,), np.float32), "actions": ((), np.int64),
            "logprobs": ((), np.float32), "values": ((), np.float32), "rewards": ((), np.float32),
            "dones": ((), bool), "next_index": ((), np.int64),
        })
        c = buf.cols
        # Who sits at each table in its current game: the learner's seat (-1: every seat, self-play)
        # and the opponent in the other seats: snapshot k (k >= 0), HEURISTIC or RANDOM.
        learner_seat = np.full(N, -1, np.int64)
        opponent = np.full(N, -1, np.int64)
        labels = [""] * N
        self.seating = []  # (table, learner seat, snapshot k or "heuristic"/"random") of each game, in the order they start

        def seat_players(t: int) -> None:
            controllers, labels[t] = draw_controllers(rng, self.config, len(pool))
            learner_seat[t] = -1 if labels[t] == "self" else controllers.index("learner")
            # Every other seat holds the same opponent: ("snapshot", k), "heuristic" or "random".
            other = None if labels[t] == "self" else controllers[(learner_seat[t] + 1) % n]
            opponent[t] = -1 if other is None else other[1] if isinstance(other, tuple) else SCRIPTED[other]
            self.seating.append((t, int(learner_seat[t]), other if isinstance(other, str) else int(opponent[t])))

        for t in range(N):
            seat_players(t)
        open_ = np.full((N, n), -1, np.int64)  # each learner seat's latest transition at each table
        returns = np.zeros((N, n), np.float64)
        live = np.ones(N, bool)  # tables still recording games
        table_steps = np.zeros(N, np.int64)
        game_len = np.zeros(N, np.int64)
        share = num_steps / N
        lengths_sum, lengths_count, steps = 0, 0, 0
        episodes: dict[str, list] = {}
        obs, mask, seat = venv.reset()
        while live.any():
            mask_b = mask.view(bool) if mask.dtype == np.int8 else mask.astype(bool)
            actions = mask_b.argmax(1)  # tables past their share: first legal move, unrecorded
            live_rows = np.flatnonzero(live)
            ls = learner_seat[live_rows]
            mine = (ls < 0) | (ls == seat[live_rows])
            if not mine.all():  # the opponents' seats: one forward pass per snapshot, one act_batch per scripted kind
                theirs = live_rows[~mine]
                for k in np.unique(opponent[theirs]).tolist():
                    rows = theirs[opponent[theirs] == k]
                    if k >= 0:
                        actions[rows] = snapshot_moves(self.snapshots[k], obs[rows], mask_b[rows], gen).numpy()
                    else:
                        actions[rows] = scripted[k].act_batch(obs[rows], mask[rows], seat[rows])
            rows = live_rows[mine]  # the learner's decisions: transitions
            o, m, s = obs[rows], mask_b[rows], seat[rows]
            if glob:
                onehot = np.zeros((rows.size, n), np.float32)
                onehot[np.arange(rows.size), s] = 1.0
                crit = np.concatenate([o, venv.state()[rows], onehot], axis=1)
            else:
                crit = o
            a, logp, v = self.decide(o, m, crit, gen)
            k = buf.reserve(rows.size)
            c = buf.cols
            c["obs"][k], c["masks"][k], c["actions"][k], c["logprobs"][k], c["values"][k] = o, m, a, logp, v
            if glob:
                c["critic_in"][k] = crit
            prev = open_[rows, s]
            has = prev >= 0
            c["next_index"][prev[has]] = k[has]
            open_[rows, s] = k
            actions[rows] = a
            obs, mask, seat, rewards, done = venv.step(actions)
            steps += live_rows.size
            game_len[live_rows] += 1
            # Every learner seat's reward goes to its latest transition, whoever acted.
            r = rewards[live_rows]
            returns[live_rows] += r
            o_all = open_[live_rows]
            hit = (o_all >= 0) & (r != 0)
            c["rewards"][o_all[hit]] += r[hit] * np.float32(self.reward_scale)
            ended = live_rows[done[live_rows]]
            if ended.size:
                ranks = venv.final_ranks[ended]
                o_end = open_[ended]
                if self.win_bonus:
                    firsts = (ranks == 1).sum(1, keepdims=True)
                    bonus = np.where(ranks == 1, self.win_bonus / np.maximum(firsts, 1), 0.0)
                    sel = (o_end >= 0) & (bonus != 0)
                    c["rewards"][o_end[sel]] += bonus[sel].astype(np.float32)
                c["dones"][o_end[o_end >= 0]] = True
                open_[ended] = -1
                for t, rk in zip(ended.tolist(), ranks.tolist()):
                    mine_seats = range(n) if learner_seat[t] < 0 else [int(learner_seat[t])]
                    episodes.setdefault(labels[t], []).extend(
                        {"return": float(returns[t, p]), "rank": int(rk[p])} for p in mine_seats)
                returns[ended] = 0.0
                table_steps[ended] += game_len[ended]
                lengths_sum += int(game_len[ended].sum())
                lengths_count += ended.size
                game_len[ended] = 0
                live[ended] = another_game(table_steps[ended], lengths_sum, lengths_count, share)
                for t in ended[live[ended]].tolist():
                    seat_players(t)
        out = buf.arrays()
        if not glob:  # as train/rollout.py: the plain critic reads the observation, nothing is stored
            out["critic_in"] = np.zeros((0, 0), np.float32)
        out["episodes"] = episodes
        out["env_steps"] = steps
        against = [e["return"] for label, eps in episodes.items() if label != "self" for e in eps]
        out["mean_return"] = float(np.mean(against)) if against else float("nan")  # self-play returns sum to zero
        return out

    def close(self) -> None:
        pass
