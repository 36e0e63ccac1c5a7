"""Exercises that check themselves (docs/exercises/README.md).

    python -m experiments.exercises list
    python -m experiments.exercises check 1                     # your copy: docs/exercises/stubs/ex1_*.py
    python -m experiments.exercises check 2 --file my_gae.py    # or any file of yours
    python -m experiments.exercises check 3 --solution          # the reference solution

A check prints what it tried and "passed", or the first thing that went wrong with a hint,
and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "exercises"
NAMES = {1: "ex1_masked_sampling", 2: "ex2_gae", 3: "ex3_neu_agent"}
TITLES = {1: "masked sampling", 2: "GAE along one seat's own decisions", 3: "a Neu agent that beats random"}


class Failed(Exception):
    """A check failed; the message says what happened and gives a hint."""


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"exercise_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise Failed(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(what: str, fn, *args):
    try:
        return fn(*args)
    except NotImplementedError as e:
        raise Failed(f"{what} is not written yet ({e}).\nHint: replace the `raise NotImplementedError` with your code.") from None


# --- 1. masked sampling ---------------------------------------------------------------------------

def check_1(module: ModuleType) -> None:
    sample = module.sample
    rng = np.random.default_rng(0)
    logits = np.array([[0.0, 1.0, 2.0, 3.0]] * 40_000)
    mask = np.array([[1, 0, 1, 1]] * 40_000, dtype=np.int8)
    actions = np.asarray(call("sample()", sample, logits, mask, rng))
    if actions.shape != (40_000,):
        raise Failed(f"sample() returned shape {actions.shape}, expected one action per row, (40000,).\n"
                     "Hint: draw one action for every row of logits.")
    if np.any(actions == 1):
        raise Failed("sample() drew action 1, which the mask rules out.\n"
                     "Hint: give illegal actions a logit of -inf (or probability 0) before sampling.")
    legal = np.array([0.0, 2.0, 3.0])
    expected = np.exp(legal) / np.exp(legal).sum()
    seen = np.array([np.mean(actions == a) for a in (0, 2, 3)])
    # 40,000 draws: each frequency is within 0.01 of its probability, far beyond 5 standard errors.
    if np.abs(seen - expected).max() > 0.01:
        raise Failed(f"legal actions 0, 2, 3 were drawn with frequencies {seen.round(3)}, expected "
                     f"{expected.round(3)} (softmax of the legal logits).\n"
                     "Hint: the probabilities of the legal actions are softmax(logits) renormalised over the "
                     "legal ones; sample from those, e.g. with the Gumbel-max trick or rng.choice(p=...).")
    one = np.asarray(call("sample()", sample, np.zeros((5, 6)), np.eye(6, dtype=np.int8)[[2, 5, 0, 1, 3]], rng))
    if one.tolist() != [2, 5, 0, 1, 3]:
        raise Failed(f"with exactly one legal action per row, sample() returned {one.tolist()}, expected [2, 5, 0, 1, 3].\n"
                     "Hint: each row has its own mask.")
    big = np.asarray(call("sample()", sample, np.array([[1000.0, -1000.0, 0.0]]), np.array([[0, 1, 0]]), rng))
    if big.tolist() != [1]:
        raise Failed("with logits [1000, -1000, 0] and only action 1 legal, sample() did not return 1.\n"
                     "Hint: a large logit on an illegal action must not matter (and must not overflow exp()).")
    try:
        sample(np.zeros((2, 3)), np.array([[1, 0, 0], [0, 0, 0]]), rng)
    except ValueError:
        pass
    else:
        raise Failed("a row whose mask is all zeros did not raise ValueError.\nHint: check that every row has a legal action.")
    print("  never illegal, frequencies match the masked softmax, one-legal rows, large logits, empty rows")


# --- 2. GAE along one seat's own decisions --------------------------------------------------------

def reference_advantages(seats, rewards, values, gamma, lam) -> np.ndarray:
    """The definition, term by term: advantage_k = sum over j of (gamma*lam)^j * delta_{k+j}."""
    out = np.zeros(len(seats))
    for p in range(rewards.shape[1]):
        moves = [t for t in range(len(seats)) if seats[t] == p]
        bounds = moves[1:] + [len(seats)]
        deltas = []
        for k, (t, end) in enumerate(zip(moves, bounds)):
            reward = rewards[t:end, p].sum()
            next_value = values[moves[k + 1]] if k + 1 < len(moves) else 0.0
            deltas.append(reward + gamma * next_value - values[t])
        for k, t in enumerate(moves):
            out[t] = sum((gamma * lam) ** j * d for j, d in enumerate(deltas[k:]))
    return out


def check_2(module: ModuleType) -> None:
    gae = module.gae
    # A small game by hand: seats 0, 1, 0, 1; seat 0 gets 1 from move 1 (seat 1's move) and 2 at the end.
    seats = np.array([0, 1, 0, 1])
    rewards = np.array([[0.0, 0.0], [1.0, -1.0], [0.0, 0.0], [2.0, -2.0]])
    values = np.array([0.5, -0.5, 1.0, -1.0])
    got = np.asarray(call("gae()", gae, seats, rewards, values, 1.0, 1.0), dtype=np.float64)
    want = reference_advantages(seats, rewards, values, 1.0, 1.0)
    if got.shape != want.shape or not np.allclose(got, want):
        raise Failed(f"the game of four moves (seats {seats.tolist()}, gamma = lam = 1) gave advantages {np.round(got, 3).tolist()}, "
                     f"expected {want.tolist()}.\n"
                     "Hint: seat 0's first decision earns the reward of move 1 too (seat 1's move), since its next "
                     "decision is move 2; its value after its last decision is 0.")
    rng = np.random.default_rng(0)
    for case in range(200):
        n, length = int(rng.integers(2, 6)), int(rng.integers(1, 40))
        seats = rng.integers(0, n, size=length)
        rewards = rng.normal(size=(length, n)) * (rng.random((length, 1)) < 0.3)
        values = rng.normal(size=length)
        gamma, lam = float(rng.uniform(0.8, 1.0)), float(rng.uniform(0.5, 1.0))
        got = np.asarray(gae(seats, rewards, values, gamma, lam), dtype=np.float64)
        want = reference_advantages(seats, rewards, values, gamma, lam)
        if got.shape != want.shape or not np.allclose(got, want, atol=1e-8):
            raise Failed(f"random game {case} ({n} seats, {length} moves, gamma={gamma:.3f}, lam={lam:.3f}): "
                         f"advantages differ, first at move {int(np.argmax(~np.isclose(got, want))) if got.shape == want.shape else 0}.\n"
                         "Hint: walk the moves backwards, keeping per seat the rewards collected since its next "
                         "decision, the value there and the advantage there.")
    print("  a hand-worked game and 200 random games match the definition")


# --- 3. a Neu agent that beats random -------------------------------------------------------------

def check_3(module: ModuleType, deals: int = 200) -> None:
    from experiments.tournament import AgentSpec, run_tournament

    agent = module.NeuAgent()
    import envs
    env = envs.make("neu", num_players=4)
    env.reset(seed=0)
    call("NeuAgent.act()", agent.act, env.last()[0])
    result = run_tournament("neu", [AgentSpec("yours", module.NeuAgent), "random"], num_players=4, deals=deals,
                            seed=31, workers=1, progress=False)
    d = result["pairwise"]["yours vs random"]["score_diff"]
    line = f"yours − random: {d['mean']:+.3f} chips a game, 95% CI [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] over {deals} duplicate deals"
    if d["ci_low"] <= 0:
        raise Failed(line + "\nThe CI reaches 0 or below, so the deals do not show that your agent beats random.\n"
                     "Hint: numbers close to the limit of 101 leave you stuck later; playing small numbers and keeping "
                     "pass, turn, double, -10 and 101 for when nothing else is legal is enough.")
    print("  " + line)


CHECKS = {1: check_1, 2: check_2, 3: check_3}


def exercise_file(number: int, solution: bool) -> Path:
    return FOLDER / ("solutions" if solution else "stubs") / f"{NAMES[number]}.py"


def check(number: int, path: Path) -> bool:
    """Runs one check; prints the outcome and returns whether it passed."""
    print(f"exercise {number} ({TITLES[number]}): checking {path}")
    try:
        CHECKS[number](load(path))
    except Failed as e:
        print(f"FAILED: {e}")
        return False
    print("passed")
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.exercises", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the exercises and their files")
    c = sub.add_parser("check", help="check one exercise")
    c.add_argument("number", type=int, choices=sorted(CHECKS))
    which = c.add_mutually_exclusive_group()
    which.add_argument("--file", type=Path, help="your file (default: the stub in docs/exercises/stubs/)")
    which.add_argument("--solution", action="store_true", help="check the reference solution instead")
    args = p.parse_args(argv)
    if args.command == "list":
        for n in sorted(CHECKS):
            print(f"{n}. {TITLES[n]}: {exercise_file(n, False)}")
        return 0
    path = args.file or exercise_file(args.number, args.solution)
    if not path.is_file():
        p.error(f"--file: no file {path}")
    return 0 if check(args.number, path) else 1


if __name__ == "__main__":
    sys.exit(main())
