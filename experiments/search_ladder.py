"""One search seat against heuristics, on duplicate deals: the paired difference and the time per move.

    python -m experiments.search_ladder --game neu --agent pimc:worlds=16 --deals 200 --seed 910000

Deal ``d`` (seed ``seed + d``) is played with heuristics in every seat, and with the agent
in seat ``d % n`` and heuristics elsewhere (``--seats one``), or once with the agent in each
seat in turn (``--seats all``: more games a deal, and a per-deal difference with far less
luck in it). The same seed gives the same deal and the same chance stream, so the per-deal
difference of the agent's seat's summed reward (agent minus heuristic, averaged over the
seats it took) is a paired difference; the command prints its mean with a 95% CI
(`experiments.tournament.stats.mean_ci`), and the agent's time per decision with a choice
(a forced move is not timed: it costs nothing), wall-clock and CPU (the deciding thread's). The
agent's first such decision is timed apart (``first_decision_ms``): it pays once for what a
process loads on first use, such as compiled kernels read from numba's cache, which is not a
cost of each move. With ``--out DIR`` the record is written to
a new file there, named by the time and the arguments; an existing file is never replaced.
The record keeps a search agent's settings as it ran (``settings``: its worlds, bound and the
rest, the game's own defaults filled in), so that it still says what ran if a default changes.
"""

from __future__ import annotations

import json
import re
import os
import time

import numpy as np

import envs
from agents import is_upper_bound, make_agent
from agents.search.options import SEARCH_OPTIONS
from experiments import cli
from experiments.tournament.match import play_game
from experiments.tournament.stats import mean_ci


class Timed:
    """Wraps an agent and times its decisions that have a choice: the first apart (`first`, its
    wall and CPU seconds: one-time loading), then the rest (`seconds`, `cpu_seconds`, `decisions`)."""

    def __init__(self, agent) -> None:
        self.agent, self.seconds, self.cpu_seconds, self.decisions = agent, 0.0, 0.0, 0
        self.first: tuple[float, float] | None = None

    def inform(self, info) -> None:
        if callable(getattr(self.agent, "inform", None)):
            self.agent.inform(info)

    def cheat_inform(self, engine) -> None:
        if callable(getattr(self.agent, "cheat_inform", None)):
            self.agent.cheat_inform(engine)

    def reset(self) -> None:
        if callable(getattr(self.agent, "reset", None)):
            self.agent.reset()

    def act(self, observation: dict) -> int:
        if np.count_nonzero(observation["action_mask"]) < 2:
            return self.agent.act(observation)
        start, cpu = time.perf_counter(), time.thread_time()
        action = self.agent.act(observation)
        took = (time.perf_counter() - start, time.thread_time() - cpu)
        if self.first is None:
            self.first = took
        else:
            self.seconds += took[0]
            self.cpu_seconds += took[1]
            self.decisions += 1
        return action


SEATS = ("one", "all")


def settings(agent) -> dict | None:
    """A search agent's options as it runs them (None for other agents)."""
    options = SEARCH_OPTIONS.get(getattr(agent, "name", None))
    if options is None:
        return None
    return {key: getattr(agent, key) for key in options if isinstance(getattr(agent, key, None), (str, int, float, type(None)))}


def ladder(game: str, spec: str, deals: int, seed: int, num_players: int = 4, baseline: str = "heuristic",
           progress: bool = False, seats: str = "one") -> dict:
    from tqdm import tqdm

    env = envs.make(game, num_players=num_players)
    diffs = []
    timed = Timed(make_agent(spec, game, num_players, seed=seed))
    for d in tqdm(range(deals), desc=f"{game} {num_players}p {spec}", unit="deal", disable=not progress, leave=False):
        base = [make_agent(baseline, game, num_players, seed=seed + d * num_players + s) for s in range(num_players)]
        ref = play_game(env, base, seed=seed + d)
        taken = []
        for seat in range(num_players) if seats == "all" else [d % num_players]:
            table = list(base)
            table[seat] = timed
            timed.reset()
            cheats = [s == seat and is_upper_bound(spec) for s in range(num_players)]  # the Timed wrapper hides the class
            got = play_game(env, table, seed=seed + d, upper_bounds=cheats)
            taken.append(got["rewards"][seat] - ref["rewards"][seat])
        diffs.append(float(np.mean(taken)))
    first = timed.first or (0.0, 0.0)
    return {
        "game": game, "num_players": num_players, "agent": spec, "baseline": baseline, "deals": deals, "seed": seed,
        "seats": seats, "settings": settings(timed.agent),
        "difference": mean_ci(diffs), "differences": [float(x) for x in diffs],
        # per decision after the first; the first (one-time loading) apart; decisions counts the rest
        "ms_per_decision": 1000 * timed.seconds / max(timed.decisions, 1), "decisions": timed.decisions,
        "cpu_ms_per_decision": 1000 * timed.cpu_seconds / max(timed.decisions, 1),
        "first_decision_ms": 1000 * first[0], "first_decision_cpu_ms": 1000 * first[1],
        "rollout_steps": getattr(timed.agent, "steps", None), "search_seconds": timed.seconds + first[0],
        # pimc: the share of its searched decisions where it did not play the rollout policy's move
        "deviation_rate": (timed.agent.deviated / timed.agent.searched) if getattr(timed.agent, "searched", 0) else None,
    }


def main(argv=None) -> dict:
    from agents.spec import SPEC_LIST

    p = cli.ArgumentParser(prog="python -m experiments.search_ladder", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", required=True, choices=envs.available_games(), help="which game")
    p.add_argument("--agent", default="pimc", help=f"the agent in the one seat: {SPEC_LIST}")
    p.add_argument("--baseline", default="heuristic",
                   help=f"the agent in every other seat, and in every seat of the reference game: {SPEC_LIST}")
    p.add_argument("--players", type=cli.count, default=4, help="player count")
    p.add_argument("--deals", type=cli.count, default=100, help="duplicate deals, at least 2 (a CI needs two)")
    p.add_argument("--seed", type=cli.seed, default=910_000, help="first deal's seed (use deals not used for tuning)")
    p.add_argument("--seats", choices=SEATS, default="one",
                   help="the agent's seat in each deal: one (seat deal %% players) or all (each seat in turn, averaged)")
    p.add_argument("--out", default=None, help="folder for the JSON record (a new file per run)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    if a.deals < 2:
        p.error("--deals must be at least 2 (a CI needs two deals)")
    for what, spec in (("--agent", a.agent), ("--baseline", a.baseline)):
        try:  # a bad spec or option: one line, before any game
            envs.info(a.game, a.players)
            make_agent(spec, a.game, a.players, seed=0)
        except (ValueError, FileNotFoundError) as e:
            p.error(f"{what} {spec!r}: {e}")
    record = ladder(a.game, a.agent, a.deals, a.seed, a.players, a.baseline, progress=not a.quiet, seats=a.seats)
    d = record["difference"]
    steps = record["rollout_steps"]
    rate = f", {steps / record['search_seconds']:,.0f} play-out steps/s" if steps and record["search_seconds"] else ""
    if record["deviation_rate"] is not None:
        rate += f", leaves the rollout policy's move in {100 * record['deviation_rate']:.1f}% of decisions"
    print(f"{a.game} {a.players}p {a.agent} - {a.baseline}: {d['mean']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] "
          f"over {a.deals} deals ({'every seat' if a.seats == 'all' else 'one seat'} a deal); {record['ms_per_decision']:.3f} ms per decision, {record['cpu_ms_per_decision']:.3f} CPU ms "
          f"({record['decisions']} decisions after the first, which took {record['first_decision_ms']:.1f} ms){rate}")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        name = (f"{time.strftime('%Y%m%d-%H%M%S')}-{a.game}-{a.players}p-{re.sub(r'[^A-Za-z0-9_.=-]+', '_', a.agent)[-80:]}-{a.seed}"
                + ("-all-seats" if a.seats == "all" else ""))
        path = os.path.join(a.out, name + ".json")
        k = 1
        while os.path.exists(path):
            path, k = os.path.join(a.out, f"{name}-{k}.json"), k + 1
        with open(path, "x") as f:
            json.dump(record, f, indent=1)
    return record


if __name__ == "__main__":
    main()
