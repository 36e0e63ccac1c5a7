"""A best response: PPO from scratch in one seat, against a frozen target in every other seat.

    python -m experiments.exploit --game neu --players 4 --target heuristic --steps 2_000_000

This is the trainer behind `experiments.exploit` (which adds the held-out
evaluation, the learning curve and the report). It reuses `train.ppo`'s parts:
the network (`agents.network.ActorCritic`), the observation and reward scales
(`train.rollout.measure_scales`), the clipped update (`train.ppo.ppo_update`,
GAE along each seat's own stream), the run folder and its log
(`train.runfolder`). What is its own is the collector:

* every batch row of the batched engine (`envs.vector_env`) is one game with
  the learner in one seat and the target in all the others; row ``t``'s
  ``k``-th game in a rollout puts the learner in seat ``(t + k) % players``,
  so it learns every seat;
* the target is any agent spec (`agents.make_agent`). One that has the batched
  protocol (``act_batch``, `agents.base`) answers all its rows in one call,
  and is told the seed of each seat of each new game (``seed_rows``) and the
  new games (``reset_rows``) when it has those hooks (and then which rows
  each call's rows are, ``rows=``); any other target gets
  one agent object per row and seat, seeded and reset at the start of each of
  that row's games, and one ``act()`` call per move on the observation dict;
* rewards and streams are kept as in `train.rollout_vector`: every reward of a
  step goes to the learner's latest transition, whoever acted, and the stream
  ends with the game; a row keeps starting games while about half a game
  still fits in its share of the rollout's env steps.

Deals. A game is named by its seed (the AEC env's ``reset(seed=...)``; the
batched engine's row seeds, `envs.vector`). Three streams that cannot meet:

* training deals have seeds below ``TRAIN_DEALS`` (2**60): each rollout's
  engine starts at a seed drawn below ``TRAIN_DEALS - MAX_TRAIN_SPAN``, and a
  rollout plays at most ``MAX_TRAIN_SPAN`` consecutive seeds;
* the final evaluation's deals are ``HELD_OUT + seed * 2**32 + d``;
* the learning curve's deals are ``CURVE + seed * 2**32 + d``,

so neither evaluation ever plays a deal the learner trained on (tested).
The target's agents are seeded from the deal too: seat ``s`` of the game with
seed ``g`` gets ``8 * (g mod 2**59) + s``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

import envs
from agents import make_agent, spec_label
from agents.base import act_by_agent, can_act_batch
from agents.checkpoint import MAX_HIDDEN, make_checkpoint, save_checkpoint
from train import cli, ppo
from train.cli import check_numbers, parse_rules
from train.ppo import SCALE_GAMES, ppo_update
from train.rollout import measure_scales
from train.rollout_vector import GrowingColumns, another_game
from train.runfolder import LOCK, RunFolder, RunLog

# torch and the network are imported where the learner plays or trains, so --help
# (`experiments.exploit`'s) is quick.
if TYPE_CHECKING:
    from agents.network import ActorCritic

TRAIN_DEALS = 2**60
MAX_TRAIN_SPAN = 2**40  # seeds one rollout may use: rows * games per row, far below this
HELD_OUT = 2**61
CURVE = 2**61 + 2**60
MAX_SEED = 2**27 - 1  # CURVE + MAX_SEED * 2**32 + 2**32 stays below the engine's 2**62
DEFAULT_STEPS = 1_000_000


# ---------------------------------------------------------------- arguments
@dataclass
class Flags:
    """The best response's own settings; `Args` adds train.ppo's PPO settings after them."""

    game: str = field(default="neu", metadata={"help": "which game"})
    players: int = field(default=4, metadata={"help": "number of players"})
    target: str = field(default="heuristic", metadata={"help": "the agent to exploit: any agent spec (random, heuristic, ppo, ppo:PATH, FILE.py:Name, package.module:Name)"})
    steps: int = field(default=0, metadata={"help": f"training budget in env agent-steps, all seats (0: {DEFAULT_STEPS:,}, unless --minutes is given)"})
    minutes: float = field(default=0.0, metadata={"help": "training budget in minutes of training (rollouts and updates, not the evaluations), instead of --steps (0: use --steps)"})
    seed: int = field(default=0, metadata={"help": f"seed for everything, 0 to {MAX_SEED:,}"})
    num_envs: int = field(default=64, metadata={"help": "batch rows (games) played side by side"})
    rollout_steps: int = field(default=16_384, metadata={"help": "env agent-steps per update (whole games, so a little more)"})
    out: str = field(default="", metadata={"help": "run folder (default: runs/best_response/<game>_<players>p_vs_<target>_s<seed>, numbered -2, -3, ... when taken)"})
    rules: str = field(default="", metadata={"help": "rule options of every game, name=value,... ; a bare word W means rules=W (small: the game's small preset)"})
    # Not flags: the value reads the observation (what ppo_update reads), and a best response always
    # starts from scratch in a new folder (what RunFolder reads).
    critic = "plain"
    resume = False
    overwrite = False

    def budget(self) -> str:
        return f"{self.minutes:g} minutes" if self.minutes else f"{self.steps:,} steps"


# The PPO settings are train.ppo's own fields: the same flags, defaults and help.
PPO_SETTINGS = ("learning_rate", "gamma", "gae_lambda", "num_minibatches", "update_epochs", "clip_coef", "ent_coef",
                "vf_coef", "max_grad_norm", "hidden")
Args = dataclasses.make_dataclass(
    "Args", [(f.name, f.type, field(default=f.default, metadata=f.metadata)) for f in dataclasses.fields(ppo.Args)
             if f.name in PPO_SETTINGS], bases=(Flags,), namespace={"__module__": __name__})


INT_BOUNDS = {"players": (1, 64), "steps": (0, 10**12), "seed": (0, MAX_SEED), "num_envs": (1, 65_536),
              "rollout_steps": (1, 10**7), "num_minibatches": (1, 4096), "update_epochs": (1, 100), "hidden": (1, MAX_HIDDEN)}
FLOAT_BOUNDS = {"minutes": (0, 10**6, True), "learning_rate": (0, 1, False), "gamma": (0, 1, False), "gae_lambda": (0, 1, True),
                "clip_coef": (0, 10, False), "ent_coef": (0, 100, True), "vf_coef": (0, 100, True), "max_grad_norm": (0, 1e6, False)}


def rule_options(args) -> dict:
    """--rules as the games' rule options: "name=value,..." (`train.cli.parse_rules`), or a bare
    word W for rules=W (``--rules small``, the small preset)."""
    text = args.rules.strip()
    if text and "=" not in text and "," not in text:
        return {"rules": text}
    return parse_rules(text)


def check_args(args: Args) -> None:
    """ValueError with one line for arguments that cannot work; fills in the default budget."""
    if args.game not in envs.available_games():
        raise ValueError(f"unknown game {args.game!r}; valid games: {', '.join(envs.available_games())}")
    check_numbers(args, INT_BOUNDS, FLOAT_BOUNDS)
    if args.steps and args.minutes:
        raise ValueError("give the budget as --steps or as --minutes, not both")
    if not args.steps and not args.minutes:
        args.steps = DEFAULT_STEPS
    envs.info(args.game, args.players, **rule_options(args))  # ValueError names the valid player range or rule


def default_folder(args: Args) -> str:
    """A new folder under runs/best_response: the first of NAME, NAME-2, NAME-3, ... that does not exist."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", spec_label(args.target)).strip("_.") or "target"
    rules = re.sub(r"[^A-Za-z0-9_.-]+", "_", args.rules).strip("_.")
    game = f"{args.game}_{rules}" if rules else args.game
    base = os.path.join("runs", "best_response", f"{game}_{args.players}p_vs_{label}_s{args.seed}")
    for i in range(1, 10_000):
        path = base if i == 1 else f"{base}-{i}"
        try:
            os.makedirs(path)  # claims the name: two runs started at once get two folders
            return path
        except FileExistsError:
            continue
    raise ValueError(f"no free run folder name for {base}")


def open_run(args: Args) -> RunFolder:
    """The run folder: --out when given (refused when it holds anything), else a new default one."""
    if args.out:
        # a trainer.lock alone is RunFolder's to judge: a live trainer's is refused, a dead one's taken over
        if os.path.isdir(args.out) and set(os.listdir(args.out)) - {LOCK}:
            raise ValueError(f"--out {args.out} already holds files; runs are never overwritten: choose another --out")
        return RunFolder.open(args.out, args, {})
    return RunFolder.open(default_folder(args), args, {})


# ---------------------------------------------------------------- the target
def seat_seeds(deal_seeds: np.ndarray, num_players: int) -> np.ndarray:
    """Each seat's agent seed in each game: ``8 * (g mod 2**59) + s`` for the game with seed g (int64 [k, n])."""
    g = np.asarray(deal_seeds, np.int64) % 2**59
    return g[:, None] * 8 + np.arange(num_players, dtype=np.int64)[None, :]


class Target:
    """The frozen target, in the seats the learner does not hold, at any number of batch rows."""

    def __init__(self, spec: Any, game: str, num_players: int, rules: dict | None = None) -> None:
        self.label = spec_label(spec)
        self.game, self.n = game, num_players
        self.rules = dict(rules or {})  # the rule options of every game it plays
        self.agent = make_agent(spec, game, num_players, seed=0)  # a bad spec fails here, in one line
        self.batched = can_act_batch(self.agent)
        self.agents: list[list] = []  # without act_batch: one agent per row and seat, as the AEC path seats them

    def _row(self, r: int) -> list:
        while len(self.agents) <= r:
            self.agents.append([make_agent(self.agent, self.game, self.n) for _ in range(self.n)])  # copies
        return self.agents[r]

    @property
    def path(self) -> str:
        return "act_batch, one call per step" if self.batched else "act(), one call per move"

    def start(self, rows: np.ndarray, deal_seeds: np.ndarray) -> None:
        """Rows `rows` start the games with seeds `deal_seeds`: seed and reset the target's agents there."""
        seeds = seat_seeds(deal_seeds, self.n)
        if self.batched:
            if callable(getattr(self.agent, "seed_rows", None)):
                self.agent.seed_rows(rows, seeds)
            if callable(getattr(self.agent, "reset_rows", None)):
                self.agent.reset_rows(rows)
            return
        for i, r in enumerate(rows.tolist()):
            for s, a in enumerate(self._row(r)):
                if callable(getattr(a, "seed", None)):
                    a.seed(int(seeds[i, s]))
                if callable(getattr(a, "reset", None)):
                    a.reset()

    def moves(self, rows: np.ndarray, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """The target's move at each of `rows` (the seat to act there is the target's)."""
        if self.batched:  # one call on its rows (told which rows they are when it keeps state per row)
            who = np.full(len(seat), -1)
            who[rows] = 0
            a = act_by_agent([self.agent], who, obs, mask, seat)[rows]
        else:
            a = np.array([self.agents[r][seat[r]].act({"observation": obs[r], "action_mask": mask[r]})
                          for r in rows.tolist()], np.int64)
        legal = (a >= 0) & (a < mask.shape[1])
        legal[legal] = mask[rows[legal], a[legal]] != 0
        if not legal.all():
            r = int(rows[np.flatnonzero(~legal)[0]])
            raise ValueError(f"target {self.label!r} played a masked-out action ({int(a[~legal][0])}) at batch row {r}, "
                             f"seat {int(seat[r])}")
        return a


# ---------------------------------------------------------------- playing
def one_thread(fn: Callable) -> Callable:
    """Run `fn` with torch on one thread (its forward passes are small; see `train`)."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)
    return wrapped


def greedy_moves(net: ActorCritic, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The learner's most probable legal move (how it plays in evaluations)."""
    import torch

    with torch.no_grad():
        return net.masked_logits(torch.from_numpy(obs), torch.from_numpy(mask.astype(bool))).argmax(-1).numpy()


def play_deals(net: ActorCritic, target: Target, game: str, num_players: int, first_seed: int, deals: int,
               seatings: list) -> tuple[np.ndarray, np.ndarray]:
    """One game on each deal ``first_seed + d`` for each seating: the learner (greedy) in seat
    ``seatings[c]`` and the target in every other seat (None: the target in every seat). All seatings
    play side by side, each on its own batched engine, and the target answers all of them at once.
    Final scores and first-place shares (1/k for each of k seats ranked first), [seatings, deals, n]."""
    C, D = len(seatings), deals
    venvs = [envs.vector_env(game, D, num_players, seed=first_seed, **target.rules) for _ in seatings]
    learner = np.repeat([-1 if s is None else s for s in seatings], D)  # batch row c * D + d
    target.start(np.arange(C * D), first_seed + np.arange(C * D) % D)
    views = [list(v.reset()) for v in venvs]
    scores = np.zeros((C * D, num_players), np.int64)
    ranks = np.zeros((C * D, num_players), np.int64)
    playing = np.ones(C * D, bool)
    while playing.any():
        obs, mask, seat = (np.concatenate([v[i] for v in views]) for i in range(3))
        actions = mask.argmax(1)  # rows whose deal is over play on unrecorded until every deal is
        live = np.flatnonzero(playing)
        mine = seat[live] == learner[live]
        if mine.any():
            actions[live[mine]] = greedy_moves(net, obs[live[mine]], mask[live[mine]])
        if not mine.all():
            actions[live[~mine]] = target.moves(live[~mine], obs, mask, seat)
        for c, v in enumerate(venvs):
            part = slice(c * D, (c + 1) * D)
            if not playing[part].any():
                continue  # every deal of this seating is over
            *views[c], _, done = v.step(actions[part])
            ended = np.flatnonzero(done & playing[part])
            scores[c * D + ended], ranks[c * D + ended] = v.final_scores[ended], v.final_ranks[ended]
            playing[c * D + ended] = False
    firsts = ranks == 1
    shares = firsts / firsts.sum(1, keepdims=True)
    return scores.reshape(C, D, num_players), shares.reshape(C, D, num_players)


@one_thread
def duplicate_deals(net: ActorCritic, target: Target, game: str, num_players: int, first_seed: int, deals: int) -> dict:
    """The learner in each seat of each deal against the target, and the target alone on the same deals.

    Returns ``br_scores``, ``br_first`` [deals, n] (column s: the game with the learner in seat s, its
    score and first-place share there) and ``target_scores``, ``target_first`` [deals, n] (the game
    with the target in every seat)."""
    n = num_players
    scores, first = play_deals(net, target, game, n, first_seed, deals, [*range(n), None])
    seats = np.arange(n)
    return {"br_scores": scores[seats, :, seats].T, "br_first": first[seats, :, seats].T,
            "target_scores": scores[n], "target_first": first[n]}


class BestResponseRollout:
    """Whole games on the batched engine, the learner in one seat of each row and the target in the rest.

    `collect` returns the batch `train.ppo.ppo_update` reads (as `train.rollout_vector.VectorRollout`'s),
    and keeps the seed of every game it started in ``deal_seeds``."""

    def __init__(self, args: Args, target: Target, reward_scale: float) -> None:
        info = envs.info(args.game, args.players, **target.rules)
        self.game, self.n, self.rows = args.game, args.players, args.num_envs
        self.obs_size, self.num_actions = info.obs_size, info.num_actions
        self.rollout_steps = args.rollout_steps
        self.reward_scale = np.float32(reward_scale)
        self.target = target
        self.deal_seeds: list[int] = []  # every training game's seed, for the tests of the held-out deals

    @one_thread
    def collect(self, net: ActorCritic, seed: tuple) -> dict:
        import torch

        with torch.no_grad():
            return self._collect(net, seed)

    def _collect(self, net: ActorCritic, seed: tuple) -> dict:
        import torch

        rng = np.random.default_rng([*seed, 0])
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        N, n = self.rows, self.n
        base = int(rng.integers(TRAIN_DEALS - MAX_TRAIN_SPAN))
        venv = envs.vector_env(self.game, N, n, seed=base, **self.target.rules)
        buf = GrowingColumns({
            "obs": ((self.obs_size,), np.float32), "masks": ((self.num_actions,), bool), "actions": ((), np.int64),
            "logprobs": ((), np.float32), "values": ((), np.float32), "rewards": ((), np.float32),
            "dones": ((), bool), "next_index": ((), np.int64),
        })
        rows = np.arange(N)
        games = np.zeros(N, np.int64)  # games started at each row
        learner = rows % n  # row t's k-th game: the learner in seat (t + k) % n

        def started(r: np.ndarray) -> None:
            seeds = base + r + games[r] * N  # the engine's seed of each row's next game (envs.vector)
            if seeds.size and int(seeds.max()) - base >= MAX_TRAIN_SPAN:
                raise RuntimeError("a rollout ran past its share of the training seeds")
            self.deal_seeds.extend(seeds.tolist())
            learner[r] = (r + games[r]) % n
            self.target.start(r, seeds)
            games[r] += 1

        started(rows)
        open_ = np.full(N, -1, np.int64)  # the learner's latest transition at each row
        returns = np.zeros(N, np.float64)
        live = np.ones(N, bool)
        row_steps = np.zeros(N, np.int64)
        game_len = np.zeros(N, np.int64)
        share = self.rollout_steps / N
        lengths_sum = lengths_count = steps = 0
        episodes = []
        obs, mask, seat = venv.reset()
        while live.any():
            mask_b = mask.view(bool)
            actions = mask_b.argmax(1)  # rows past their share: first legal move, unrecorded
            live_rows = np.flatnonzero(live)
            mine = seat[live_rows] == learner[live_rows]
            theirs = live_rows[~mine]
            if theirs.size:
                actions[theirs] = self.target.moves(theirs, obs, mask, seat)
            r = live_rows[mine]
            if r.size:
                o, m = obs[r], mask_b[r]
                a, logp, _, v = net.get_action_and_value(torch.from_numpy(o), torch.from_numpy(m), torch.from_numpy(o), generator=gen)
                k = buf.reserve(r.size)
                c = buf.cols
                c["obs"][k], c["masks"][k], c["actions"][k], c["logprobs"][k], c["values"][k] = o, m, a.numpy(), logp.numpy(), v.numpy()
                prev = open_[r]
                c["next_index"][prev[prev >= 0]] = k[prev >= 0]
                open_[r] = k
                actions[r] = a.numpy()
            obs, mask, seat, rewards, done = venv.step(actions)
            steps += live_rows.size
            game_len[live_rows] += 1
            mine_r = rewards[live_rows, learner[live_rows]]  # the learner's reward, whoever acted
            returns[live_rows] += mine_r
            hit = (open_[live_rows] >= 0) & (mine_r != 0)
            buf.cols["rewards"][open_[live_rows][hit]] += mine_r[hit] * self.reward_scale
            ended = live_rows[done[live_rows]]
            if ended.size:
                seats = learner[ended]
                ranks = venv.final_ranks[ended, seats]
                firsts = (venv.final_ranks[ended] == 1).sum(1)
                for ret, rank, k in zip(returns[ended].tolist(), ranks.tolist(), firsts.tolist()):
                    episodes.append({"return": ret, "rank": rank, "win": (1.0 / k) if rank == 1 else 0.0})
                buf.cols["dones"][open_[ended][open_[ended] >= 0]] = True
                open_[ended] = -1
                returns[ended] = 0.0
                row_steps[ended] += game_len[ended]
                lengths_sum += int(game_len[ended].sum())
                lengths_count += ended.size
                game_len[ended] = 0
                live[ended] = another_game(row_steps[ended], lengths_sum, lengths_count, share)
                if live[ended].any():
                    started(ended[live[ended]])
        out = buf.arrays()
        out["critic_in"] = np.zeros((0, 0), np.float32)  # the plain critic reads the observation
        out["episodes"] = episodes
        out["env_steps"] = steps
        out["mean_return"] = float(np.mean([e["return"] for e in episodes]))
        out["first_place"] = float(np.mean([e["win"] for e in episodes]))
        return out


# ---------------------------------------------------------------- training
def new_network(args: Args) -> tuple[ActorCritic, float]:
    """An untrained network with the observation scales measured on random play, and the reward scale."""
    import torch

    from agents.network import ActorCritic

    rules = rule_options(args)
    scales = measure_scales(args.game, args.players, "plain", seed=args.seed, games=SCALE_GAMES, rules=rules)
    info = envs.info(args.game, args.players, **rules)
    net = ActorCritic(info.obs_size, info.num_actions, scales["critic_mean"].size, args.hidden)
    with torch.no_grad():
        for name in ("obs_mean", "obs_std", "critic_mean", "critic_std"):
            getattr(net, name).copy_(torch.as_tensor(scales[name]))
    return net, scales["reward_scale"]


def train(args: Args, run: RunFolder, target: Target, evaluate: Callable | None = None, curve_points: int = 10,
          say: Callable | None = None, start: ActorCritic | None = None, command: str = "") -> dict:
    """Train the best response; returns {"net", "global_step", "seconds", "deal_seeds", "updates"}.

    ``evaluate(net, global_step)`` runs before the first update and each time training passes another
    ``1 / curve_points`` of the budget (and at the end); its time is not training time. `start`: the
    network to start from (a warm start, `experiments.exploit --warm-start`; default: an untrained one).
    `command`: what made the run, for final.pt's made_by (default: this module's flags)."""
    import torch

    torch.manual_seed(args.seed)
    # One thread: the batches are a few thousand rows, and on a busy machine a second OpenMP thread
    # waiting for a core made every small matrix product ~25x slower.
    torch.set_num_threads(1)
    net, reward_scale = new_network(args)
    net = net if start is None else start
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    collector = BestResponseRollout(args, target, reward_scale)
    log = RunLog(run, fresh=True, total=args.steps or None)
    say = say or log.say
    budget = args.minutes * 60 if args.minutes else args.steps

    def progress(step: int, seconds: float) -> float:
        return seconds / budget if args.minutes else step / budget

    global_step, seconds, update, next_point = 0, 0.0, 0, 1
    try:
        if evaluate is not None and curve_points:
            evaluate(net, 0)
        while progress(global_step, seconds) < 1:
            update += 1
            t0 = time.time()
            frac = progress(global_step, seconds)
            lr = args.learning_rate * (1.0 - frac)
            optimizer.param_groups[0]["lr"] = lr
            batch = collector.collect(net, seed=(args.seed, update))
            t_rollout = time.time() - t0
            stats = ppo_update(net, optimizer, batch, args, update, update)  # (the count only matters to a penalty term)
            global_step += batch["env_steps"]
            elapsed = time.time() - t0
            seconds += elapsed
            row = {"update": update, "global_step": global_step, "episode_return": batch["mean_return"],
                   "first_place": batch["first_place"], "games": len(batch["episodes"]), **stats, "learning_rate": lr,
                   "transitions": len(batch["actions"]), "steps_per_second": batch["env_steps"] / elapsed,
                   "rollout_steps_per_second": batch["env_steps"] / t_rollout, "training_seconds": seconds,
                   "winrate_vs_heuristic": batch["first_place"] if target.label == "heuristic" else float("nan")}
            log.write(row, batch["env_steps"], pool_size=0)
            done = progress(global_step, seconds) >= 1
            if evaluate is not None and curve_points and (done or progress(global_step, seconds) >= next_point / curve_points):
                while next_point <= curve_points and progress(global_step, seconds) >= next_point / curve_points:
                    next_point += 1
                evaluate(net, global_step)
            elif log.bar is None:  # no progress bar (not a terminal): a line per update
                say(f"update {update}: {global_step:,} steps ({min(1.0, progress(global_step, seconds)):.0%} of "
                    f"{args.budget()}), the learner's return {batch['mean_return']:+.2f}, first place "
                    f"{batch['first_place']:.0%}, {row['steps_per_second']:,.0f} steps/s")
    finally:
        log.close()
    meta = {"global_step": global_step, "training_seconds": seconds, "target": target.label}
    # A warm start that cloned the target imitated it: the target is its teacher.
    made_by = {"command": command or cli.command_line(args, "experiments.exploit"), "steps": int(global_step),
               "teacher": target.label if getattr(args, "warm_start", "").startswith("a clone") else ""}
    ckpt = make_checkpoint(net, game=args.game, num_players=args.players, critic="plain", features=False, hint=False,
                           hidden=args.hidden, args=dataclasses.asdict(args), meta=meta, made_by=made_by)
    save_checkpoint(ckpt, run.final_path)
    return {"net": net, "global_step": global_step, "seconds": seconds, "deal_seeds": collector.deal_seeds, "updates": update}
