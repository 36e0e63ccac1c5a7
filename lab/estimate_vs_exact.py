"""How much of the exact best-response gain does `experiments.exploit`'s trained best response find?

On a small preset the gain is known exactly (`experiments.solve`): for a target policy, the best
response's value in each seat minus the target's own value there (playing itself), whose mean
over the seats is NashConv / 2 in two-player zero-sum rewards. `experiments.exploit --rules small`
trains a best response on the same preset and measures its edge on held-out deals (the
learner's score minus the target's in the same seat, a game, which on the preset is the same
unit). This script runs both for each target and budget and writes a table.

    python -m lab.estimate_vs_exact --game neu --targets random,heuristic --steps 100000,1000000,10000000 --out runs/estimate_vs_exact

Each training is a run folder of its own under ``--out`` (so a run never overwrites another),
and ``table.md`` / ``table.json`` there hold the result; a target or budget already in
``table.json`` is skipped, so the same command goes on where an interrupted one stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

PRESET = {"rules": "small"}


def exact_gain(game: str, target: str) -> dict:
    """The exact best-response gain against `target` on the preset, per seat and on average."""
    import envs
    from agents.spec import make_from_spec
    from experiments.solve import agent_policy
    from train import cfr

    tree = cfr.build_tree(envs.engine_class(game)(2, **PRESET))
    policy = agent_policy(make_from_spec(target, game, 2, seed=0), tree)
    v0 = cfr.game_value(tree, policy)
    br = [cfr.best_response(tree, policy, s)[0] for s in (0, 1)]
    gains = [br[0] - v0, br[1] + v0]
    return {"gain_seat0": gains[0], "gain_seat1": gains[1], "gain": float(np.mean(gains)), "nash_conv": br[0] + br[1]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.estimate_vs_exact", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="neu", help="a game with a small preset (default: neu)")
    p.add_argument("--targets", default="random,heuristic", help="comma-separated agent specs (default: random,heuristic)")
    p.add_argument("--steps", default="100000,1000000,10000000", help="comma-separated training budgets in env steps")
    p.add_argument("--deals", type=int, default=4000, help="held-out deals of each final edge (default: 4000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/estimate_vs_exact", help="folder of the runs and the table")
    args = p.parse_args(argv)
    from experiments import exploit as ex

    os.makedirs(args.out, exist_ok=True)
    table_path = os.path.join(args.out, "table.json")
    rows = json.load(open(table_path)) if os.path.exists(table_path) else []
    done = {(r["target"], r["steps"]) for r in rows}
    for target in [t.strip() for t in args.targets.split(",") if t.strip()]:
        exact = exact_gain(args.game, target)
        for steps in [int(s) for s in args.steps.split(",")]:
            if (target, steps) in done:
                continue
            t0 = time.time()
            name = "".join(c if c.isalnum() else "_" for c in target)
            r = ex.exploit(args.game, 2, target, steps=steps, seed=args.seed, rules="small", deals=args.deals,
                           out=os.path.join(args.out, f"{name}_{steps}"), say=None, warm_start="none")
            rows.append({"target": target, "steps": steps, "trained_steps": r.steps, "edge": r.edge, "edge_ci": r.edge_ci,
                         **exact, "share": r.edge / exact["gain"] if exact["gain"] else None,
                         "seconds": round(time.time() - t0, 1), "deals": args.deals, "seed": args.seed})
            tmp = table_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(rows, f, indent=1)
            os.replace(tmp, table_path)  # written aside, then renamed: an interrupted run keeps the earlier rows
            share = "no gain to find" if rows[-1]["share"] is None else f"{rows[-1]['share']:.0%}"
            print(f"{target} at {steps:,} steps: edge {r.edge:+.4f} ± {r.edge_ci:.4f}, exact gain {exact['gain']:.4f} "
                  f"({share}), {rows[-1]['seconds']} s", flush=True)
    lines = ["| target | steps | trained edge (95% CI) | exact gain | share found | seconds |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = f"{r['share']:.0%}" if r["share"] is not None else "–"
        lines.append(f"| {r['target']} | {r['steps']:,} | {r['edge']:+.4f} ± {r['edge_ci']:.4f} | {r['gain']:.4f} | {share} | {r['seconds']} |")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
