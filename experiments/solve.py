"""Solve a game's small preset exactly, or measure any agent's exact exploitability on it.

    python -m experiments.solve --game neu --minutes 2
    python -m experiments.solve --game neu --exploit heuristic
    python -m experiments.solve --game neu --exploit cfr:results/solve_neu_.../policy.npz
    python -m experiments.solve --game deadfall      # every game has one: not_for_me, not_your_mas_jong

The small preset (``rules="small"``, RULES.md "Small presets") fixes the player count (two in
every game) and is a tree small enough to enumerate (a bar counts its first deals):
`train.cfr.build_tree` walks it from the engine. The solver takes any player count: with more
than two, CFR+ still runs and NashConv stays exact, but the average policy has no equilibrium
guarantee (tested on three-player Kuhn poker against OpenSpiel). Solving runs CFR+ until
the average policy's NashConv is at most ``--target`` (a fraction of the score range, default
10^-3) or ``--minutes`` pass, and writes into a fresh run folder (``--out``, default
``results/solve_<game>_<time>``; never an existing run):

* ``result.json``: NashConv of the average policy, each seat's best-response value against it,
  each seat's value (``values``; ``value_seat0``), the score range, the iterations and seconds, the tree's size
  (information sets per seat, decisions, moves) and the curve (NashConv every ``--check-every``
  iterations);
* ``policy.npz``: the average policy, playable as the agent ``cfr:PATH``.

``--exploit SPEC`` instead asks the agent (any agents.spec spec) for its move at every
information set and writes the same fields for it: its exact NashConv (every seat playing it)
and each seat's best-response value against it. An agent is asked through ``probs_at(key)``
(cfr), ``action_probs(observation)`` when it has one, uniform over the legal moves for random,
and otherwise its ``act`` once, which must then be deterministic (checked under two seeds).
NashConv is in the env's rewards (seat 0's minus the mean), summed over a game.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

import numpy as np

import envs
from agents.base import move_probabilities
from agents.spec import make_from_spec, spec_label
from experiments.cli import claim_out, command_line, run_metadata
from train import cfr

PRESET = {"rules": "small"}


def games_with_a_small_preset() -> list[str]:
    """The games whose engine accepts ``rules="small"`` (asked of each engine, not listed here)."""
    out = []
    for g in envs.GAMES:
        try:
            envs.engine_class(g)(**PRESET)  # the preset's own player count
        except ValueError:
            continue
        out.append(g)
    return out


def _deal_bar():
    """A progress bar over the first deals as the tree is enumerated (`train.cfr.build_tree`'s `progress`)."""
    from tqdm import tqdm

    bar = None

    def tick(total=None):
        nonlocal bar
        if total is not None:
            bar = tqdm(total=total, desc="  enumerating", unit="deal", leave=False)
            return
        bar.update()
        if bar.n == bar.total:
            bar.close()

    return tick


def agent_policy(agent, tree: cfr.Tree) -> np.ndarray:
    """The agent's probability of each move at each information set of `tree`, [I, A]."""
    policy = np.zeros((tree.num_infos, tree.num_actions))
    for i, (key, (obs, mask)) in enumerate(zip(tree.info_keys, tree.info_obs)):
        policy[i] = move_probabilities(agent, key, obs, mask)
    return policy


def tree_facts(tree: cfr.Tree) -> dict:
    return {"information_sets": [int(np.sum(tree.info_player == s)) for s in range(tree.num_players)],
            "decisions": int(np.sum(tree.node_player != cfr.CHANCE)), "chance_nodes": int(np.sum(tree.node_player == cfr.CHANCE)),
            "moves": int(np.sum(tree.node_player[tree.edge_parent] != cfr.CHANCE)),
            "deals": int(np.sum(tree.node_depth == 0))}


def exploitability(tree: cfr.Tree, policy: np.ndarray) -> dict:
    nc, br = cfr.nash_conv(tree, policy)
    rng = cfr.score_range(tree)
    values = [float(v) for v in cfr.game_values(tree, policy)]
    return {"nash_conv": nc, "nash_conv_of_range": nc / rng, "best_response_value": br,
            "values": values, "value_seat0": values[0], "score_range": rng}


def save_policy(path, game: str, tree: cfr.Tree, policy: np.ndarray) -> None:
    keys = np.frombuffer(b"".join(tree.info_keys), np.uint8).reshape(tree.num_infos, -1)
    np.savez_compressed(path, game=game, num_players=tree.num_players, keys=keys, probs=policy.astype(np.float32),
                        option_names=np.array(list(PRESET)), option_values=np.array(list(PRESET.values())))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.solve", description=__doc__.split("\n")[0])
    presets = games_with_a_small_preset()
    parser.add_argument("--game", required=True, metavar="{" + ",".join(presets) + "}",
                        help="a game with a small preset (rules='small'); others are refused")
    parser.add_argument("--minutes", type=float, default=10.0, help="time limit for CFR+ (default 10)")
    parser.add_argument("--target", type=float, default=1e-3, help="stop at this NashConv / score range (default 1e-3)")
    parser.add_argument("--check-every", type=int, default=50, help="iterations between NashConv checks (default 50)")
    from agents.spec import SPEC_LIST

    parser.add_argument("--exploit", metavar="SPEC",
                        help=f"measure this agent's exact exploitability instead of solving: {SPEC_LIST} (search agents, "
                             "which need their seat's information state, are refused)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="run folder (new or empty; default results/solve_<game>_<time>)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if not args.minutes > 0 or args.check_every < 1:
        parser.error("--minutes must be above 0 and --check-every at least 1")
    log = (lambda *a: None) if args.quiet else print
    if args.game not in games_with_a_small_preset():
        parser.error(f"{args.game} has no small preset (rules='small'); games with one: {', '.join(games_with_a_small_preset())}")
    try:
        engine = envs.engine_class(args.game)(**PRESET)  # the preset fixes the player count
        tree_start = time.perf_counter()
        log(f"{args.game} small preset: enumerating the tree from the engine ...")
        agent = None if args.exploit is None else make_from_spec(args.exploit, args.game, engine.num_players, seed=args.seed)
        if callable(getattr(agent, "inform", None)) and not callable(getattr(agent, "probs_at", None)):
            # The tree holds each information set's observation, not a game to take an information state from.
            raise ValueError(f"agent {args.exploit!r} needs its seat's information state before every move (an inform "
                             f"hook), which the exact best response cannot give; measure it with "
                             f"python -m experiments.tournament instead")
    except (ValueError, FileNotFoundError) as e:
        parser.error(str(e))
    # The agent's name in a folder name: its label, with anything but letters, digits, ".", "-" and "_" as "_"
    # (a cfr:PATH spec holds slashes).
    agent_name = None if args.exploit is None else re.sub(r"[^A-Za-z0-9._-]+", "_", spec_label(args.exploit)).strip("_")
    prefix = f"solve_{args.game}_" if args.exploit is None else f"exploit_{args.game}_{agent_name}_"
    try:
        with claim_out(args.out, parser, prefix=prefix, link_latest=False) as folder:
            tree = cfr.build_tree(engine, progress=None if args.quiet else _deal_bar())
            facts = {**tree_facts(tree), "enumerate_seconds": round(time.perf_counter() - tree_start, 2)}
            log(f"  {facts['information_sets']} information sets per seat, {facts['decisions']} decisions")
            meta = run_metadata(command_line("python -m experiments.solve", argv), args.seed, game=args.game,
                                rule_options=PRESET)
            if agent is None:
                solver = cfr.CFRPlus(tree)
                target = args.target * cfr.score_range(tree)
                curve = solver.run(args.minutes * 60, target=target, check_every=args.check_every, log=log)
                policy = solver.average_policy()
                result = {**exploitability(tree, policy), "iterations": solver.iterations,
                          "seconds": round(curve[-1][1], 2), "target_of_range": args.target,
                          "curve": [{"iterations": i, "seconds": round(s, 2), "nash_conv": nc} for i, s, nc in curve]}
                save_policy(f"{folder.path}/policy.npz", args.game, tree, policy)
            else:
                result = {"agent": args.exploit, **exploitability(tree, agent_policy(agent, tree))}
            result = {**meta, "tree": facts, **result}
            with open(f"{folder.path}/result.json", "w") as f:
                json.dump(result, f, indent=1)
            final = folder.commit()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM when run as a command: the claimed folder is given back
        print("\npython -m experiments.solve: interrupted; nothing was written", file=sys.stderr)
        return 130
    seats = ", ".join(f"{v:.4g} (seat {s})" for s, v in enumerate(result["best_response_value"]))
    log(f"NashConv {result['nash_conv']:.3g} ({result['nash_conv_of_range']:.2g} of the score range); "
        f"best-response values {seats}; written to {final}")
    return 0


if __name__ == "__main__":
    from train.cli import as_command

    raise SystemExit(as_command(main))
