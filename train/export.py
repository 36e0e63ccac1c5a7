"""Export a trained policy: the checkpoint (weights, no optimizer), a .json sidecar, a learning curve.

`python -m train.ppo ... --export agents/checkpoints/neu_4p.pt` calls `export`
at the end of training and writes:

* ``neu_4p.pt``: the checkpoint `agents.PPOAgent.load` reads;
* ``neu_4p.json``: the command that reproduces it, its arguments, env steps,
  wall time, the machine, and the run's progress.csv;
* ``neu_4p_curve.png``: first-place rate against the heuristic and against
  random over the run (needs matplotlib; skipped with a note without it).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import platform
import shlex
import sys

import numpy as np
import torch

from agents.checkpoint import save_checkpoint
from train.cli import shown


def from_nothing(argv: list[str]) -> list[str]:
    """A command's words without ``--resume``: the command that makes the run from nothing."""
    return [shown(a) for a in argv if not (len(a) > 4 and "--resume".startswith(a))]  # argparse takes --resu too


def export(checkpoint: dict, args, final: dict, csv_path: str, module: str = "train.ppo", command: str | None = None) -> list[str]:
    """Write the policy, its sidecar and its curve next to `args.export`; returns the paths written. The
    sidecar's command is `command`, or this process's own (without ``--resume``) when it runs `module`."""
    save_checkpoint(checkpoint, args.export)
    run_as_command = os.path.basename(sys.argv[0]) == module.rsplit(".", 1)[-1] + ".py"
    stem = os.path.splitext(args.export)[0]
    sidecar = {
        "checkpoint": os.path.basename(args.export),
        "game": args.game,
        "num_players": args.players,
        "critic": args.critic,
        "reproduce": command or (f"python -m {module} {shlex.join(from_nothing(sys.argv[1:]))}" if run_as_command else None),
        "made_by": checkpoint.get("made_by"),
        "args": {**dataclasses.asdict(args), **({"resume": False} if hasattr(args, "resume") else {})},
        "env_steps": final["global_step"],
        "wall_seconds": round(final["wall_seconds"], 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, {platform.platform()}",
        "learning_curve_csv": os.path.relpath(csv_path),
    }
    with open(stem + ".json", "w") as f:
        json.dump(sidecar, f, indent=2)
    written = [args.export, stem + ".json"]
    if plot_learning_curve(csv_path, stem + "_curve.png", f"{args.game}, {args.players} players", args.players):
        written.append(stem + "_curve.png")
    else:
        print("  learning curve: skipped, matplotlib is not installed (pip install matplotlib)")
    return written


def plot_learning_curve(csv_path: str, png_path: str, title: str, num_players: int) -> bool:
    """Win rate (first place) of the learner's seat vs the heuristic and vs random, against env steps."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    steps = np.array([float(r["global_step"]) for r in rows])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("winrate_vs_heuristic", "vs heuristic"), ("winrate_vs_random", "vs random")):
        y = np.array([float(r[key]) for r in rows])
        if np.isnan(y).all():
            continue
        smooth = np.array([np.nanmean(y[max(0, i - 4) : i + 1]) for i in range(len(y))])  # mean of the last 5 updates
        ax.plot(steps, smooth, label=label)
    ax.axhline(1 / num_players, color="grey", lw=0.8, ls="--", label="chance (1/N)")
    ax.set(xlabel="env agent-steps", ylabel="first place, 1 learner seat", title=f"PPO learning curve: {title}", ylim=(0, 1))
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=80)
    plt.close(fig)
    return True
