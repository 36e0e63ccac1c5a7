"""PPO taught by a teacher: distil any agent (a search agent, the heuristic) into the network, then fine-tune.

    python -m train.ppo_search --game neu --players 4 --teacher heuristic --imitation-steps 300_000 \\
        --kl-clone 1 --strength-every 5

Every flag of `python -m train.ppo_warmstart` works here too (`--features`,
`--kl-clone`, `--rules`...). What this variant changes and adds:

* ``--teacher SPEC``: who is distilled, any agent spec (`agents/spec.py`).
  Before PPO the teacher plays every seat for ``--imitation-steps`` env steps
  (`train/distill.py`: on the batched engine when the teacher has
  ``act_batch``, else on AEC tables, told its information state before each
  ``act()`` as a search agent needs), and the policy is fitted
  to its moves and the critic to its returns (`train.ppo_warmstart.fit`).
  A teacher that offers its per-option values (``option_values``, see
  `train/distill.py`) also gives soft targets: ``--soft-targets W`` of each
  target is ``softmax(values / --value-temperature)`` over the legal moves.
  PPO then starts from the clone; ``--kl-clone`` holds it near the clone.
* ``--departure-weight W``: the decisions where the teacher leaves the
  heuristic's move weigh W in the fit (the rest weigh 1). The distillation
  says how often the teacher departs and how often the clone follows it there.
* The teacher's decisions are kept in the run folder (``teacher.npz``);
  ``--teacher-data PATH`` distils from such a file instead of playing again,
  and ``--teacher-data A,B,...`` from several, read as one.
  The checkpoint written right after the distillation (update 0) lets
  ``--resume`` continue from there.
* ``--strength-every N``: right after the distillation (update 0) and every
  N updates, the greedy policy plays
  ``--strength-deals`` held-out duplicate deals against the game's heuristic
  (one game per seat, and the heuristic alone on the same deal); the edge
  (score a game, ± 95% CI over deals) goes to ``strength.csv`` with the
  update, env steps and wall seconds. Its deals never meet a training deal
  (`train.best_response`'s streams), and it draws no random number the run
  uses, so a run with or without it trains the same network.
* ``command.txt`` in the run folder: the command that started the run and
  the one that continues it.

The shipped network reads only its observation (and, with ``--features``,
features of it): the teacher is never an input, and `agents.PPOAgent.act`
stays one forward pass. With ``--hint`` it also reads the heuristic's move for
its own view (one-hot, as `train.ppo_warmstart`'s): the teacher's decisions are
recorded without it, and the hint is added to them before the fit, so a
teacher file serves runs with and without ``--hint``.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from agents.npzfile import read_npz

from train import best_response as br
from train import cli, ppo, ppo_warmstart
from train.distill import TeacherGames, batch_input, heuristic_moves, soft_targets, with_hint
from train.rollout import measure_scales

# torch is imported when training starts, so --help is quick.
if TYPE_CHECKING:
    import torch

STRENGTH = 2**61 + 2**59  # first deal seed of the strength log (+ seed * 2**32): no training deal reaches it


@dataclass
class Args(ppo_warmstart.Args):
    teacher: str = field(default="heuristic", metadata={"help": "the agent to distil: any agent spec (heuristic, ppo:PATH, cfr:PATH, pimc, pimc:worlds=N, FILE.py:Name, package.module:Name)"})
    teacher_data: str = field(default="", metadata={"help": "distil from this teacher.npz (a run folder's, or lab.cheat_teacher's) instead of playing the teacher's games, or from several joined by commas; give --teacher the agent that made it, which checkpoints name"})
    soft_targets: float = field(default=0.5, metadata={"help": "share of each target given to softmax(option values / --value-temperature) when the teacher offers values"})
    departure_weight: float = field(default=1.0, metadata={"help": "weight in the fit of the decisions where the teacher leaves the heuristic's move (the rest weigh 1): they are few, and they are what the teacher adds"})
    value_temperature: float = field(default=1.0, metadata={"help": "temperature of the soft targets, in the game's score units"})
    strength_every: int = field(default=0, metadata={"help": "every N updates, log the edge over the heuristic on held-out deals in strength.csv (0: off)"})
    strength_deals: int = field(default=200, metadata={"help": "held-out duplicate deals of each strength-log point"})


MAX_TEACHER_BYTES = 1 << 30  # a teacher.npz, uncompressed: twice the largest made here (Ma's Jong's 300 k decisions, 440 MB)


def read_teacher_data(args: Args, headers_only: bool = False) -> dict:
    """--teacher-data: one teacher.npz (a run folder's, `distil`) or several joined by commas,
    read in order as one file: their decisions one after another (links shifted to match) and
    their env steps summed. Each is checked as `read_teacher_file` says."""
    paths = args.teacher_data.split(",")
    parts = [read_teacher_file(args, p, headers_only) for p in paths]
    if headers_only or len(parts) == 1:
        return parts[0]
    if len({"values" in d for d in parts}) > 1:
        raise ValueError(f"--teacher-data: some files hold option values and some do not ({args.teacher_data}); "
                         "soft targets need them in all or none")
    if len({d["critic_in"].shape[1:] for d in parts}) > 1:
        raise ValueError(f"--teacher-data: the files' critic_in columns differ in width ({args.teacher_data})")
    data, at = {}, 0
    links = []
    for d in parts:  # a link (next_index) counts rows from its own file's first
        links.append(np.where(d["next_index"] >= 0, d["next_index"] + at, -1))
        at += len(d["actions"])
    for k in parts[0]:
        if k != "env_steps":
            data[k] = np.concatenate(links if k == "next_index" else [d[k] for d in parts])
    data["env_steps"] = np.int64(sum(int(d["env_steps"]) for d in parts))
    return data


def read_teacher_file(args: Args, path: str, headers_only: bool = False, only: frozenset | None = None) -> dict:
    """One teacher.npz, checked from its zip index and array headers against this run's game,
    players and --features before anything is read (`agents.npzfile`); then its values: legal
    actions, finite numbers, links inside the file. With `only`, just those columns are read
    and checked (`check_teacher_file` goes column by column)."""
    import envs
    from agents.network import input_size

    facts = envs.info(args.game, args.players, **ppo_warmstart.parse_rules(args.rules))
    width = input_size(facts, args.features)
    columns = {"obs": ("f", ("rows", width)), "masks": ("b", ("rows", facts.num_actions)), "actions": ("i", ("rows",)),
               "rewards": ("f", ("rows",)), "dones": ("b", ("rows",)), "next_index": ("i", ("rows",)),
               "values": ("f", ("rows", facts.num_actions)), "critic_in": ("f", (None, None)), "env_steps": ("iu", ())}
    what = f"--teacher-data: for {args.game} at {args.players} players{' with --features' if args.features else ''},"
    data = read_npz(path, columns, MAX_TEACHER_BYTES, what, optional=frozenset({"values"}), headers_only=headers_only, only=only)
    if headers_only:
        return data
    rows = len(data["actions"]) if "actions" in data else 0
    problem = None
    if "masks" in data:
        actions = data["actions"]
        if rows == 0:
            problem = "it holds no decisions"
        elif not ((actions >= 0) & (actions < facts.num_actions)).all() or not data["masks"][np.arange(rows), actions].all():
            problem = "an action is outside the game's actions or not legal under its mask"
    if problem is None and "next_index" in data and not ((data["next_index"] >= -1) & (data["next_index"] < rows)).all():
        problem = "next_index points outside the file"
    if problem is None and not all(np.isfinite(data[k]).all() for k in ("obs", "rewards") if k in data):
        problem = "obs or rewards hold a NaN or an infinity"
    if problem is None and "values" in data and np.isinf(data["values"]).any():  # NaN: an action without a value (train.distill)
        problem = "values hold an infinity"
    if problem is None and "env_steps" in data and int(data["env_steps"]) < 0:
        problem = "env_steps is negative"
    if problem:
        raise ValueError(f"{what} {path}: {problem}")
    return data


def check_teacher_file(args: Args, path: str) -> None:
    """Every check of `read_teacher_file`, made before a run folder exists, one group of columns at
    a time so that no more than one column is held at once (the fit reads the file again)."""
    headers = read_teacher_file(args, path, headers_only=True)
    for group in (("actions", "masks"), ("next_index",), ("obs",), ("rewards",), ("values",), ("env_steps",)):
        if group[0] in headers:
            read_teacher_file(args, path, only=frozenset(group) | {"actions"})  # actions give the row count


def check_args(args: Args) -> None:
    ppo_warmstart.check_args(args)
    ppo.check_numbers(args, {"strength_every": (0, 10**9), "strength_deals": (2, 10**6)}, {})
    if not args.imitation_steps and not args.teacher_data:
        raise ValueError("train.ppo_search distils a teacher first: give --imitation-steps N or --teacher-data PATH")
    if args.teacher_data:
        for path in args.teacher_data.split(","):  # before anything is written: a bad file leaves no run folder
            check_teacher_file(args, path)
        read_teacher_data(args, headers_only=True)
    if not (math.isfinite(args.soft_targets) and 0 <= args.soft_targets <= 1):
        raise ValueError(f"--soft-targets must be in [0, 1], got {args.soft_targets}")
    if not (math.isfinite(args.departure_weight) and args.departure_weight > 0):
        raise ValueError(f"--departure-weight must be a finite number above 0, got {args.departure_weight}")
    if not (math.isfinite(args.value_temperature) and args.value_temperature > 0):
        raise ValueError(f"--value-temperature must be a finite number above 0, got {args.value_temperature}")
    if args.critic != "plain":
        raise ValueError("train.ppo_search fits the plain critic to the teacher's returns: use --critic plain")
    from agents import make_agent

    make_agent(args.teacher, args.game, args.players, seed=0)  # a bad spec: ValueError in one line


def parse_args(argv: list[str] | None = None) -> Args:
    return ppo.parse_args(argv, Args, check_args, prog="python -m train.ppo_search", description=__doc__.split("\n\n")[0])


def command(args: Args, resume: bool = False, module: str = "train.ppo_search") -> str:
    """The command line that gives `args` (the flags that differ from the defaults)."""
    return cli.command_line(args, module, resume)


def write_command(args: Args, path: str, module: str = "train.ppo_search") -> None:
    """command.txt: the command that started the run, the one that continues it and, for a run that
    distils a teacher, the one that distils the same data again."""
    args = dataclasses.replace(args, resume=False, overwrite=False)
    own = dataclasses.replace(args, teacher_data=os.path.join(path, "teacher.npz")) if args.teacher_data else args
    # continuing reads the folder's own copy of the teacher data, so the folder alone is enough to go on
    text = (f"# started with\n{command(args, module=module)}\n# continue it (from checkpoint.pt, exactly as if never "
            f"stopped) with\n{command(own, resume=True, module=module)}\n")
    if args.imitation_steps or args.teacher_data:
        again = dataclasses.replace(args, teacher_data=os.path.join(path, "teacher.npz"), out="NEW_FOLDER")
        text += f"# distil the same teacher data again, in a new --out, with\n{command(again, module=module)}\n"
    with open(os.path.join(path, "command.tmp.txt"), "w") as f:
        f.write(text)
    os.replace(os.path.join(path, "command.tmp.txt"), os.path.join(path, "command.txt"))


def distil(agent, optimizer, args: Args, open_collector, say=print, variant_of=None, fit=None) -> int:
    """The warm start: the teacher's decisions (played, or read from --teacher-data), the fit, and a
    checkpoint at update 0 (so --resume can start from the clone). Returns the env steps played.
    A variant built on this one gives its `variant_of(args)` (default: this module's `variant`) and
    `fit` (default `ppo_warmstart.fit`)."""
    run_variant = (variant_of or variant)(args)
    t0 = time.time()
    path = ppo.run_folder(args)
    write_command(args, path, run_variant.module)
    if os.path.isfile(os.path.join(path, "strength.csv")):  # a replaced run's (--overwrite)
        os.remove(os.path.join(path, "strength.csv"))
    if args.teacher_data:
        data = read_teacher_data(args)
        say(f"distillation: {len(data['actions']):,} decisions read from {args.teacher_data}")
    else:
        scale = measure_scales(args.game, args.players, "plain", seed=args.seed, games=ppo.SCALE_GAMES,
                               rules=ppo_warmstart.parse_rules(args.rules), features=args.features)["reward_scale"]
        teacher = TeacherGames(args.teacher, args.game, args.players, args.num_envs * max(1, args.workers), scale,
                               args.features, ppo_warmstart.parse_rules(args.rules))
        say(f"distillation: the teacher plays on {teacher.path}")
        data = teacher.collect(args.imitation_steps, seed=args.seed, progress=True)
    tmp = os.path.join(path, "teacher.tmp.npz")
    np.savez_compressed(tmp, **data)  # mostly zeros: Ma's Jong's 300 k decisions take 440 MB uncompressed
    os.replace(tmp, os.path.join(path, "teacher.npz"))
    targets = soft_targets(data, args.soft_targets, args.value_temperature)
    import envs

    view = data["obs"][:, :envs.info(args.game, args.players, **ppo_warmstart.parse_rules(args.rules)).obs_size]
    moves = heuristic_moves(args.game, args.players, view, data["masks"])
    departs = moves != data["actions"]  # where the teacher leaves the heuristic's move
    if args.hint:
        data = {**data, "obs": with_hint(args.game, args.players, data["obs"], view, data["masks"], moves)}
    if args.departure_weight != 1:
        data = {**data, "weights": np.where(departs, np.float32(args.departure_weight), np.float32(1))}
    agree = (fit or ppo_warmstart.fit)(agent, optimizer, args, data, targets)
    kind = "soft (option values)" if targets is not None else "the teacher's moves"
    say(f"distillation: {len(data['actions']):,} decisions of {teacher_label(args)}, targets {kind}; the policy's top "
        f"action agrees on {agree:.1%}")
    if departs.any():
        say(f"  the teacher leaves the heuristic's move on {departs.mean():.1%} of them (weighted {args.departure_weight:g} "
            f"in the fit); the policy's top action takes the teacher's move on {departure_agreement(agent, data, departs):.1%} of those")
    steps = int(data["env_steps"])
    meta = {"update": 0, "global_step": steps, "rollout_steps_played": 0, "wall_seconds": time.time() - t0,
            "pool": [ppo.copied(agent)]}
    if run_variant.after_update is not None:  # the strength log's first row: the clone itself
        run_variant.after_update(agent, meta)
    ppo.save_checkpoint(ppo.checkpoint_dict(agent, args, run_variant, meta, optimizer), os.path.join(path, "checkpoint.pt"))
    return steps


def departure_agreement(agent, data: dict, rows: np.ndarray) -> float:
    """The share of the decisions `rows` (a boolean mask) where the policy's top action is the teacher's."""
    import torch

    with torch.no_grad():
        obs, masks = torch.as_tensor(data["obs"][rows]), torch.as_tensor(data["masks"][rows])
        return (agent.masked_logits(obs, masks).argmax(-1).numpy() == data["actions"][rows]).mean()


class ReadsFeatures:
    """A network that reads features, given batches of plain observations (what br.duplicate_deals plays)."""

    def __init__(self, net, game: str, num_players: int, features: bool, hint: bool = False) -> None:
        self.net, self.game, self.n, self.features, self.hint = net, game, num_players, features, hint

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        import torch

        x = batch_input(self.game, self.n, self.features, obs.numpy(), mask.numpy(), self.hint)
        return self.net.masked_logits(torch.as_tensor(x), mask)


def strength(net, game: str, num_players: int, features: bool, first_seed: int, deals: int,
             rules: dict | None = None, hint: bool = False) -> dict:
    """The greedy policy's edge over the heuristic on duplicate deals (score a game, 95% CI over deals)."""
    target = br.Target("heuristic", game, num_players, rules)
    played = br.duplicate_deals(ReadsFeatures(net, game, num_players, features, hint), target, game, num_players, first_seed, deals)
    per_deal = (played["br_scores"] - played["target_scores"]).mean(1)
    ci = 1.96 * per_deal.std(ddof=1) / math.sqrt(deals)
    return {"edge_vs_heuristic": float(per_deal.mean()), "edge_ci": float(ci),
            "first_place": float(played["br_first"].mean())}


class StrengthLog:
    """The --strength-every hook (`ppo.Variant.after_update`): rows of strength.csv."""

    COLUMNS = ("update", "global_step", "wall_seconds", "deals", "edge_vs_heuristic", "edge_ci", "first_place", "eval_seconds")

    def __init__(self, args: Args) -> None:
        self.args = args
        self.path = os.path.join(ppo.run_folder(args), "strength.csv")

    def __call__(self, agent, row: dict) -> None:
        a = self.args
        if row["update"] % a.strength_every:
            return
        t0 = time.time()
        got = strength(agent, a.game, a.players, a.features, STRENGTH + a.seed * 2**32, a.strength_deals,
                       ppo_warmstart.parse_rules(a.rules), a.hint)
        rows = []
        if os.path.isfile(self.path):  # rows past a resumed checkpoint are measured again
            with open(self.path, newline="") as f:
                rows = [r for r in csv.DictReader(f) if int(r["update"]) < row["update"]]
        rows.append({"update": row["update"], "global_step": row["global_step"], "wall_seconds": f"{row['wall_seconds']:.1f}",
                     "deals": a.strength_deals, **{k: f"{v:.4f}" for k, v in got.items()}, "eval_seconds": f"{time.time() - t0:.1f}"})
        tmp = self.path + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.COLUMNS)
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, self.path)


def teacher_label(args: Args) -> str:
    """Who taught the run, as its checkpoints name it: with --teacher-data, also the file the decisions came
    from (--teacher should then name the agent that made it)."""
    return f"{args.teacher} (decisions read from {args.teacher_data})" if args.teacher_data else args.teacher


def variant(args: Args) -> ppo.Variant:
    v = ppo_warmstart.variant(args)
    v.module = "train.ppo_search"
    v.teacher = teacher_label(args)
    v.warm_start = distil
    v.after_update = StrengthLog(args) if args.strength_every else None
    return v


def main(args: Args):
    check_args(args)
    return ppo.main(args, variant(args))


def run_cli(argv=None) -> int:
    return ppo.run_cli(argv, parse=parse_args, variant_of=variant)


if __name__ == "__main__":
    sys.exit(cli.as_command(run_cli))
