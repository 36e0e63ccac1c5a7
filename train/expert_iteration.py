"""Expert iteration: a search teaches the network, then the network plays inside the search, round after round.

    python -m train.expert_iteration --game deadfall --players 4 --teacher pimc:worlds=8 --rounds 4 \\
        --imitation-steps 200_000 --steps 1_000_000 --out runs/df4p_expert

Round 0 is a `train.ppo_search` run: the search (``--teacher``, a ``pimc`` or
``ismcts`` spec) plays every seat for ``--imitation-steps``, a fresh network
is fitted to its moves, and PPO fine-tunes it for ``--steps``. In round r ≥ 1
the teacher is the same search with round r−1's network as its play-out
policy (``rollout=ppo:PATH``: the network plays every seat of every play-out
and gives the safe rule its default move), so a better network makes a better
search, which teaches the next network. Every flag of `train.ppo_search`
applies to every round; round r uses seed ``--seed + r``.

After each round its network plays ``--validation-deals`` duplicate deals
against the game's heuristic (deals that no training run, strength log or
`experiments` test seed meets), and the edge goes to ``rounds.csv`` with the
round's steps and wall seconds. The loop stops after ``--rounds`` rounds, or
as soon as a round's edge is not above the best earlier round's by more than
``--min-gain``. ``final.pt`` is then the last round's network that gained (a
`agents.PPOAgent` checkpoint whose header names its teacher and command).

The run folder holds ``round_<r>/`` (each a whole `train.ppo_search` run
folder with its own ``command.txt``, ``strength.csv`` and checkpoint),
``rounds.csv`` and ``command.txt``; ``--export PATH.pt`` also writes the
same network there, with its sidecar and curve (`train/export.py`). ``--resume`` continues an interrupted run
from its last checkpoint, exactly as if it had never stopped: finished rounds
are read from ``rounds.csv``, the round under way resumes from its
``checkpoint.pt``.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass, field

from agents.checkpoint import read_checkpoint

from train import cli, ppo, ppo_search
from train.runfolder import RunFolder

VALIDATION = 2**61 + 2**60  # first deal seed of the validation deals (+ seed * 2**32): no training or strength-log deal
COLUMNS = ("round", "teacher", "global_step", "wall_seconds", "deals", "edge_vs_heuristic", "edge_ci", "first_place", "best")


@dataclass
class Args(ppo_search.Args):
    rounds: int = field(default=3, metadata={"help": "most rounds of distil-then-fine-tune"})
    validation_deals: int = field(default=200, metadata={"help": "held-out duplicate deals each round's network plays against the heuristic"})
    min_gain: float = field(default=0.0, metadata={"help": "stop when a round's edge is not above the best earlier round's by more than this"})


def check_args(args: Args) -> None:
    ppo.check_numbers(args, {"rounds": (1, 1000), "validation_deals": (2, 10**6)}, {})
    if not (math.isfinite(args.min_gain) and args.min_gain >= 0):
        raise ValueError(f"--min-gain must be a finite number of 0 or more, got {args.min_gain}")
    from agents.spec import SEARCH_KINDS, split_label

    kind, _, options = split_label(args.teacher)[1].partition(":")
    if kind not in SEARCH_KINDS or kind == "pimc_cheat":
        raise ValueError(f"--teacher must be a fair search spec (pimc:..., ismcts:...) whose play-outs a network can play, got {args.teacher!r}")
    if "rollout=" in options:
        raise ValueError(f"--teacher must not set rollout= ({args.teacher!r}): round 0 plays out with the heuristic, later rounds with the network")
    if args.teacher_data:
        raise ValueError("train.expert_iteration plays each round's teacher: --teacher-data is refused")
    if not args.out:
        raise ValueError("train.expert_iteration needs --out, the folder that holds every round")
    ppo_search.check_args(round_args(args, 0, ""))


def parse_args(argv: list[str] | None = None) -> Args:
    return ppo.parse_args(argv, Args, check_args, prog="python -m train.expert_iteration", description=__doc__.split("\n\n")[0])


def round_args(args: Args, r: int, previous: str) -> ppo_search.Args:
    """Round r's `train.ppo_search` arguments: its teacher plays out with `previous` (a final.pt) after round 0."""
    base = {f.name: getattr(args, f.name) for f in dataclasses.fields(ppo_search.Args)}
    teacher = args.teacher if r == 0 else f"{args.teacher}{',' if ':' in args.teacher else ':'}rollout=ppo:{previous}"
    return ppo_search.Args(**{**base, "teacher": teacher, "seed": args.seed + r, "out": os.path.join(args.out, f"round_{r}"),
                              "resume": False, "overwrite": False, "export": ""})


def read_rounds(path: str) -> list[dict]:
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_rounds(path: str, rows: list[dict]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def write_command(args: Args) -> None:
    args = dataclasses.replace(args, resume=False, overwrite=False)
    text = (f"# started with\n{cli.command_line(args, 'train.expert_iteration')}\n# continue it (exactly as if never "
            f"stopped) with\n{cli.command_line(args, 'train.expert_iteration', resume=True)}\n")
    tmp = os.path.join(args.out, "command.tmp.txt")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(args.out, "command.txt"))


def open_folder(args: Args) -> None:
    """The run folder: new (or replaced with --overwrite), or an earlier run's with --resume."""
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out {args.out} is a file, not a run folder")
    ours = os.path.isfile(os.path.join(args.out, "command.txt"))
    if args.resume and not ours:
        raise ValueError(f"--resume: {args.out} holds no expert iteration run to continue")
    if not args.resume and os.path.isdir(args.out) and os.listdir(args.out):
        if not args.overwrite:
            raise ValueError(f"--out {args.out} already holds a run; runs never overwrite earlier runs: choose "
                             "another --out, continue it with --resume, or replace it with --overwrite")
        if not ours:
            raise ValueError(f"--overwrite: {args.out} does not hold an expert iteration run; it is left as it is")
        shutil.rmtree(args.out)
    os.makedirs(args.out, exist_ok=True)
    if not args.resume:
        write_command(args)


def play_round(args: Args, r: int, previous: str, say=print):
    """Round r's network: trained, resumed from its checkpoint, or (a half-made folder with no
    checkpoint yet) trained again from the start."""
    a = round_args(args, r, previous)
    if os.path.isfile(RunFolder(a.out).checkpoint_path):
        a = dataclasses.replace(a, resume=True)
    elif os.path.isdir(a.out) and os.listdir(a.out):
        a = dataclasses.replace(a, overwrite=True)  # this run's own round, cut off before its first checkpoint
    say(f"expert iteration: round {r}, teacher {a.teacher}" + (" (resumed)" if a.resume else ""))
    return ppo_search.main(a), a


def main(args: Args, say=print) -> list[dict]:
    """Play the rounds; returns rounds.csv's rows (as read back: every value a string)."""
    check_args(args)
    open_folder(args)
    path = os.path.join(args.out, "rounds.csv")
    rows = read_rounds(path) if args.resume else []
    previous = os.path.join(args.out, f"round_{len(rows) - 1}", "final.pt") if rows else ""
    best = max((float(x["edge_vs_heuristic"]) for x in rows), default=-math.inf)
    for r in range(len(rows), args.rounds):
        if rows and str(rows[-1]["best"]) != "1":
            break  # the last round did not gain
        net, a = play_round(args, r, previous, say)
        t0 = time.time()  # the validation's time is the round's too
        got = ppo_search.strength(net, args.game, args.players, args.features, VALIDATION + args.seed * 2**32,
                                  args.validation_deals, ppo_search.ppo_warmstart.parse_rules(args.rules), args.hint)
        meta = read_checkpoint(os.path.join(a.out, "final.pt"))["meta"]
        gained = got["edge_vs_heuristic"] > best + args.min_gain
        rows.append({"round": r, "teacher": a.teacher, "global_step": meta["global_step"],
                     "wall_seconds": f"{meta['wall_seconds'] + time.time() - t0:.1f}", "deals": args.validation_deals,
                     **{k: f"{v:.4f}" for k, v in got.items()}, "best": int(gained)})
        write_rounds(path, rows)
        say(f"expert iteration: round {r}: {got['edge_vs_heuristic']:+.3f} ± {got['edge_ci']:.3f} a game against the "
            f"heuristic on {args.validation_deals} validation deals" + ("" if gained else f"; no gain over {best:+.3f}, stopping"))
        best, previous = max(best, got["edge_vs_heuristic"]), os.path.join(a.out, "final.pt")
    winner = [x for x in rows if str(x["best"]) == "1"][-1]  # the last round that gained
    tmp = os.path.join(args.out, "final.tmp.pt")
    shutil.copyfile(os.path.join(args.out, f"round_{winner['round']}", "final.pt"), tmp)
    os.replace(tmp, os.path.join(args.out, "final.pt"))
    say(f"expert iteration: final.pt is round {winner['round']}'s network ({float(winner['edge_vs_heuristic']):+.3f})")
    if args.export:
        from train.export import export

        folder = os.path.join(args.out, f"round_{winner['round']}")
        ckpt = read_checkpoint(os.path.join(folder, "final.pt"))
        first = dataclasses.replace(args, resume=False, overwrite=False)  # the run as started (and made again)
        started = cli.command_line(first, "train.expert_iteration")
        for written in export(ckpt, first, ckpt["meta"], os.path.join(folder, "progress.csv"), "train.expert_iteration", started):
            say(f"  exported {written}")
    return read_rounds(path)


def run_cli(argv=None) -> int:
    args = parse_args(argv)
    try:
        main(args)
    except ValueError as e:
        print(f"python -m train.expert_iteration: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\npython -m train.expert_iteration: interrupted; continue with the same command plus --resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(cli.as_command(run_cli))
