"""A teacher's decisions, to fit a network to: any agent spec in every seat of the batched engine.

    from train.distill import TeacherGames, soft_targets
    data = TeacherGames("heuristic", "neu", 4, tables=64, reward_scale=1.0).collect(200_000, seed=0)

The teacher is any agent spec (`agents.make_agent`: "heuristic", "ppo:PATH",
"FILE.py:Name", "pimc"...). It plays every seat of `tables` games side by
side, through `train.best_response.Target`: on `envs.vector_env`, one
``act_batch`` call a step, when it has the batched protocol (seeded per row
and seat from each game's seed when it keeps state per row); else on AEC
tables, one agent object per table and seat, told its information state
before each move (`envs.belief.informed`: a search agent needs it) and asked
with ``act()``. Table r's k-th game has the same seed on both paths. Every decision is
with a choice is recorded (a forced move teaches nothing): the policy's input
(the observation, followed by the game's features when asked), the mask, the
teacher's move, and each seat's rewards on its latest recorded decision, the
stream ending with the game (the columns `train.ppo_warmstart.fit` reads; a
reward that reaches a seat before its first choice in a game is dropped, as in
`train.ppo_features`).

Values. A teacher that values its options offers them after each decision:
``option_values_batch(obs, mask, seat)`` -> float ``[N, num_actions]`` after
``act_batch`` on the same rows, or ``option_values(observation)`` -> float
``[num_actions]`` after ``act`` on the same observation (a search agent
returns the values of the search it just ran). NaN marks an action without a
value. They are kept as the ``values`` column, and `soft_targets` turns them
into a distribution over the legal moves to fit (the teacher's move where a
row has none).

Deals are training deals of `train.best_response` (seeds below its
``TRAIN_DEALS``), so no held-out evaluation deal is ever a teacher's game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import envs
from agents.spec import is_upper_bound
from envs.belief import informed
from train import best_response as br
from train.rollout import Buffer, Table
from train.rollout_vector import GrowingColumns

# torch and the network are imported where the teacher plays, so `train.ppo_search`'s --help is quick.
if TYPE_CHECKING:
    import torch


def batch_input(game: str, num_players: int, features: bool, obs: np.ndarray, mask: np.ndarray,
                hint: bool = False) -> np.ndarray:
    """The policy's input for a batch of views: the observation, plus the game's features when asked
    (compiled over the batch where the game has that, else one view at a time), plus with `hint` the
    heuristic's move for each view, one-hot (`with_hint`)."""
    if hint:
        return with_hint(game, num_players, batch_input(game, num_players, features, obs, mask), obs, mask)
    if not features:
        return obs
    from agents.features import batch_features, has_batch_features
    from agents.network import policy_input

    if has_batch_features(game):
        return batch_features(game, obs, num_players)
    one = policy_input(game, num_players, True, False)
    return np.stack([one(o, m) for o, m in zip(obs, mask)]).astype(np.float32)


def heuristic_moves(game: str, num_players: int, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The heuristic's move for each view (obs [N, obs_size], mask [N, actions]), from its batched twin."""
    from agents import make_agent

    mask = np.asarray(mask)
    return make_agent("heuristic", game, num_players, seed=0).act_batch(obs, mask.astype(np.int8), np.zeros(len(obs), np.int64))


def with_hint(game: str, num_players: int, x: np.ndarray, obs: np.ndarray, mask: np.ndarray,
              moves: np.ndarray | None = None) -> np.ndarray:
    """Inputs `x` [N, width] followed by the heuristic's move for each view (obs [N, obs_size], mask), one-hot:
    the columns `--hint` adds (`agents.network.policy_input`). `moves`: those moves, if already known."""
    mask = np.asarray(mask)
    moves = heuristic_moves(game, num_players, obs, mask) if moves is None else moves
    hint = np.zeros(mask.shape, np.float32)
    hint[np.arange(len(obs)), moves] = 1.0
    return np.concatenate([np.asarray(x, np.float32), hint], 1)


def offers_values(target: br.Target) -> bool:
    """Whether the teacher gives its per-option values (see the module docstring)."""
    name = "option_values_batch" if target.batched else "option_values"
    return callable(getattr(target.agent, name, None))


def option_values(target: br.Target, rows: np.ndarray, obs, mask, seat) -> np.ndarray:
    """The teacher's values of each option at `rows`, right after its moves there (float32 [k, A])."""
    if target.batched:
        return np.asarray(target.agent.option_values_batch(obs[rows], mask[rows], seat[rows]), np.float32)
    return np.stack([np.asarray(target.agents[r][seat[r]].option_values({"observation": obs[r], "action_mask": mask[r]}),
                                np.float32) for r in rows.tolist()])


class TeacherGames:
    """The teacher in every seat of `tables` batched games; `collect` records each of its decisions."""

    def __init__(self, teacher, game: str, num_players: int, tables: int, reward_scale: float,
                 features: bool = False, rules: dict | None = None) -> None:
        self.target = teacher if isinstance(teacher, br.Target) else br.Target(teacher, game, num_players, rules)
        self.game, self.n, self.tables = game, num_players, tables
        self.reward_scale, self.features, self.rules = np.float32(reward_scale), features, dict(rules or {})
        self.with_values = offers_values(self.target)

    @property
    def path(self) -> str:
        where = "the batched engine" if self.target.batched else "AEC tables"
        return (f"{where}, {self.tables} games side by side; the teacher {self.target.label} plays with "
                f"{self.target.path}" + ("; it offers its option values" if self.with_values else ""))

    def collect(self, num_steps: int, seed: int, progress: bool = False) -> dict:
        """About `num_steps` env steps of whole games: each game stops recording once its row's share is
        used up and the game ends. Returns the columns and ``env_steps``. `progress`: a bar of the
        env steps played (a search teacher can take minutes)."""
        import torch
        from tqdm import tqdm

        self._bar = tqdm(total=num_steps, desc=f"teacher {self.target.label}"[:60], unit="step", disable=not progress)
        try:
            with torch.no_grad():
                if not self.target.batched:
                    return self._collect_tables(num_steps, seed)
                return self._collect_rows(num_steps, seed)
        finally:
            self._bar.close()

    def _collect_rows(self, num_steps: int, seed: int) -> dict:
        """`collect` on the batched engine, for a teacher with act_batch."""
        from agents.network import input_size

        N, n = self.tables, self.n
        rng = np.random.default_rng([seed, 2])
        base = int(rng.integers(br.TRAIN_DEALS - br.MAX_TRAIN_SPAN))
        venv = envs.vector_env(self.game, N, n, seed=base, **self.rules)
        facts = envs.info(self.game, n, **self.rules)
        columns = {"obs": ((input_size(facts, self.features),), np.float32), "masks": ((facts.num_actions,), bool), "actions": ((), np.int64),
                   "rewards": ((), np.float32), "dones": ((), bool), "next_index": ((), np.int64)}
        if self.with_values:
            columns["values"] = ((facts.num_actions,), np.float32)
        buf = GrowingColumns(columns)
        games = np.zeros(N, np.int64)

        def started(r: np.ndarray) -> None:
            self.target.start(r, base + r + games[r] * N)  # the engine's seed of each row's next game
            games[r] += 1

        started(np.arange(N))
        open_ = np.full((N, n), -1, np.int64)  # each seat's latest decision at each row
        live = np.ones(N, bool)
        row_steps = np.zeros(N, np.int64)
        share, steps = num_steps / N, 0
        obs, mask, seat = venv.reset()
        while live.any():
            actions = mask.view(bool).argmax(1)  # rows that stopped recording: first legal move
            rows = np.flatnonzero(live)
            actions[rows] = self.target.moves(rows, obs, mask, seat)
            live_rows, rows = rows, rows[(mask[rows] != 0).sum(1) > 1]  # recorded: the decisions with a choice
            if rows.size:
                k = buf.reserve(rows.size)
                c = buf.cols
                c["obs"][k] = batch_input(self.game, n, self.features, obs[rows], mask[rows])
                c["masks"][k], c["actions"][k] = mask[rows].astype(bool), actions[rows]
                if self.with_values:
                    c["values"][k] = option_values(self.target, rows, obs, mask, seat)
                prev = open_[rows, seat[rows]]
                c["next_index"][prev[prev >= 0]] = k[prev >= 0]
                open_[rows, seat[rows]] = k
            obs, mask, seat, rewards, done = venv.step(actions)
            steps += live_rows.size
            self._bar.update(live_rows.size)
            row_steps[live_rows] += 1
            hit = (open_ >= 0) & (rewards != 0) & live[:, None]
            buf.cols["rewards"][open_[hit]] += rewards[hit] * self.reward_scale
            ended = np.flatnonzero(done & live)
            if ended.size:
                o_end = open_[ended]
                buf.cols["dones"][o_end[o_end >= 0]] = True
                open_[ended] = -1
                live[ended] = row_steps[ended] < share
                if live[ended].any():
                    started(ended[live[ended]])
        out = buf.arrays()
        out["critic_in"] = np.zeros((0, 0), np.float32)  # the plain critic reads the observation
        out["env_steps"] = steps
        return out


    def _collect_tables(self, num_steps: int, seed: int) -> dict:
        """The same games on AEC tables (table r's k-th game has the batched row's seed), for a teacher
        without act_batch: it is told its information state before each move (`envs.belief.informed`,
        what a search agent needs), then asked with act(); its values with option_values()."""
        from agents.network import input_size, policy_input

        N, n = self.tables, self.n
        rng = np.random.default_rng([seed, 2])
        base = int(rng.integers(br.TRAIN_DEALS - br.MAX_TRAIN_SPAN))
        facts = envs.info(self.game, n, **self.rules)
        to_input = policy_input(self.game, n, self.features, False)
        tables = [Table(envs.make_raw(self.game, num_players=n, **self.rules)) for _ in range(N)]
        for t in tables:  # the teacher is told its information state, with its key: the engines keep their history
            t.env.keep_history()
        buf, values, games = Buffer(), [], np.zeros(N, np.int64)

        def started(r: int) -> None:
            deal = base + r + games[r] * N
            self.target.start(np.array([r]), np.array([deal]))
            tables[r].start(int(deal), ["teacher"] * n, "teacher", {})
            games[r] += 1

        for r in range(N):
            started(r)
        share, steps, live = num_steps / N, 0, list(range(N))
        while live:
            waiting = []
            for r in live:
                t = tables[r]
                if t.advance(buf):
                    waiting.append(r)
                    continue
                t.steps += t.env_steps_this_game
                if t.steps < share:
                    started(r)
                    if t.advance(buf):
                        waiting.append(r)
            live = waiting
            for r in live:
                t = tables[r]
                name = t.env.agent_selection
                s = t.env.possible_agents.index(name)
                view = t.env.observe(name)
                agent = self.target._row(r)[s]
                move = informed(agent, t.env.unwrapped.game, s, upper_bound=is_upper_bound(agent))
                a, legal = int(move(view)), view["action_mask"].astype(bool)
                if not (0 <= a < legal.size and legal[a]):
                    raise ValueError(f"teacher {self.target.label!r} played a masked-out action ({a}) at table {r}, seat {s}")
                if legal.sum() > 1:
                    k = buf.add(np.array(to_input(view["observation"], view["action_mask"]), np.float32), legal, None, a, 0.0, 0.0)
                    t.decided(s, k, buf)
                    if self.with_values:
                        values.append(np.asarray(agent.option_values(view), np.float32))
                t.env.step(a)
                t.env_steps_this_game += 1
                steps += 1
                self._bar.update(1)
                t.add_rewards(buf, float(self.reward_scale))
        out = buf.arrays(input_size(facts, self.features), facts.num_actions, 0)
        for unread in ("logprobs", "values"):
            del out[unread]
        if self.with_values:
            out["values"] = np.asarray(values, np.float32).reshape(len(values), facts.num_actions)
        out["env_steps"] = steps
        return out


def soft_targets(data: dict, weight: float, temperature: float) -> torch.Tensor | None:
    """Targets to fit: ``(1 - weight)`` on the teacher's move plus ``weight`` spread as
    ``softmax(values / temperature)`` over the legal moves the teacher valued; a row without values
    keeps the one-hot. None when the data has no values or `weight` is 0 (the one-hot targets)."""
    import torch

    if "values" not in data or weight == 0:
        return None
    values, masks = np.asarray(data["values"], np.float64), np.asarray(data["masks"], bool)
    valued = masks & np.isfinite(values)
    z = np.where(valued, values / temperature, -np.inf)
    top = np.where(valued.any(1), z.max(1), 0.0)
    p = np.where(valued, np.exp(z - top[:, None]), 0.0)
    has = p.sum(1) > 0
    p[has] /= p.sum(1, keepdims=True)[has]
    onehot = np.zeros_like(p)
    onehot[np.arange(len(p)), data["actions"]] = 1.0
    target = np.where(has[:, None], (1 - weight) * onehot + weight * p, onehot)
    return torch.as_tensor(target, dtype=torch.float32)
