"""Shared test helpers: random legal play, batched arrays compared, and golden playthroughs.

A golden playthrough (`tests/golden/*.txt`) is a recorded game as readable text,
as OpenSpiel keeps its playthroughs: the seed and reset options, then for every
agent step the acting agent, what it sees (`view`), its legal move names,
digests of its observation, mask and infos, the action's *name*, the event
the step caused (`env.last_event`) and the step's rewards.
`check_playthrough` plays the actions again and compares the text, so a
change in rules, observation layout or rewards shows as a diff a person can
read, at the first step that differs.

To record a new one, or to re-record after a deliberate change:
    python -m tests.helpers record neu 4 7 tests/golden/neu_4p.txt --options '{"deal": ...}'
    python -m tests.helpers rerecord tests/golden/neu_4p_seed_deal.txt
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
    return random_move(obs["action_mask"], rnd)


def random_move(mask: np.ndarray, rnd: random.Random) -> int:
    """A uniformly random legal action of a mask (an engine's ``legal_mask()``)."""
    legal = np.flatnonzero(mask)
    assert legal.size > 0, "acting agent has an all-zeros mask"
    return int(legal[rnd.randrange(legal.size)])


def same(what: str, got: np.ndarray, want: np.ndarray) -> None:
    """Batched arrays (one row per table) equal, or an AssertionError naming the tables that differ."""
    if not np.array_equal(got, want):
        rows = np.flatnonzero((got != want).reshape(len(got), -1).any(axis=1))
        t = rows[0]
        raise AssertionError(f"{what} differs at tables {rows.tolist()}; table {t}: got {got[t]}, want {want[t]}")


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


def redealt_twin(e, seat: int, k: int):
    """A copy of engine `e` with every card `seat` cannot see redealt and a new chance stream
    (seeded from `k`): the same information state for `seat`, another game behind it."""
    import copy

    twin = copy.deepcopy(e)
    twin.shuffle_hidden(seat, np.random.default_rng(k + 1))
    twin.refresh()
    twin.rng = np.random.default_rng(k + 2)
    return twin


def stuck_neu_view(e) -> tuple[int, dict]:
    """A Neu engine's information state, seen from the seat after the player to act, changed so
    that no redeal can give the player to act a card: every unseen card is a 10 at a total of
    101. (The viewer, that information state.)"""
    viewer = (e.current_player + 1) % e.num_players
    info = e.information_state(viewer)
    rep = info["representative"]
    rep["total"], rep["owed"] = 101, 1
    rep["draw"] = [9] * len(rep["draw"])
    for s in range(e.num_players):
        if s != viewer:
            rep["hands"][s] = [0] * 9 + [rep["hand_sizes"][s]] + [0] * 8
    return viewer, info


def cli_error_line(main, argv, capsys) -> str:
    """Run a CLI's main(argv), which must exit with code 2 and one line on stderr; that line."""
    import pytest

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def first_deal_parts(game: str, players: int):
    """A fresh engine stopped at its first deal, with what that deal names (`deal_parts`)."""
    import envs

    e = envs.engine_class(game)(players)
    e._enumerating = True
    try:
        e.reset(np.random.default_rng(0))
    except envs.engine.NeedChance:
        pass
    deck, parts = e.deal_parts()
    return e, deck, parts


def deal_from_cards(card_names, parts, cards) -> dict:
    """The stacked deal (`reset(rng, deal=...)`) that hands out `cards` (ids) in order, part by
    part and seat by seat as `deal_parts` lists them."""
    deal, i = {}, 0
    for key, sizes in parts:
        if isinstance(sizes, list):
            deal[key] = [[card_names[c] for c in cards[i + sum(sizes[:s]):i + sum(sizes[:s + 1])]]
                         for s in range(len(sizes))]
            i += sum(sizes)
        else:
            deal[key] = [card_names[c] for c in cards[i:i + sizes]]
            i += sizes
    return deal


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def info_digest(info: dict) -> str:
    """Digest of an infos dict: its keys, then every value as int64 (numbers or arrays)."""
    values = np.concatenate([np.atleast_1d(np.asarray(info[k], dtype=np.int64)) for k in sorted(info)])
    return hashlib.sha256(",".join(sorted(info)).encode() + values.tobytes()).hexdigest()[:16]


# -- golden playthroughs ---------------------------------------------------------------------

HEADER_KEYS = ("game", "players", "seed", "options", "rule_options")


def playthrough(game: str, players: int, seed: int, options: dict | None = None, rule_options: dict | None = None,
                actions: list[str | None] | None = None) -> str:
    """A game as readable text: a header, then per agent step the acting agent, its `view`, the
    legal move names, digests of its observation, mask and infos, the action's name, the event
    it caused and the step's rewards. With `actions` (names; None for a finished agent's step) those are played; without,
    uniformly random legal moves from `random.Random(seed)`. An action that the game refuses ends
    the text with a line saying so."""
    import envs

    env = envs.make(game, num_players=players, **(rule_options or {}))
    env.reset(seed=seed, options=options)
    engine = env.unwrapped.game
    rnd = random.Random(seed)
    lines = [
        "# A golden playthrough, replayed action by action by tests/test_playthroughs.py: every line must",
        "# come out the same. After a deliberate rules change: python -m tests.helpers rerecord THIS_FILE",
        f"game: {game}",
        f"players: {players}",
        f"seed: {seed}",
        f"options: {json.dumps(options, sort_keys=True)}",
        f"rule_options: {json.dumps(rule_options or {}, sort_keys=True)}",
    ]
    for i, agent in enumerate(env.agent_iter()):
        if actions is not None and i >= len(actions):
            lines.append(f"(the game goes on after step {i - 1})")
            break
        obs, _, term, trunc, info = env.last()
        done = term or trunc
        lines += ["", f"step {i}: {agent}" + (" (done)" if done else "")]
        if not done:
            seat = env.possible_agents.index(agent)
            lines += [f"  view: {line}" for line in engine.view(seat).splitlines()]
            lines.append("  legal: " + ", ".join(env.unwrapped.action_name(int(a)) for a in np.flatnonzero(obs["action_mask"])))
        lines.append(f"  obs: {digest(obs['observation'])}  mask: {digest(obs['action_mask'])}  infos: {info_digest(info)}")
        if actions is None:
            name = None if done else env.unwrapped.action_name(random_action(obs, rnd))
        else:
            name = actions[i]
        lines.append(f"  action: {name}")
        try:
            env.step(None if name is None else env.unwrapped.action_from_name(name))
        except (ValueError, TypeError, AssertionError) as e:
            lines.append(f"  refused: {e}")
            break
        if env.last_event is not None:
            lines.append(f"  event: {env.last_event}")
        lines.append("  rewards: " + (", ".join(f"{a} {round(float(r), 9)!r}" for a, r in sorted(env.rewards.items())) or "-"))
    else:
        if actions is not None and len(actions) > i + 1:
            lines.append(f"(the game ended after step {i}; the recording goes on)")
    return "\n".join(lines) + "\n"


def read_playthrough(text: str) -> tuple[dict, list[str | None]]:
    """The header (as playthrough's keyword arguments) and the action names of a playthrough text."""
    header, actions = {}, []
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        if key in HEADER_KEYS and key not in header:
            header[key] = json.loads(value) if key in ("options", "rule_options") else (int(value) if key in ("players", "seed") else value)
        elif line.startswith("  action: "):
            name = line[len("  action: "):]
            actions.append(None if name == "None" else name)
    return header, actions


def check_playthrough(text: str) -> None:
    """Replay a playthrough text by its action names; AssertionError with a readable diff at the
    first lines that differ."""
    import difflib

    header, actions = read_playthrough(text)
    again = playthrough(**header, actions=actions)
    if again != text:
        diff = list(difflib.unified_diff(text.splitlines(), again.splitlines(), "recorded", "replayed", n=6, lineterm=""))
        raise AssertionError("the replay differs from the recording:\n" + "\n".join(diff[:80]))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.helpers", description="record golden playthroughs")
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record a random game")
    rec.add_argument("game")
    rec.add_argument("players", type=int)
    rec.add_argument("seed", type=int)
    rec.add_argument("out", type=Path)
    rec.add_argument("--options", type=json.loads, default=None, help='reset options as JSON, e.g. \'{"deal": ...}\'')
    rec.add_argument("--rule-options", type=json.loads, default=None, help="rule options as JSON")
    again = sub.add_parser("rerecord", help="play a playthrough's actions again and write what the game does now")
    again.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        args.out.write_text(playthrough(args.game, args.players, args.seed, args.options, args.rule_options))
        print(f"wrote {args.out}")
    else:
        for path in args.files:
            header, actions = read_playthrough(path.read_text())
            path.write_text(playthrough(**header, actions=actions))
            print(f"wrote {path}")
