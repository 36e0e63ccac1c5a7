"""Teacher data from an upper bound: a search that sees every hand, in one seat against heuristics.

    python -m lab.cheat_teacher --game not_your_mas_jong --players 4 --games 2000 \\
        --features --workers 2 --out runs/cheat_teacher/mj4p.npz
    python -m train.ppo_search --game not_your_mas_jong --players 4 --features \\
        --teacher-data runs/cheat_teacher/mj4p.npz --steps 1 --rollout-steps 1 --out runs/mj4p_cheat_clone

`pimc_cheat:pile=shuffled` sees every hand (not the draw pile's order) and beats
Ma's Jong's heuristic by about 3 tokens a game, where fair search is level with
it: the room above the heuristic is in knowing the hidden hands. This script
records that search's decisions with a choice, game after game, each game with
the search in one seat (seat ``g % players`` in game ``g``) and the heuristic
in the others: the positions a network meets when it plays against heuristics.

A network fitted to these decisions reads only its observation (and
``--features`` of it). It cannot see what the teacher saw, so it learns the move
the teacher makes on average over the hidden hands that lead to the same
observation, in the proportions these games reach them: the belief that
uniform redeals lack, learned from play.

The file is a `train.ppo_search` teacher file (``--teacher-data``): obs (with
features), masks, actions, and rewards, dones and next_index for the value fit
(each decision's reward is 0 but the last of its game's, which is the seat's
whole return, times the reward scale `train.ppo` measures). Game ``g`` deals
from seed ``seed + g`` and the searcher draws from seed ``seed + g``, so the
file does not depend on ``--workers``. ``--out`` must not exist yet, and it is
written aside and renamed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys

import numpy as np

import envs

DEFAULT_SPEC = "pimc_cheat:pile=shuffled,worlds=8"


class Recorder:
    """The teacher in its seat: plays its moves and records the decisions that had a choice."""

    def __init__(self, agent, to_input) -> None:
        self.agent, self.to_input = agent, to_input
        self.rows: list[tuple] = []
        self.calls = 0

    def inform(self, info) -> None:
        self.agent.inform(info)

    def cheat_inform(self, engine) -> None:
        self.agent.cheat_inform(engine)

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation: dict) -> int:
        self.calls += 1
        action = int(self.agent.act(observation))
        mask = np.asarray(observation["action_mask"], bool)
        if np.count_nonzero(mask) >= 2:
            self.rows.append((self.to_input(observation["observation"], observation["action_mask"]), mask, action))
        return action


class Counted:
    """A heuristic seat, counting its moves (the file's env_steps)."""

    def __init__(self, agent) -> None:
        self.agent, self.calls = agent, 0

    def act(self, observation: dict) -> int:
        self.calls += 1
        return self.agent.act(observation)


def play(task: tuple) -> dict:
    """Games [first, last) of a run: the teacher's decisions as columns, and the env steps played."""
    from agents import make_agent
    from agents.network import policy_input
    from experiments.tournament.match import play_game

    game, n, spec, features, seed, first, last, reward_scale = task
    env = envs.make(game, num_players=n)
    to_input = policy_input(game, n, features)
    obs, masks, actions, rewards, dones, steps = [], [], [], [], [], 0
    for g in range(first, last):
        seat = g % n
        teacher = Recorder(make_agent(spec, game, n, seed=seed + g), to_input)
        table = [teacher if s == seat else Counted(make_agent("heuristic", game, n, seed=0)) for s in range(n)]
        result = play_game(env, table, seed=seed + g, upper_bounds=[s == seat for s in range(n)])
        steps += sum(a.calls for a in table)
        if not teacher.rows:
            continue
        for x, m, a in teacher.rows:
            obs.append(x), masks.append(m), actions.append(a), rewards.append(0.0), dones.append(False)
        rewards[-1], dones[-1] = result["rewards"][seat] * reward_scale, True
    width = len(to_input(*_blank(game, n)))
    return {"obs": np.asarray(obs, np.float32).reshape(-1, width), "masks": np.asarray(masks, bool).reshape(len(obs), -1),
            "actions": np.asarray(actions, np.int64), "rewards": np.asarray(rewards, np.float32),
            "dones": np.asarray(dones, bool), "env_steps": steps}


def _blank(game: str, n: int):
    facts = envs.info(game, n)
    mask = np.zeros(facts.num_actions, np.int8)
    mask[0] = 1
    return np.zeros(facts.obs_size, np.float32), mask


def collect(game: str, n: int, games: int, spec: str = DEFAULT_SPEC, features: bool = False, seed: int = 0,
            workers: int = 1, progress: bool = False) -> dict:
    """The teacher file's columns for `games` games (the same for any number of workers)."""
    from tqdm import tqdm

    from train.rollout import measure_scales

    scale = measure_scales(game, n, "plain", seed=seed, features=features)["reward_scale"]
    chunk = 5
    tasks = [(game, n, spec, features, seed, a, min(a + chunk, games), scale) for a in range(0, games, chunk)]
    bar = tqdm(total=games, desc=f"{game} {n}p {spec}", unit="game", disable=not progress)
    parts = []
    if workers <= 1:
        for t in tasks:
            parts.append(play(t))
            bar.update(t[6] - t[5])
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for t, part in zip(tasks, pool.imap(play, tasks)):  # in order: the file does not depend on workers
                parts.append(part)
                bar.update(t[6] - t[5])
    bar.close()
    data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "masks", "actions", "rewards", "dones")}
    # Each decision's next one is the next row, unless its game ended there.
    rows = len(data["actions"])
    data["next_index"] = np.where(data["dones"], -1, np.arange(1, rows + 1)).astype(np.int64)
    data["critic_in"] = np.zeros((0, 0), np.float32)
    data["env_steps"] = np.int64(sum(p["env_steps"] for p in parts))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.cheat_teacher", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="not_your_mas_jong", choices=envs.available_games())
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=200, help="games played (the teacher in one seat of each)")
    parser.add_argument("--teacher", default=DEFAULT_SPEC, help="an upper-bound search spec (pimc_cheat:...)")
    parser.add_argument("--features", action="store_true", help="record the game's hand-made features after each observation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", required=True, help="the .npz to write (must not exist)")
    a = parser.parse_args(argv)
    from agents import is_upper_bound, make_agent

    problem = None
    if a.games < 1 or a.workers < 1:
        problem = "--games and --workers must be 1 or more"
    elif not a.out.endswith(".npz"):
        problem = f"--out must name a .npz file, got {a.out!r}"
    elif os.path.exists(a.out):
        problem = f"--out {a.out} already exists; runs never overwrite earlier runs: choose another path"
    else:
        try:
            make_agent(a.teacher, a.game, a.players, seed=0)
            if not is_upper_bound(a.teacher):
                problem = f"--teacher must be an upper-bound search that sees every hand (pimc_cheat:...), got {a.teacher!r}"
        except ValueError as e:
            problem = str(e)
    if problem:
        parser.exit(2, f"{parser.prog}: error: {problem}\n")
    data = collect(a.game, a.players, a.games, a.teacher, a.features, a.seed, a.workers, progress=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out[: -len(".npz")] + ".tmp.npz"
    np.savez_compressed(tmp, **data)
    os.replace(tmp, a.out)
    print(f"{len(data['actions']):,} decisions of {a.teacher} in {a.games:,} games ({int(data['env_steps']):,} env steps) "
          f"written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
