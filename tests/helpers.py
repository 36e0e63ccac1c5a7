"""Shared test helpers: random legal play, and golden playthroughs.

A golden playthrough is a recorded game: the seed, the reset options, and for
every agent step the acting agent, the action *name*, the rewards of that step
and a digest of the acting agent's observation. `replay` plays it again action
by action and checks every one of those, so any change in rules, observation
layout or rewards shows up as a diff at the first step that differs.

To (re)record after a deliberate change, run for example:
    python -m tests.helpers record neu 4 7 tests/golden/neu_4p.json
and say why in the commit message (and bump the env's _vN if behaviour changed).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden"


def random_action(obs: dict, rnd: random.Random) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    assert legal.size > 0, "acting agent has an all-zeros mask"
    return int(legal[rnd.randrange(legal.size)])


def play_random_game(env, seed: int, options: dict | None = None, max_steps: int = 100_000):
    """Play one game with uniformly random legal moves; yields (agent, obs, action) per step."""
    env.reset(seed=seed, options=options)
    rnd = random.Random(seed)
    for steps, agent in enumerate(env.agent_iter()):
        if steps >= max_steps:
            raise AssertionError(f"game with seed {seed} did not end in {max_steps} steps")
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else random_action(obs, rnd)
        yield agent, obs, action
        env.step(action)


def heuristic_decisions(env, seed: int, max_iter: int | None = None):
    """Play one game with the game's heuristic in every seat; yields (agent, obs, action) for each
    decision (not the dead steps of finished agents), and plays the action once the caller resumes."""
    from agents import make_agent

    teacher = make_agent("heuristic", env.unwrapped.game.game_name, env.unwrapped.game.num_players, seed=0)
    env.reset(seed=seed)
    for agent in env.agent_iter() if max_iter is None else env.agent_iter(max_iter=max_iter):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = teacher.act(obs)
        yield agent, obs, action
        env.step(action)


def cli_error_line(main, argv, capsys) -> str:
    """Run a CLI's main(argv), which must exit with code 2 and one line on stderr; that line."""
    import pytest

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def info_digest(info: dict) -> str:
    """Digest of an infos dict: its keys, then every value as int64 (numbers or arrays)."""
    values = np.concatenate([np.atleast_1d(np.asarray(info[k], dtype=np.int64)) for k in sorted(info)])
    return hashlib.sha256(",".join(sorted(info)).encode() + values.tobytes()).hexdigest()[:16]


def record_transcript(game: str, num_players: int, seed: int, options: dict | None = None, rule_options: dict | None = None) -> dict:
    """Record a random game: per step the agent, action name, obs/mask/infos digests and the step's rewards."""
    import envs

    env = envs.make(game, num_players=num_players, **(rule_options or {}))
    env.reset(seed=seed, options=options)
    rnd = random.Random(seed)
    steps = []
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            action, name = None, None
        else:
            action = random_action(obs, rnd)
            name = env.unwrapped.action_name(action)
        env.step(action)
        steps.append(
            {
                "agent": agent,
                "action": name,
                "obs": digest(obs["observation"]),
                "mask": digest(obs["action_mask"]),
                "info": info_digest(info),
                "rewards": {a: round(float(r), 9) for a, r in sorted(env.rewards.items())},
            }
        )
    return {
        "game": game,
        "num_players": num_players,
        "seed": seed,
        "options": options,
        "rule_options": rule_options or {},
        "steps": steps,
    }


def replay(transcript: dict) -> None:
    """Replay a transcript by action names; assert every recorded fact step by step."""
    import envs

    t = transcript
    env = envs.make(t["game"], num_players=t["num_players"], **t["rule_options"])
    env.reset(seed=t["seed"], options=t["options"])
    for i, step in enumerate(t["steps"]):
        assert env.agents, f"step {i}: game ended early"
        agent = env.agent_selection
        assert agent == step["agent"], f"step {i}: {agent} to act, transcript says {step['agent']}"
        obs, _, term, trunc, info = env.last()
        assert digest(obs["observation"]) == step["obs"], f"step {i}: observation of {agent} differs"
        assert info_digest(info) == step["info"], f"step {i}: infos of {agent} differ"
        assert digest(obs["action_mask"]) == step["mask"], f"step {i}: action mask of {agent} differs"
        action = None if step["action"] is None else env.unwrapped.action_from_name(step["action"])
        env.step(action)
        got = {a: round(float(r), 9) for a, r in sorted(env.rewards.items())}
        assert got == step["rewards"], f"step {i} ({step['action']}): rewards {got} != {step['rewards']}"
    assert not env.agents, "transcript ended but the game goes on"


def save(transcript: dict, path: Path) -> None:
    path.write_text(json.dumps(transcript, indent=0, sort_keys=True) + "\n")


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


if __name__ == "__main__":
    # python -m tests.helpers record GAME PLAYERS SEED OUT.json
    if len(sys.argv) != 6 or sys.argv[1] != "record":
        sys.exit("usage: python -m tests.helpers record GAME PLAYERS SEED OUT.json")
    _, _, game, players, seed, out = sys.argv
    save(record_transcript(game, int(players), int(seed)), Path(out))
    print(f"wrote {out}")
