"""Exercises that check themselves (docs/exercises/README.md).

    python -m experiments.exercises list
    python -m experiments.exercises check 1                     # your copy: docs/exercises/stubs/ex1_*.py
    python -m experiments.exercises check 2 --file my_gae.py    # or any file of yours
    python -m experiments.exercises check 3 --solution          # the reference solution

A check prints what it tried and "passed", or the first thing that went wrong with a hint,
and exits with status 1.

The verdict is the checker's: your file is imported and called in a fresh child process
(`experiments.exercise_child`; its output goes to stderr), and only the answers it returns
come back to be checked here, as plain numbers and arrays. A file that exits (``sys.exit``,
``os._exit``) before the check ends fails, and so does one that takes longer than
``--time-limit`` seconds in all (default `TIME_LIMIT_S`). The child may not import this
checker (its reference answers), open the shipped solutions, start a process, or (in
exercise 3) use cardzoo's own players; exercise 3 also refuses an agent that plays the
shipped heuristic's moves.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from experiments.exercise_child import _first  # the first line of an error, as the child writes it

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "exercises"
NAMES = {1: "ex1_masked_sampling", 2: "ex2_gae", 3: "ex3_neu_agent", 4: "ex4_regret_matching"}
TITLES = {1: "masked sampling", 2: "GAE along one seat's own decisions", 3: "a Neu agent that beats random",
          4: "regret matching, the step of CFR"}


TIME_LIMIT_S = 300.0  # for all the calls into your file during one check


class Failed(Exception):
    """A check failed; the message says what happened and gives a hint."""


# --- your file, in a child process -----------------------------------------------------------------
# The child is `experiments.exercise_child`, a fresh interpreter (never a fork of this one), in a
# session of its own; its answers come back as plain bytes, decoded here without unpickling.


class Student:
    """The file under check, in a child process; attributes are its functions and classes, called over a pipe."""

    def __init__(self, path: Path, time_limit: float, number: int = 0) -> None:
        from experiments.exercise_child import ROOT

        self.path, self.time_limit = path, time_limit
        self.deadline = time.monotonic() + time_limit
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
        self.process = subprocess.Popen([sys.executable, "-m", "experiments.exercise_child", str(Path(path).resolve()),
                                         str(number)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                        start_new_session=True)
        kind, body = self._answer("importing it")
        if kind == b"M":
            name, _, text = body.decode(errors="replace").partition("\n")
            if "out of reach" in text or "checker" in text or "shipped solution" in text:
                raise Failed(f"{path} tries to use the checker's reference, a shipped solution or player: {text}.\n"
                             "Hint: write the answer yourself; the check compares it with its own.")
            raise Failed(f"importing {path} raised {name}: {text}.\nHint: the file must import cleanly (no exit, "
                         "no input, no errors at import); run `python {path}` to see it.".replace("{path}", str(path)))
        if kind != b"N":
            self.close()
            raise Failed(f"importing {path} sent an answer of kind {kind!r}.\nHint: a solution returns its answers.")

    def _read(self, count: int, what: str) -> bytes:
        fd, got = self.process.stdout.fileno(), b""
        while len(got) < count:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise Failed(f"{what} took more than {self.time_limit:g} s in all.\nHint: look for a loop that never "
                             "ends, or an input() waiting; the whole check normally takes seconds.")
            chunk = os.read(fd, min(count - len(got), 1 << 20))
            if not chunk:
                code = self.process.wait(5)
                self.close()
                raise Failed(f"your file ended its process (exit code {code}) while {what}, before the check was done.\n"
                             "Hint: a solution returns its answers; it never calls sys.exit or os._exit.")
            got += chunk
        return got

    def _answer(self, what: str) -> tuple[bytes, bytes]:
        from experiments.exercise_child import HEADER, MAX_FRAME

        kind, size = HEADER.unpack(self._read(HEADER.size, what))
        if size > MAX_FRAME:
            self.close()
            raise Failed(f"{what} sent an answer of {size:,} bytes.\nHint: return what the exercise asks.")
        return kind, self._read(size, what)

    def request(self, what: str, kind: str, name: str, oid: int, args: tuple) -> Any:
        message = pickle.dumps((kind, name, oid, args), protocol=pickle.HIGHEST_PROTOCOL)  # to the child: trusted, this way
        try:
            self.process.stdin.write(struct.pack("<I", len(message)) + message)
            self.process.stdin.flush()
        except (OSError, ValueError):
            pass  # the child is gone: _answer says how
        got, body = self._answer(what)
        if got == b"N":
            return None
        if got == b"I" and len(body) == 8:
            return struct.unpack("<q", body)[0]
        if got == b"A":
            try:
                return np.load(io.BytesIO(body), allow_pickle=False)
            except (ValueError, OSError, EOFError) as e:
                raise Failed(f"{what} sent an array that does not read ({_first(e)}).\nHint: return numpy arrays.") from None
        text = body.decode(errors="replace")
        if got == b"T":
            raise Failed(f"{what} {text}.\nHint: return what the exercise asks (numpy arrays of the shapes it gives, "
                         "an int action).")
        kind_name, _, text = text.partition("\n")
        if got == b"D":
            raise NotImplementedError(text)
        if got == b"V":
            raise ValueError(text)
        if got == b"R":
            raise Failed(f"{what} raised {kind_name}: {text}.\nHint: run the same call on your own to see the error; "
                         "the check passes arrays and a numpy Generator as the exercise says.")
        self.close()
        raise Failed(f"{what} sent an answer of kind {got!r}.\nHint: a solution returns its answers.")

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("path", "time_limit", "deadline", "process"):
            raise AttributeError(name)
        if name[:1].isupper():
            return _RemoteClass(self, name)
        return lambda *args: self.request(f"{name}()", "call", name, -1, args)

    def close(self) -> None:
        from experiments.tournament.isolate import kill_tree

        if self.process.poll() is None:
            kill_tree(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # its session's group: whatever it started there
        except OSError:
            pass
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass


class _RemoteClass:
    def __init__(self, student: Student, name: str) -> None:
        self.student, self.__name__ = student, name

    def __call__(self):
        return _RemoteObject(self.student, self.__name__, self.student.request(f"{self.__name__}()", "new", self.__name__, -1, ()))


class _RemoteObject:
    def __init__(self, student: Student, cls: str, oid: int) -> None:
        self.student, self.cls, self.oid = student, cls, oid

    def act(self, observation):
        return self.student.request(f"{self.cls}.act()", "method", "act", self.oid, (observation,))

    def reset(self):
        return self.student.request(f"{self.cls}.reset()", "method", "reset", self.oid, ())


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

OWN_WORK_AGREEMENT = 0.95  # the reference solution agrees with the heuristic at about 28% of decisions


def agreement_with_heuristic(agent, games: int = 12) -> tuple[int, int]:
    """At how many of the decisions with a choice in `games` games (random moves, seeds 1000 on)
    `agent` plays the shipped heuristic's move: a copy of the heuristic agrees at all of them."""
    import envs
    from agents import make_agent

    heuristic, mover = make_agent("heuristic", "neu", 4, seed=0), make_agent("random", "neu", 4, seed=1)
    env, same, decisions = envs.make("neu", num_players=4), 0, 0
    for g in range(games):
        env.reset(seed=1000 + g)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if np.count_nonzero(obs["action_mask"]) > 1:
                same += int(call("NeuAgent.act()", agent.act, obs) == heuristic.act(obs))
                decisions += 1
            env.step(int(mover.act(obs)))
    return same, decisions


def check_3(module: ModuleType, deals: int = 200) -> None:
    from experiments.tournament import AgentSpec, run_tournament

    agent = module.NeuAgent()
    import envs
    env = envs.make("neu", num_players=4)
    env.reset(seed=0)
    call("NeuAgent.act()", agent.act, env.last()[0])
    same, decisions = agreement_with_heuristic(agent)
    if same >= OWN_WORK_AGREEMENT * decisions:
        raise Failed(f"your agent plays the shipped heuristic's move at {same} of {decisions} decisions with a choice.\n"
                     "Hint: the exercise is to write your own rules; cardzoo's heuristic is what they are measured against.")
    result = run_tournament("neu", [AgentSpec("yours", module.NeuAgent), "random"], num_players=4, deals=deals,
                            seed=31, workers=1, progress=False)
    d = result["pairwise"]["yours vs random"]["score_diff"]
    line = f"yours − random: {d['mean']:+.3f} chips a game, 95% CI [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] over {deals} duplicate deals"
    if d["ci_low"] <= 0:
        raise Failed(line + "\nThe CI reaches 0 or below, so the deals do not show that your agent beats random.\n"
                     "Hint: numbers close to the limit of 101 leave you stuck later; playing small numbers and keeping "
                     "pass, turn, double, -10 and 101 for when nothing else is legal is enough.")
    print("  " + line)


# --- 4. regret matching -----------------------------------------------------------------------------

def check_4(module: ModuleType, iterations: int = 60) -> None:
    from envs.neu import Neu
    from train import cfr

    match = module.regret_matching
    cases = [  # (regrets, legal, expected, hint)
        ([[1.0, -2.0, 3.0, 0.0]], [[1, 1, 1, 0]], [[0.25, 0.0, 0.75, 0.0]],
         "each legal action's probability is its positive regret over the sum of the positive regrets; "
         "negative regrets count as 0."),
        ([[-1.0, -2.0, 0.0]], [[1, 0, 1]], [[0.5, 0.0, 0.5]],
         "with no positive regret, play uniformly over the legal actions (not over every action)."),
        ([[5.0, 1.0]], [[0, 1]], [[0.0, 1.0]], "an illegal action gets probability 0 whatever its regret."),
    ]
    for regrets, legal, want, hint in cases:
        got = np.asarray(call("regret_matching()", match, np.array(regrets), np.array(legal, bool)), np.float64)
        if got.shape != np.shape(want) or not np.allclose(got, want):
            raise Failed(f"regrets {regrets}, legal {legal}: got {np.round(got, 3).tolist()}, expected {want}.\nHint: {hint}")
    rng = np.random.default_rng(0)
    for case in range(200):
        rows, cols = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        legal = rng.random((rows, cols)) < 0.7
        legal[np.arange(rows), rng.integers(0, cols, rows)] = True
        regrets = rng.normal(size=(rows, cols)) * (rng.random((rows, cols)) < 0.8)
        got = np.asarray(match(regrets, legal), np.float64)
        if got.shape != regrets.shape or not np.allclose(got, cfr.regret_matching(regrets, legal)):
            raise Failed(f"random case {case} ({rows} information sets, {cols} actions) differs from regret matching.\n"
                         "Hint: work row by row: clip at 0, zero the illegal actions, divide by the row's sum, "
                         "or use the uniform policy over legal actions when that sum is 0.")
    tree = cfr.build_tree(Neu(2, rules="small"))
    solver = cfr.CFRPlus(tree, match=match)
    for _ in range(iterations):
        solver.iterate()
    nash_conv, _ = cfr.nash_conv(tree, solver.average_policy())
    if not nash_conv <= 1e-3:
        raise Failed(f"CFR+ with your regret matching reached NashConv {nash_conv:.3g} after {iterations} iterations "
                     "on the small Neu preset, expected at most 0.001.\nHint: return probabilities that sum to 1 per row.")
    print(f"  3 hand-worked cases, 200 random ones, and CFR+ with it on the small Neu preset: NashConv "
          f"{nash_conv:.2g} after {iterations} iterations")


CHECKS = {1: check_1, 2: check_2, 3: check_3, 4: check_4}


def exercise_file(number: int, solution: bool) -> Path:
    return FOLDER / ("solutions" if solution else "stubs") / f"{NAMES[number]}.py"


def check(number: int, path: Path, time_limit: float = TIME_LIMIT_S) -> bool:
    """Runs one check, the file in a child process (see the module docstring); prints the outcome and
    returns whether it passed."""
    print(f"exercise {number} ({TITLES[number]}): checking {path}")
    student = None
    try:
        student = Student(Path(path), time_limit, number)
        CHECKS[number](student)
        student.request("the end of the check", "ping", "", -1, ())  # still there: it did not exit
    except Failed as e:
        print(f"FAILED: {e}")
        return False
    except Exception as e:  # a check's own call on an answer of the wrong kind (a TypeError, say)
        print(f"FAILED: checking your answer raised {type(e).__name__}: {_first(e)}.\nHint: return what the "
              "exercise asks (numpy arrays of the shapes it gives, an int action).")
        return False
    finally:
        if student is not None:
            student.close()
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
    c.add_argument("--time-limit", type=float, default=TIME_LIMIT_S, help="seconds for all the calls into your file")
    args = p.parse_args(argv)
    if args.command == "list":
        for n in sorted(CHECKS):
            print(f"{n}. {TITLES[n]}: {exercise_file(n, False)}")
        return 0
    path = args.file or exercise_file(args.number, args.solution)
    if not path.is_file():
        p.error(f"--file: no file {path}")
    if not (0 < args.time_limit < float("inf")):
        p.error(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    return 0 if check(args.number, path, args.time_limit) else 1


if __name__ == "__main__":
    sys.exit(main())
