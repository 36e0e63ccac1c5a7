"""API fuzzing: junk into every entry point gets a clear, documented outcome.

Documented outcomes (envs/adapter.py, each shim's "Bad input" section,
PettingZoo's conventions):

* ``step``: an action of the wrong type (None for a live agent, floats, NaN,
  strings, bytes, lists, bools) raises TypeError; an integer outside the
  action space raises ValueError; a masked-out action raises ValueError in
  ``raw_env`` and ends an ``env()`` game with −1 for the offender. Nothing
  changes on a raised error, and the error comes from cardzoo's own checks,
  never from deep inside numpy.
* ``reset(options=...)``: unknown keys warn (PettingZoo's api_test passes
  made-up keys); a bad ``deal`` raises ValueError; a deal that is accepted
  gives a consistent game. Bad seeds raise ValueError.
* constructor: bad rule options, unknown options, bad ``num_players`` and
  ``render_mode`` raise ValueError; accepted options give a consistent game.
* calls before reset (step, observe, state, last, render) raise RuntimeError
  naming reset();
  steps after the game ended follow OrderEnforcingWrapper (a warning, nothing
  happens) or raise a clear RuntimeError/ValueError.
* ``PPOAgent.load`` with a missing, empty, truncated or garbage file raises
  an error naming the file; command-line tools given bad arguments exit with
  status 2 and one clear line, no traceback.

Every case runs under a time limit, so a hang fails instead of stalling CI.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import math
import os
import random
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import envs
from envs import testing
from tests.conftest import GAMES, scaled

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail instead of hanging (SIGALRM; the tests run in the main thread)."""

    def expired(signum, frame):
        raise TimeoutError(f"no answer within {seconds}s: a hang")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def raised_by_cardzoo(excinfo) -> bool:
    """The error was raised by cardzoo's own code (envs/, agents/), not deep inside a library."""
    tb = excinfo.tb
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and str(ROOT) in last and "/tests/" not in last


def _started(game: str, n: int | None = None, seed: int = 0, steps: int = 3, wrapped: bool = True):
    env = (envs.make if wrapped else envs.make_raw)(game, num_players=n)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    for _ in range(steps):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"]))))
    return env


def _view(env):
    return testing.env_view(env) + (env.state().tobytes(),)


JUNK_ACTIONS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**80), 2**80),
    st.integers(-3, 40),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.lists(st.integers(0, 3), max_size=2),
    st.sampled_from(
        [
            np.float64("nan"),
            np.float32(1.0),
            np.int64(2**62),
            np.uint64(2**64 - 1),
            np.int8(-1),
            np.array([0]),
            np.array(1.0),
            np.array(0),
            1 + 2j,
            object(),
            "0",
            b"\x00",
            math.inf,
        ]
    ),
)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("wrapped", [True, False], ids=["env", "raw_env"])
@settings(max_examples=60)
@given(junk=JUNK_ACTIONS, steps=st.integers(0, 30))
@example(junk=None, steps=0)
@example(junk=float("nan"), steps=0)
@example(junk=2**64, steps=0)
@example(junk=-1, steps=0)
@example(junk="play 1", steps=0)
def test_step_with_junk(game, wrapped, junk, steps):
    env = _started(game, steps=steps, wrapped=wrapped)
    if not env.agents or env.terminations[env.agent_selection]:
        return
    n = env.unwrapped.game.num_actions
    mask = env.observe(env.agent_selection)["action_mask"]
    is_int = isinstance(junk, (int, np.integer)) and not isinstance(junk, (bool, np.bool_))
    is_int = is_int or (isinstance(junk, np.ndarray) and junk.shape == () and np.issubdtype(junk.dtype, np.integer))
    before = _view(env)
    with time_limit(10), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if is_int and 0 <= int(junk) < n and mask[int(junk)]:
            env.step(junk)  # a legal action, however it is spelled
            return
        if is_int and 0 <= int(junk) < n and wrapped:
            offender = env.agent_selection
            env.step(junk)  # masked out: PettingZoo classic's convention
            assert all(env.terminations.values()) and env.rewards[offender] == -1.0
            return
        expected = (TypeError,) if not is_int else (ValueError,)
        with pytest.raises((TypeError, ValueError)) as excinfo:
            env.step(junk)
    assert excinfo.type in expected or (is_int and excinfo.type is ValueError), f"{junk!r}: {excinfo.type.__name__}"
    assert raised_by_cardzoo(excinfo), f"{junk!r} raised {excinfo.type.__name__} from deep inside a library: {excinfo.value}"
    assert str(excinfo.value), "an error without a message"
    assert _view(env) == before, f"a refused step({junk!r}) changed the env"


@pytest.mark.parametrize("game", GAMES)
def test_calls_before_reset(game):
    env = envs.make(game)
    with time_limit(10):
        for call in (lambda: env.step(0), lambda: env.observe("player_0"), env.state, env.last):
            with pytest.raises(RuntimeError, match="reset"):
                call()
        ansi = envs.make(game, render_mode="ansi")
        with pytest.raises(RuntimeError, match="reset"):
            ansi.render()


@pytest.mark.parametrize("game", GAMES)
def test_dead_agent_step_with_an_action_is_refused(game):
    """A terminated agent's only valid action is None (PettingZoo); an env() illegal move terminates all."""
    env = _started(game)
    illegal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)
    if illegal.size == 0:
        pytest.skip("every action legal here")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(int(illegal[0]))
    with pytest.raises(ValueError, match="None"):
        env.step(0)
    while env.agents:
        env.step(None)


def _finished(game: str):
    env = _started(game, steps=0)
    rnd = random.Random(0)
    for _ in env.agent_iter(max_iter=100_000):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"]))))
    assert not env.agents
    return env


@pytest.mark.parametrize("game", GAMES)
def test_step_after_the_game_ended(game):
    """OrderEnforcingWrapper's convention: a warning and nothing happens; or a clear RuntimeError/ValueError."""
    env = _finished(game)
    for action in (None, 0):
        try:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                env.step(action)
        except (RuntimeError, ValueError) as e:
            assert "over" in str(e) or "reset" in str(e) or "terminated" in str(e), str(e)
        assert not env.agents


# -- reset(options=...) ------------------------------------------------------------


_KEY = st.text(max_size=8).filter(lambda k: k != "deal")


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=20)
@given(options=st.dictionaries(_KEY, st.integers() | st.none() | st.text(max_size=3), min_size=1, max_size=3))
def test_unknown_reset_options_warn(game, options):
    env = envs.make(game)
    with time_limit(10), pytest.warns(UserWarning, match="unknown reset option"):
        env.reset(seed=1, options=options)
    assert env.agents


@pytest.mark.parametrize("game", GAMES)
def test_reset_option_names_with_percent_warn(game):
    """gymnasium's warn() %-formats its message; a '%' in a key used to crash reset (fixed in 1723a0b)."""
    env = envs.make(game)
    with pytest.warns(UserWarning):
        env.reset(seed=1, options={"%s": 1, "100%": 2})


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("options", [[], "deal", 5, ("deal",)], ids=repr)
def test_reset_options_that_are_not_a_dict(game, options):
    with pytest.raises(ValueError, match="dict"):
        envs.make(game).reset(seed=0, options=options)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [1.5, "1", b"1", [1], math.nan, True, -1], ids=repr)
def test_bad_seeds(game, seed):
    with pytest.raises(ValueError):
        envs.make(game).reset(seed=seed)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 120) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
DEAL_KEYS = st.sampled_from(["hands", "draw_pile", "set_aside", "supply", "deal", ""])


def _check_accepted_game(env, steps: int = 60):
    """A game that was accepted must be consistent: run the invariant checks for a few steps."""
    checker = testing.GameChecker(env, np.random.default_rng(0), deep_every=5, illegal_samples=1)
    rnd = random.Random(0)
    for _ in env.agent_iter(max_iter=steps):
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"])))
        checker.before(action)
        env.step(action)
        checker.after(action)


def _deal_or_error(game, n, deal):
    env = envs.make(game, num_players=n)
    with time_limit(20), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            env.reset(seed=0, options={"deal": deal})
        except ValueError as e:
            assert str(e) and game in str(e) or "deal" in str(e), f"unclear message: {e}"
            return None
        _check_accepted_game(env)
    return env


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=40)
@given(deal=JSONISH | st.dictionaries(DEAL_KEYS, JSONISH, max_size=3))
def test_junk_deals(game, deal):
    _deal_or_error(game, None, deal)


def _hand_names(engine, seat):
    return list(engine.hand_names(seat))


@pytest.mark.parametrize("game", [g for g in GAMES if hasattr(envs.module(g).raw_env.engine_cls, "hand_names")])
@settings(max_examples=scaled(30))
@given(data=st.data())
def test_nearly_valid_deals(game, data):
    """Real hands (from another deal), then one mutation: either a clear ValueError or a consistent game."""
    engine_cls = envs.module(game).raw_env.engine_cls
    n = data.draw(st.integers(engine_cls.min_players, engine_cls.max_players), label="players")
    ref = envs.make_raw(game, num_players=n)
    ref.reset(seed=data.draw(st.integers(0, 1000), label="seed"))
    hands = [_hand_names(ref.unwrapped.game, s) for s in range(n)]
    # The Ma / dealer-specific hand sizes are whatever the engine dealt.
    mutation = data.draw(st.sampled_from(["none", "drop", "duplicate", "swap", "junk", "extra_seat", "missing_seat", "int"]))
    flat = [c for h in hands for c in h]
    seat = data.draw(st.integers(0, n - 1))
    if mutation == "drop" and hands[seat]:
        hands[seat].pop()
    elif mutation == "duplicate" and hands[seat]:
        hands[seat][0] = flat[-1]
    elif mutation == "swap":
        other = (seat + 1) % n
        hands[seat], hands[other] = hands[other], hands[seat]
    elif mutation == "junk" and hands[seat]:
        hands[seat][0] = data.draw(st.sampled_from(["", "nope", None, 3.5, math.nan, 10**20, -999, [1], "wild wild"]))
    elif mutation == "extra_seat":
        hands.append(list(hands[0]))
    elif mutation == "missing_seat":
        hands.pop()
    elif mutation == "int" and hands[seat]:
        hands[seat][0] = 10**30
    env = _deal_or_error(game, n, {"hands": hands})
    if env is not None and mutation in ("none", "swap"):
        # The checked steps changed the hands, so compare against a fresh reset.
        fresh = envs.make_raw(game, num_players=n)
        fresh.reset(seed=0, options={"deal": {"hands": hands}})
        got = [sorted(map(str, _hand_names(fresh.unwrapped.game, s))) for s in range(n)]
        want = [sorted(map(str, h)) for h in hands]
        assert got == want or fresh.unwrapped.game.game_over or game == "not_your_mas_jong", "the deal was not dealt as given"


# -- constructor -------------------------------------------------------------------

# Huge values are `test_huge_rule_options`' job (one case per option).
JUNK_VALUES = st.one_of(
    st.booleans(),
    st.integers(-(10**5), 10**5),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(-3, 10**5), max_size=7),
    st.sampled_from([np.int64(3), np.float64("nan"), np.array([1, 2]), (1,) * 6, [0] * 6, [1.5] * 6, [None] * 6, 2, 1, 0]),
)


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=60)
@given(data=st.data())
def test_rule_options_fuzz(game, data):
    engine_cls = envs.module(game).raw_env.engine_cls
    names = sorted(engine_cls.OPTIONS) + ["nope", "num_players_", "Rounds"]
    options = data.draw(st.dictionaries(st.sampled_from(names), JUNK_VALUES, min_size=1, max_size=2), label="options")
    with time_limit(20):
        try:
            env = envs.make(game, **options)
        except ValueError as e:
            assert game in str(e), f"unclear message: {e}"
            unknown = set(options) - set(engine_cls.OPTIONS)
            if unknown:
                assert "unknown" in str(e)
            return
        assert not set(options) - set(engine_cls.OPTIONS), "an unknown option was accepted"
        env.reset(seed=0)
        _check_accepted_game(env, steps=200)


def _huge_cases():
    """Every numeric rule option of every game at 10**7 and 2**70 (lists: every entry)."""
    cases = []
    for game in GAMES:
        engine_cls = envs.module(game).raw_env.engine_cls
        for name, (default, _, _) in sorted(engine_cls.OPTIONS.items()):
            for big in (10**7, 2**70):
                value = [big] * len(default) if isinstance(default, (list, tuple)) else big
                bug = HUGE_OPTION_BUGS.get((game, name))
                marks = pytest.mark.xfail(strict=True, reason=bug) if bug else ()
                cases.append(pytest.param(game, name, value, marks=marks, id=f"{game}-{name}-{big}"))
    return cases


# (game, option) -> open bug report; each case xfails strictly until fixed.
HUGE_OPTION_BUGS: dict = {}  # all three found so far were fixed in 1723a0b


@pytest.mark.parametrize("game,name,value", _huge_cases())
def test_huge_rule_options(game, name, value):
    """Huge option values are refused with ValueError, or give a game whose observations fit their Box."""
    with time_limit(30):
        try:
            env = envs.make(game, **{name: value})
        except ValueError as e:
            assert name in str(e)
            return
        env.reset(seed=0)
        _check_accepted_game(env, steps=300)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("n", [0, 1, -1, 8, 100, 2**64, 4.0, "4", None, True, math.nan, [4]], ids=repr)
def test_num_players_fuzz(game, n):
    engine_cls = envs.module(game).raw_env.engine_cls
    if n is None:
        assert len(envs.make(game, num_players=n).possible_agents) == engine_cls.default_players
        return
    if isinstance(n, int) and not isinstance(n, bool) and engine_cls.min_players <= n <= engine_cls.max_players:
        return
    with pytest.raises(ValueError, match=f"{engine_cls.min_players}"):
        envs.make(game, num_players=n)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("mode", ["rgb", "", "ANSI", 1, "human "], ids=repr)
def test_bad_render_mode(game, mode):
    with pytest.raises(ValueError, match="render_mode"):
        envs.make(game, render_mode=mode)


@pytest.mark.parametrize("game", GAMES)
def test_action_names_junk(game):
    env = _started(game)
    base = env.unwrapped
    with pytest.raises(TypeError):
        base.action_name("1")
    with pytest.raises(ValueError):
        base.action_name(10**6)
    with pytest.raises(ValueError):
        base.action_name(0, agent="player_99")
    for name in ("", "play", "nope", "pass pass", "%s", "\x00"):
        with pytest.raises(ValueError):
            base.action_from_name(name)


# -- PPO checkpoints ------------------------------------------------------------------


def _ppo():
    pytest.importorskip("torch")
    return importlib.import_module("agents.ppo")


def _bad_checkpoints(tmp_path: Path) -> dict[str, Path]:
    files = {"missing": tmp_path / "missing.pt", "directory": tmp_path}
    for name, data in {
        "empty": b"",
        "garbage": bytes(range(256)) * 4,
        "text": b"not a checkpoint\n",
        "zip_header": b"PK\x03\x04" + b"\x00" * 40,
    }.items():
        p = tmp_path / f"{name}.pt"
        p.write_bytes(data)
        files[name] = p
    real = sorted((ROOT / "agents" / "checkpoints").glob("*.pt"))
    if real:
        data = real[0].read_bytes()
        for frac in (0.1, 0.5, 0.99):
            p = tmp_path / f"truncated_{frac}.pt"
            p.write_bytes(data[: int(len(data) * frac)])
            files[f"truncated_{frac}"] = p
    import torch

    for name, obj in {"wrong_dict": {"hello": 1}, "tensor": torch.zeros(3), "list": [1, 2]}.items():
        p = tmp_path / f"{name}.pt"
        torch.save(obj, p)
        files[name] = p
    return files


CHECKPOINT_CASES = ["missing", "directory", "empty", "garbage", "text", "zip_header", "wrong_dict", "tensor", "list", "truncated_0.1", "truncated_0.5", "truncated_0.99"]


@pytest.mark.parametrize("case", CHECKPOINT_CASES)
def test_ppo_load_bad_checkpoint(tmp_path, case):
    """A clear ValueError/OSError that names the file, within 30 s."""
    ppo = _ppo()
    files = _bad_checkpoints(tmp_path)
    assert case in files, f"no file for case {case}"
    path = files[case]
    with time_limit(30), pytest.raises(Exception) as excinfo:
        ppo.PPOAgent.load(path)
    e = excinfo.value
    assert isinstance(e, (ValueError, OSError)), f"{case}: {type(e).__name__}: {e}"
    assert str(path) in str(e) or path.name in str(e), f"{case}: the error does not name the file: {e}"


# -- command-line tools -------------------------------------------------------------

BAD_COMMANDS = [
    ("experiments.play", ["--game", "nope"]),
    ("experiments.play", ["--game", "neu", "--players", "99", "--human", "none"]),
    ("experiments.play", ["--game", "neu", "--human", "banana"]),
    ("experiments.tournament", ["--game", "nope"]),
    ("experiments.tournament", ["--game", "neu", "--agents", "nope"]),
    ("experiments.tournament", ["--game", "neu", "--deals", "-3"]),
    ("experiments.compare", ["--agents", "nope"]),
    ("experiments.compare", ["--games", "nope"]),
    ("train.ppo", ["--game", "nope"]),
    ("train.ppo", ["--game", "neu", "--steps", "abc"]),
    ("experiments.soak", ["--game", "nope"]),
    ("experiments.soak", ["--game", "neu", "--players", "99"]),
    ("experiments.soak", ["--deals", "0"]),
]


@pytest.fixture(scope="module")
def cli_results():
    """Run every bad command side by side once; {(module, args): (exit status, stderr) or None if hung}."""
    runs = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for module, args in BAD_COMMANDS:
        if importlib.util.find_spec(module) is None:
            continue
        cmd = [sys.executable, "-m", module, *args]
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        runs.append(((module, tuple(args)), proc))
    results = {}
    for key, proc in runs:
        try:
            _, err = proc.communicate(timeout=120)
            results[key] = (proc.returncode, err)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            results[key] = None
    return results


@pytest.mark.parametrize("module,args", BAD_COMMANDS, ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_command_line_tool_rejects_bad_arguments(cli_results, module, args):
    """Exit status 2 and one clear line on stderr, never a traceback."""
    result = cli_results[module, tuple(args)]
    assert result is not None, "hung"
    status, err = result
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err[-500:]
    assert status == 2, f"exit {status}: {err[-300:]}"
    assert len(lines) == 1 and "error" in lines[0], f"not one clear line: {err[-300:]!r}"
