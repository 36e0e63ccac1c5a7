"""PPO self-play for any cardzoo game, in one file you can read top to bottom.

    python -m train.ppo --game neu --players 4 --steps 2_000_000

The shape follows CleanRL's ppo.py: a dataclass of arguments, then the loop:
collect a rollout, compute advantages (GAE), update with the clipped PPO
objective, log, checkpoint. The network (`agents/network.py`) and the
checkpoint format (`agents/checkpoint.py`) live with the agent that plays it;
batched rollouts live in `train/rollout.py` (and, without scripted opponents, on the
batched engine in `train/rollout_vector.py`); the run folder and its log in
`train/runfolder.py`; the warm start (imitating the heuristic, hand-made
features, the heuristic's hint, a win bonus) is the variant
`train/ppo_warmstart.py`, which extends this loop through one explicit
`Variant`; exporting a policy and its learning curve is `train/export.py`.

What is special about card games, and where it is handled:

* Illegal actions: masked logits (`agents.network.MASKED_LOGIT`), an entropy
  over legal actions only, and every transition stores its mask, which the
  update applies again.
* Turn-based rewards: a seat's reward often arrives while another seat is
  acting. Each learner seat keeps its own stream of transitions, a reward is
  added to that seat's latest transition whoever's turn it was
  (`train/rollout.py`), and GAE runs along each seat's own stream.
* Self-play: one network plays every seat the learner holds; the other seats
  are frozen past snapshots, the game's heuristic or random. A snapshot
  joins the pool when it beat the previous snapshot.
* `--critic global`: the value also sees `env.state()` (every hand), the
  policy only its own observation. Only training uses the critic.
* Observations are raw counts; a fixed per-feature mean/std, measured on
  random play before training, normalises them inside the network. Rewards
  are scaled by one number measured the same way.

The run folder (--out, default runs/<game>_<n>p_<critic>_s<seed>) holds
progress.csv (one row per update), checkpoint.pt (after every update; what
--resume continues from), final.pt (at the end) and TensorBoard events when
the tensorboard package is installed. An existing run is never replaced
without --resume or --overwrite, and a lock file keeps a second trainer out.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

import envs
from agents.checkpoint import MAX_HIDDEN, POOL_SNAPSHOTS, make_checkpoint, save_checkpoint
from train import cli
from train.cli import check_numbers
from train.rollout import RolloutConfig, RolloutWorker, RolloutWorkers, measure_scales
from train.rollout_vector import VectorRollout, uses_vector_env
from train.runfolder import RunFolder, RunLog

# torch (and numba, for GAE) are imported when training starts, so --help is quick.
if TYPE_CHECKING:
    from agents.network import ActorCritic

SCALE_GAMES = 40  # random games that measure the observation and reward scales
POOL_SIZE = POOL_SNAPSHOTS - 1  # most recent snapshots kept as opponents (and the first, untrained one)
MAX_ROLLOUT = 1_000_000  # a rollout is held in memory: about 1-3 KB per transition
PROGRESS_LABELS = ("progress bar: sps = env steps per second; ret = the learner's mean return per game against "
                   "opponents (score units); vs_h = its first-place rate against the heuristic in this update "
                   "(nan: none played); pool = snapshots in the opponent pool")


# ---------------------------------------------------------------- arguments
@dataclass
class Args:
    game: str = field(default="neu", metadata={"help": "which game"})
    players: int = field(default=4, metadata={"help": "number of players"})
    steps: int = field(default=2_000_000, metadata={"help": "env agent-steps (all seats) to play, rounded down to whole rollouts (at least one); on the batched engine the updates are counted from the steps its rollouts really play; 0: the warm start alone (a teacher's clone)"})
    seed: int = field(default=0, metadata={"help": "seed for everything (runs are reproducible on CPU)"})
    critic: str = field(default="plain", metadata={"help": "plain: the value reads the observation; global: also env.state()", "choices": ("plain", "global")})
    # rollouts
    engine: str = field(default="auto", metadata={"help": "where rollouts play: vector: the batched engine (envs.vector_env), every table in this process; aec: AEC envs in --workers processes; auto: vector unless the policy reads --features or --hint", "choices": ("auto", "vector", "aec")})
    workers: int = field(default=2, metadata={"help": "rollout processes (0: collect in this process)"})
    num_envs: int = field(default=64, metadata={"help": "tables played side by side in each worker"})
    rollout_steps: int = field(default=32_768, metadata={"help": f"env agent-steps per update, all workers together (at most {MAX_ROLLOUT:,})"})
    # opponents: each table is self-play (learner in every seat) or one learner seat vs one kind of opponent
    self_play: float = field(default=0.3, metadata={"help": "share of tables where the learner holds every seat"})
    vs_heuristic: float = field(default=0.3, metadata={"help": "share of tables vs the game's heuristic"})
    vs_random: float = field(default=0.1, metadata={"help": "share of tables vs random; the rest is vs past snapshots"})
    # PPO
    learning_rate: float = field(default=1e-3, metadata={"help": "Adam learning rate, annealed linearly to 0"})
    gamma: float = field(default=0.995, metadata={"help": "discount per own decision"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    num_minibatches: int = field(default=4, metadata={"help": "minibatches per epoch"})
    update_epochs: int = field(default=4, metadata={"help": "passes over each rollout"})
    clip_coef: float = field(default=0.2, metadata={"help": "PPO ratio clip"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient norm clip"})
    hidden: int = field(default=128, metadata={"help": "width of the two hidden layers"})
    # output
    out: str = field(default="", metadata={"help": "run folder (default: runs/<game>_<players>p_<critic>_s<seed>)"})
    resume: bool = field(default=False, metadata={"help": "continue the run in --out from its checkpoint.pt"})
    overwrite: bool = field(default=False, metadata={"help": "replace a run already in --out"})
    export: str = field(default="", metadata={"help": "at the end, also write the policy to this .pt (+ .json sidecar, + _curve.png)"})


# Counts and numbers: (low, high) bounds, so that a typo fails at once and memory cannot explode.
INT_BOUNDS = {"steps": (0, 10**12), "seed": (0, 2**32 - 1), "workers": (0, 64),
              "num_envs": (1, 4096), "rollout_steps": (1, MAX_ROLLOUT), "num_minibatches": (1, 4096),
              "update_epochs": (1, 100), "hidden": (1, MAX_HIDDEN)}
# name: (low, high, low is allowed)
FLOAT_BOUNDS = {"self_play": (0, 1, True), "vs_heuristic": (0, 1, True), "vs_random": (0, 1, True),
                "learning_rate": (0, 1, False), "gamma": (0, 1, False), "gae_lambda": (0, 1, True),
                "clip_coef": (0, 10, False), "ent_coef": (0, 100, True), "vf_coef": (0, 100, True),
                "max_grad_norm": (0, 1e6, False)}


def check_args(args: Args, variant: "Variant | None" = None) -> None:
    """ValueError with a clear one-line message for arguments that cannot work (with the variant's options)."""
    variant = variant or Variant()
    if args.game not in envs.available_games():
        raise ValueError(f"unknown game {args.game!r}; valid games: {', '.join(envs.available_games())}")
    check_numbers(args, INT_BOUNDS, FLOAT_BOUNDS)
    if args.steps == 0 and variant.warm_start is None:
        raise ValueError("--steps 0 plays no update: it is for a run that only distils a teacher (train.ppo_warmstart "
                         "--imitation-steps N, train.ppo_search), whose clone is then final.pt")
    envs.info(args.game, args.players, **variant.rules)  # ValueError names the valid player range or rule
    if args.engine == "vector" and not uses_vector_env(RolloutConfig.of(args, variant, 1.0)):
        raise ValueError("--engine vector needs a policy that reads the plain observation and a game with a "
                         "batched engine (no --features, no --hint); use --engine aec or auto")
    if args.self_play + args.vs_heuristic + args.vs_random > 1 + 1e-9:
        raise ValueError("--self-play, --vs-heuristic and --vs-random are shares of the tables: they must sum to at most 1")
    if args.resume and args.overwrite:
        raise ValueError("--resume continues the run in --out and --overwrite replaces it: give one of them")
    if args.export:
        folder = os.path.dirname(args.export) or "."
        if os.path.isdir(args.export) or not args.export.endswith(".pt"):
            raise ValueError(f"--export names the policy file to write, ending in .pt; got {args.export!r}")
        if not os.path.isdir(folder):
            raise ValueError(f"--export: folder {folder!r} does not exist (create it first)")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"--export: folder {folder!r} is not writable")


def build_parser(args_class=Args, prog: str = "python -m train.ppo", description: str | None = None):
    parser = cli.build_parser(args_class, prog, description or __doc__.split("\n\n")[0], PROGRESS_LABELS,
                              choices={"game": envs.available_games()})
    # Where the rollout workers run is not one of the run's arguments: a run may resume on either.
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="local: --workers processes here; ray: --workers Ray actors on a cluster (docs/distributed.md)")
    parser.add_argument("--ray-address", default=None,
                        help="with --backend ray: HOST:PORT of the cluster's head, or 'auto' (default: start Ray here)")
    return parser


def parse_args(argv: list[str] | None = None, args_class=Args, check=check_args, prog: str = "python -m train.ppo",
               description: str | None = None):
    parser = build_parser(args_class, prog, description)
    ns = vars(parser.parse_args(argv))
    backend, ray_address = ns.pop("backend"), ns.pop("ray_address")
    args = args_class(**ns)
    try:
        check(args)
        use_backend(args, backend, ray_address)
    except (ValueError, ImportError, ConnectionError) as e:
        parser.error(str(e))
    return args


def use_backend(args, backend: str = "local", ray_address: str | None = None) -> None:
    """Where `args`' rollout workers run: local processes, or Ray actors on the cluster at `ray_address`
    (None: a Ray instance started here). With Ray this joins the cluster, so that a wrong address, a
    missing Ray or too few CPUs fail here, in one line."""
    if backend not in ("local", "ray"):
        raise ValueError(f"unknown backend {backend!r}; valid backends: local, ray")
    if backend == "local" and ray_address:
        raise ValueError("--ray-address needs --backend ray")
    if backend == "local":
        cli.check_workers(args.workers)
    if backend == "ray":
        from train.distributed import cluster_cpus, connect

        if args.workers < 1:
            raise ValueError("--backend ray needs --workers 1 or more (each rollout worker is a Ray actor)")
        cpus = cluster_cpus(connect(ray_address))
        if args.workers > cpus:  # an actor holds a CPU: more actors than CPUs would wait for ever
            raise ValueError(f"--workers {args.workers} needs {args.workers} CPUs on the Ray cluster, which has {cpus}")
    args.backend, args.ray_address = backend, ray_address


def default_name(a) -> str:
    return f"{a.game}_{a.players}p_{a.critic}_s{a.seed}"


@dataclass
class Variant:
    """What a variant of the trainer adds to this core, in one object (`train/ppo_warmstart.py` builds
    one from its flags; the core is `Variant()`)."""

    module: str = "train.ppo"  # the command, in messages and the exported sidecar
    features: bool = False  # the policy also reads the game's hand-made features
    hint: bool = False  # ... and a one-hot of the heuristic's move
    win_bonus: float = 0.0  # score units for first place, added to that seat's last reward
    teacher: str = ""  # the agent spec the warm start imitates ("": none), in every checkpoint's made_by
    rules: dict = field(default_factory=dict)  # rule options of every env the run plays
    # (agent, optimizer, args, open_collector, say) -> env steps: runs before the first update of a
    # fresh run; open_collector(worker_class, vector_class) opens a collector of the run's kind with
    # those classes (AEC tables, batched engine).
    warm_start: Callable | None = None
    # (agent, obs, masks, update, num_updates, pool) -> a loss term added to each minibatch's PPO loss;
    # its log() gives extra progress.csv columns.
    penalty: Callable | None = None
    # (agent, row) -> None: runs after each update, before its checkpoint is saved (row: its
    # progress.csv row); `train/ppo_search.py`'s strength log. It must draw no random number the run uses.
    after_update: Callable | None = None

    def reads(self) -> dict:
        """What the policy reads besides the observation (recorded in every checkpoint)."""
        return {"features": self.features, "hint": self.hint}


# ---------------------------------------------------------------- advantages
def gae(rewards, values, dones, next_index, gamma: float, lam: float):
    """Generalised advantage estimation along each seat's own stream of decisions.

    Transitions of many seats and tables are interleaved in one batch;
    `next_index[i]` is the index of the same seat's next decision (always > i),
    and `dones[i]` marks the last decision of a seat (eliminated or game over).
    Rollouts are whole games, so nothing is cut off and nothing is bootstrapped.
    """
    values = np.asarray(values, np.float32)
    advantages = _compiled_gae()(np.asarray(rewards, np.float32), values, np.asarray(dones, bool),
                                 np.asarray(next_index, np.int64), np.float32(gamma), np.float32(gamma * lam))
    return advantages, advantages + values


@functools.cache
def _compiled_gae():
    """`_gae` compiled, at the first call: a Python loop over a rollout's transitions costs more than a PPO epoch."""
    from numba import njit

    return njit(cache=True)(_gae)


def _gae(rewards, values, dones, next_index, gamma, gamma_lam):
    advantages = np.zeros_like(values)
    for i in range(len(values) - 1, -1, -1):
        next_value, next_adv = np.float32(0.0), np.float32(0.0)
        if not dones[i]:
            j = next_index[i]
            next_value, next_adv = values[j], advantages[j]
        delta = rewards[i] + gamma * next_value - values[i]
        advantages[i] = delta + gamma_lam * next_adv
    return advantages


# ---------------------------------------------------------------- checkpoints and the run folder
def checkpoint_dict(agent: ActorCritic, args, variant: Variant, meta: dict, optimizer=None) -> dict:
    settings = {**dataclasses.asdict(args), "scale_games": SCALE_GAMES, "pool_size": POOL_SIZE}
    made_by = {"command": cli.command_line(args, variant.module), "teacher": variant.teacher, "steps": int(meta["global_step"])}
    return make_checkpoint(agent, game=args.game, num_players=args.players, critic=args.critic, hidden=args.hidden,
                           args=settings, meta=meta, optimizer_state=None if optimizer is None else optimizer.state_dict(),
                           made_by=made_by, **variant.reads())


def run_folder(args) -> str:
    return args.out or os.path.join("runs", default_name(args))


def prepare(args, variant: Variant) -> RunFolder:
    """Every check before training, nothing written on a refusal (ValueError, one line)."""
    check_args(args, variant)
    if args.engine == "vector" and getattr(args, "backend", "local") == "ray":
        raise ValueError("--engine vector plays in this process: it cannot run on --backend ray (use --engine aec)")
    resume_must_match = {"game": args.game, "num_players": args.players, "critic": args.critic, "hidden": args.hidden,
                         **variant.reads()}
    return RunFolder.open(run_folder(args), args, resume_must_match)


# ---------------------------------------------------------------- the parts of the loop
def open_collector(args, config: RolloutConfig, worker_class: type = RolloutWorker, vector_class: type | None = VectorRollout):
    """The rollout collector for this run and the path it plays on, in words (said at start):
    `vector_class` on the batched engine when it can play there, else `worker_class` on AEC tables."""
    if getattr(args, "backend", "local") == "ray":
        from train.ray_rollout import RayRolloutWorkers

        return RayRolloutWorkers(config, args.ray_address, worker_class), f"AEC tables on {args.workers} Ray actors"
    if vector_class is not None and args.engine != "aec" and uses_vector_env(config):
        collector = vector_class(config)
        return collector, f"the batched engine (envs.vector_env), {collector.num_tables} tables in this process"
    where = f"{args.workers} worker process(es)" if args.workers else "this process"
    return RolloutWorkers(config, worker_class), f"AEC tables, {args.num_envs} per worker, in {where}"


class Plan:
    """How many updates --steps buys. An AEC rollout stops once its tables have played
    --rollout-steps and their games end, so that is steps // rollout_steps, fixed (a shipped
    checkpoint's command trains the same network again); where the games are long the run says,
    after its first update, how far past --steps that count goes (`overshoot`). The batched
    engine finishes a game on every table in each rollout, which may be several times
    --rollout-steps (long games, many tables): there the count follows the steps the rollouts
    really played, re-estimated after each update, so the run ends at or below --steps."""

    def __init__(self, args, batched: bool, done: int = 0, played: int = 0) -> None:
        self.steps, self.rollout_steps, self.batched = args.steps, args.rollout_steps, batched
        self.num_updates = max(1, args.steps // args.rollout_steps) if args.steps else 0  # 0: the warm start alone
        self.played, self.said = played, self.num_updates  # said: the count last stated (at start-up first)
        if batched and done:
            self.record(done, 0)
        self.said = self.num_updates

    def record(self, update: int, env_steps: int) -> bool:
        """Count an update's steps; True when the plan moved by a tenth or more since it was last said."""
        self.played += env_steps
        if self.batched and self.played:
            self.num_updates = max(1, update, self.steps * update // self.played)
        if abs(self.num_updates - self.said) * 10 < self.said:
            return False
        self.said = self.num_updates
        return True

    def __str__(self) -> str:
        if not self.steps:
            return "--steps 0: no update; the run ends after the warm start, and final.pt is its clone"
        if self.batched:
            return (f"--steps {self.steps:,}: each update plays whole games on every table, --rollout-steps "
                    f"{self.rollout_steps:,} or more, so updates are counted from the steps played: about "
                    f"{self.num_updates} update(s) for now, re-estimated after each one, ending at or below "
                    f"{self.steps:,} env steps (at least one update)")
        return (f"--steps {self.steps:,} is {self.num_updates} update(s) of --rollout-steps {self.rollout_steps:,} = "
                f"{self.num_updates * self.rollout_steps:,} env steps (rounded down to whole rollouts, at least one; "
                "each rollout plays whole games, so it overshoots a little)")

    def overshoot(self, env_steps: int) -> str | None:
        """After an AEC run's first update (`env_steps` played): a warning when its rollouts play a
        quarter or more past --rollout-steps, with the total that --steps will really play."""
        if self.batched or not self.steps or env_steps * 4 < self.rollout_steps * 5:
            return None
        ratio = env_steps / self.rollout_steps
        return (f"update 1 played {env_steps:,} env steps, {ratio:.1f}x --rollout-steps (each rollout finishes its "
                f"tables' games): --steps {self.steps:,} will play about {self.num_updates * env_steps:,}; for about "
                f"{self.steps:,}, give --steps {int(self.steps / ratio):,} (or fewer --num-envs)")


def ppo_update(agent: ActorCritic, optimizer, batch: dict, args, update: int, num_updates: int,
               penalty=None, pool=()) -> dict:
    """The clipped PPO objective over one rollout (GAE along each seat's own stream first); returns
    the losses of the last minibatch and the rollout's statistics, for the log."""
    import torch

    advantages, returns = gae(batch["rewards"], batch["values"], batch["dones"], batch["next_index"], args.gamma, args.gae_lambda)
    b_obs = torch.as_tensor(batch["obs"])
    b_masks = torch.as_tensor(batch["masks"])
    b_critic = torch.as_tensor(batch["critic_in"]) if args.critic == "global" else b_obs
    b_actions = torch.as_tensor(batch["actions"])
    b_logprobs = torch.as_tensor(batch["logprobs"])
    b_advantages = torch.as_tensor(advantages)
    b_returns = torch.as_tensor(returns)
    b_values = torch.as_tensor(batch["values"])
    batch_size = len(b_actions)
    minibatch_size = -(-batch_size // args.num_minibatches)
    shuffle = torch.Generator().manual_seed(args.seed * 1_000_003 + update)
    clipfracs, approx_kl = [], torch.tensor(0.0)
    for epoch in range(args.update_epochs):
        order = torch.randperm(batch_size, generator=shuffle)
        for start in range(0, batch_size, minibatch_size):
            mb = order[start : start + minibatch_size]
            mb_obs = b_obs[mb]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                mb_obs, b_masks[mb], mb_obs if b_critic is b_obs else b_critic[mb], b_actions[mb]
            )
            logratio = newlogprob - b_logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()  # http://joschu.net/blog/kl-approx.html
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            mb_adv = b_advantages[mb]
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - args.ent_coef * entropy_loss + args.vf_coef * v_loss
            if penalty is not None:
                loss = loss + penalty(agent, mb_obs, b_masks[mb], update, num_updates, pool)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    var_y = b_returns.var()
    return {
        "policy_loss": pg_loss.item(),
        "value_loss": v_loss.item(),
        "entropy": entropy_loss.item(),
        "approx_kl": approx_kl.item(),
        "clipfrac": float(np.mean(clipfracs)),
        "explained_variance": float("nan") if var_y == 0 else float(1 - (b_returns - b_values).var() / var_y),
        **(penalty.log() if penalty is not None else {}),
    }


def grown_pool(pool: list, rollout_policy: dict, batch: dict) -> list:
    """The self-play pool after a rollout: its policy joins when it beat the latest snapshot."""
    vs_latest = batch["episodes"].get(f"snapshot_{len(pool) - 1}", [])
    if len(vs_latest) >= 8 and float(np.mean([e["return"] for e in vs_latest])) > 0:
        pool = pool + [rollout_policy]
        pool = pool[:1] + pool[1:][-POOL_SIZE:]
    return pool


def copied(agent: ActorCritic) -> dict:
    return {k: v.clone() for k, v in agent.state_dict().items()}


def winrate(episodes) -> float:
    """First places of the learner's seat in games against one kind of opponent (NaN: none played)."""
    return float(np.mean([e["rank"] == 1 for e in episodes])) if episodes else float("nan")


# ---------------------------------------------------------------- training
def main(args: Args, variant: Variant | None = None) -> ActorCritic:
    """Train and return the network."""
    variant = variant or Variant()
    run = prepare(args, variant)
    try:
        return train(args, run, variant)
    finally:
        run.release()


def train(args, run: RunFolder, variant: Variant) -> ActorCritic:
    import torch

    from agents.network import ActorCritic, input_size

    torch.manual_seed(args.seed)
    # The update runs while the rollout workers wait for the next rollout, so it may use their cores.
    torch.set_num_threads(max(1, args.workers))
    scales = measure_scales(args.game, args.players, args.critic, seed=args.seed, games=SCALE_GAMES, rules=variant.rules,
                            **variant.reads())
    facts = envs.info(args.game, args.players, **variant.rules)
    agent = ActorCritic(input_size(facts, **variant.reads()), facts.num_actions, scales["critic_mean"].size, args.hidden)
    with torch.no_grad():
        for name in ("obs_mean", "obs_std", "critic_mean", "critic_std"):
            getattr(agent, name).copy_(torch.as_tensor(scales[name]))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    pool = [copied(agent)]  # the opponent pool: frozen copies of the network; the first is the untrained one
    start_update, global_step, played, wall_before = 1, 0, 0, 0.0
    if args.resume:
        ckpt = run.resume_from
        agent.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        meta = ckpt["meta"]
        pool, start_update, global_step, wall_before = meta["pool"], meta["update"] + 1, meta["global_step"], meta["wall_seconds"]
        played = meta.get("rollout_steps_played", global_step)
    config = RolloutConfig.of(args, variant, scales["reward_scale"])
    collector, path = open_collector(args, config)
    plan = Plan(args, isinstance(collector, VectorRollout), start_update - 1, played)
    if args.resume and start_update > plan.num_updates:  # said, not a "done" line as if it had trained
        return nothing_left(agent, collector, run, plan, start_update - 1, global_step, variant)
    log = RunLog(run, fresh=not args.resume, total=plan.num_updates * args.rollout_steps, initial=global_step)
    print(f"{variant.module}: {args.game}, {args.players} players, run folder {run.path}"
          f"{' (resumed at update ' + str(start_update) + ')' if args.resume else ''}\n  rollouts: {path}\n  {plan}\n"
          f"  writes progress.csv (a row per update), checkpoint.pt (every update), final.pt (at the end); {log.note}\n"
          f"  {PROGRESS_LABELS}")
    t_start = time.time()
    try:
        if variant.warm_start is not None and not args.resume:
            warm_steps = variant.warm_start(agent, optimizer, args, lambda *classes: open_collector(args, config, *classes)[0], log.say)
            global_step += warm_steps  # warm-start play counts in the training budget
            log.advance(warm_steps, grow=True)
            pool = [copied(agent)]  # the warm start is the first snapshot
        update = start_update
        while update <= plan.num_updates:
            t0 = time.time()
            lr = args.learning_rate * (1.0 - (update - 1.0) / plan.num_updates)  # annealed linearly to 0
            optimizer.param_groups[0]["lr"] = lr
            rollout_policy = copied(agent)
            batch = collector.collect(rollout_policy, pool, seed=(args.seed, update))
            global_step += batch["env_steps"]
            t_rollout = time.time() - t0
            stats = ppo_update(agent, optimizer, batch, args, update, plan.num_updates, variant.penalty, pool)
            pool = grown_pool(pool, rollout_policy, batch)
            if update == 1 and (warning := plan.overshoot(batch["env_steps"])):
                log.say(warning)
            if plan.record(update, batch["env_steps"]):
                log.say(f"update {update} played {batch['env_steps']:,} env steps: now {plan.num_updates} update(s) in all")
                log.retotal(global_step + (plan.num_updates - update) * batch["env_steps"])
            elapsed = time.time() - t0
            row = {"update": update, "global_step": global_step, "episode_return": batch["mean_return"],
                   "winrate_vs_random": winrate(batch["episodes"].get("random")),
                   "winrate_vs_heuristic": winrate(batch["episodes"].get("heuristic")), **stats,
                   "learning_rate": lr, "pool_size": len(pool) - 1, "transitions": len(batch["actions"]),
                   "steps_per_second": batch["env_steps"] / elapsed, "rollout_steps_per_second": batch["env_steps"] / t_rollout,
                   "wall_seconds": wall_before + time.time() - t_start}
            log.write(row, batch["env_steps"], pool_size=len(pool) - 1)
            meta = {"update": update, "global_step": global_step, "rollout_steps_played": plan.played,
                    "wall_seconds": row["wall_seconds"], "pool": pool}
            if variant.after_update is not None:  # before the checkpoint: a resumed run redoes both
                variant.after_update(agent, row)
            save_checkpoint(checkpoint_dict(agent, args, variant, meta, optimizer), run.checkpoint_path)
            update += 1
    finally:
        collector.close()
        log.close()
    final = {"global_step": global_step, "wall_seconds": wall_before + time.time() - t_start}
    save_checkpoint(checkpoint_dict(agent, args, variant, final), run.final_path)
    print(f"{variant.module}: done, {global_step:,} env steps in {final['wall_seconds']:.0f} s; {run.path} holds {', '.join(log.written)}")
    if args.export:
        from train.export import export

        for path in export(checkpoint_dict(agent, args, variant, {"global_step": global_step}), args, final, run.csv_path, variant.module):
            print(f"  exported {path}")
    return agent


def nothing_left(agent: ActorCritic, collector, run: RunFolder, plan: Plan, updates: int, global_step: int,
                 variant: Variant) -> ActorCritic:
    """A resumed run that already played every update --steps gives: said, and nothing changes."""
    collector.close()
    print(f"{variant.module}: nothing left to train: {run.path} already holds {updates} update(s), {global_step:,} "
          f"env steps, of the {plan.num_updates} that --steps {plan.steps:,} gives; give a larger --steps to train on "
          "(final.pt is as it was)")
    return agent


def run_cli(argv=None, parse=parse_args, variant_of: Callable = lambda args: Variant()) -> int:
    args = parse(argv)
    variant = variant_of(args)
    module = variant.module
    try:
        run = prepare(args, variant)
    except ValueError as e:  # a refusal before anything is written: one line, exit 2
        print(f"python -m {module}: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        train(args, run, variant)
    except KeyboardInterrupt:
        resumable = os.path.isfile(run.checkpoint_path)
        print(f"\npython -m {module}: interrupted; " + (f"continue with the same command plus --resume (from {run.checkpoint_path})"
              if resumable else "no update finished, nothing to resume"), file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        run.release()
    return 0


if __name__ == "__main__":
    sys.exit(cli.as_command(run_cli))
