"""Tournament harness: any agents, any game, any player count, duplicate deals.

    python -m experiments.tournament --game neu --players 4 --agents heuristic,random --games 2000

As a library:

    from experiments.tournament import run_tournament, write_reports
    result = run_tournament("neu", ["heuristic", "random"], num_players=4, deals=500, workers=2)
    print(result["markdown"])

## Tables: who sits where
A *table* is a lineup of one agent per seat. The agents you give become
tables by one of three modes (``--mode``):

* ``fill`` (default when you give at most as many agents as seats): the list
  is the lineup, and **the last agent fills the seats left over**.
  ``heuristic,random`` at 4 players is one heuristic against three randoms;
  ``ppo,heuristic`` is one PPO against three heuristics;
  ``heuristic,random,random,random`` says the same seat by seat.
* ``round-robin`` (default when you give more agents than seats): one table
  for every set of ``num_players`` distinct agents.
* ``one-vs-rest``: one table for every ordered pair (X, Y) of distinct
  agents: one X against ``num_players - 1`` Ys. This is what
  ``experiments.compare`` plays, so that every pair meets in both roles.

The same agent in several seats shares one name and one row of statistics;
each seat gets its own agent object (agents may keep memory).

## Duplicate deals
A table plays ``deals`` deals. Deal ``i`` has one seed, derived from
``(seed, i)`` only, and is replayed once for each cyclic rotation of the
seats: in rotation ``r`` the lineup's agent ``j`` sits in seat ``(j + r) % n``.
So over one deal every agent sits in every seat with the same cards, and
different tables share the same deals too. Agents are seeded from
``(seed, deal, table, rotation, seat)`` and ``reset()`` before every game,
which makes a game's result independent of the process that plays it:
``--workers K`` gives identical results for every K.

``--plain`` plays the same number of games with an independent deal per game
(the usual design), for measuring what duplicate deals buy.

## Statistics
The unit of the statistics is a deal at one table: for each agent, its mean
over all its seats in all rotations of that deal. Reported per agent, pooled
over tables (each deal of each table counts once) and per table:

* ``score`` — the game's own currency (``infos["final_scores"]``);
* ``reward`` — the sum of the env's rewards over the game;
* ``win`` — first place, ties shared (two players ranked 1 get 1/2 each);
* ``rank`` — final rank (1 = best, ``infos["final_ranks"]``);

each with a 95% confidence interval, normal on the per-deal means:
``mean ± 1.96 · sd / sqrt(deals)``.

Pairwise, for every two agents that meet: the mean score difference (same
deals, paired) with its CI, how often one finishes ahead of the other
(ties 1/2; the heat map), and the **variance reduction** of duplicate deals:
with ``D_g`` the score difference in game ``g`` and ``d_i`` its mean over the
``n`` rotations of deal ``i``, the estimate's variance is ``var(d_i) / deals``
with duplicate deals and ``var(D_g) / games`` with an independent deal per
game; their ratio is the factor by which duplicate deals cut the variance
(equivalently, the number of plain games one duplicate game is worth).

OpenSkill (Plackett–Luce) ratings are fitted over every game, in a fixed
order, when the tournament has more than two agents: each game ranks the
distinct agents at the table by their mean rank there.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from experiments.cli import ArgumentParser

Z95 = 1.959963984540054  # two-sided 95% normal quantile
MODES = ("fill", "round-robin", "one-vs-rest")
STATS = ("score", "reward", "win", "rank")
MAX_STEPS = 200_000  # a game longer than this is a bug in an engine or agent


# -- agents and tables ---------------------------------------------------------
@dataclass(frozen=True)
class AgentSpec:
    """An agent in a tournament: its display name, its kind for `agents.make_agent`, and kwargs."""

    name: str
    kind: str
    kwargs: tuple = field(default=())  # sorted (key, value) pairs, so that the spec is hashable

    @classmethod
    def of(cls, x: "AgentSpec | str") -> "AgentSpec":
        return x if isinstance(x, AgentSpec) else cls(name=x, kind=x)

    def make(self, game: str, num_players: int, seed: int | None = None):
        from agents import make_agent

        return make_agent(self.kind, game, num_players, seed=seed, **dict(self.kwargs))


def distinct(specs: Iterable[AgentSpec]) -> list[AgentSpec]:
    """Specs in first-seen order, each name once."""
    seen: dict[str, AgentSpec] = {}
    for s in specs:
        if s.name in seen and seen[s.name] != s:
            raise ValueError(f"two different agents are both named {s.name!r}")
        seen.setdefault(s.name, s)
    return list(seen.values())


def make_tables(specs: Sequence[AgentSpec | str], num_players: int, mode: str | None = None) -> list[tuple[AgentSpec, ...]]:
    """Lineups (one spec per seat) from a list of agents; see the module docstring."""
    specs = [AgentSpec.of(s) for s in specs]
    if not specs:
        raise ValueError("a tournament needs at least one agent")
    uniq = distinct(specs)
    if mode is None:
        mode = "fill" if len(specs) <= num_players else "round-robin"
    if mode == "fill":
        if len(specs) > num_players:
            raise ValueError(f"mode 'fill' takes at most {num_players} agents for {num_players} seats, got {len(specs)}")
        return [tuple(specs) + (specs[-1],) * (num_players - len(specs))]
    if mode == "round-robin":
        if len(uniq) < num_players:
            raise ValueError(f"mode 'round-robin' needs at least {num_players} distinct agents, got {len(uniq)}")
        return [tuple(c) for c in itertools.combinations(uniq, num_players)]
    if mode == "one-vs-rest":
        if len(uniq) < 2:
            raise ValueError("mode 'one-vs-rest' needs at least 2 distinct agents")
        # At 2 players (x, y) and (y, x) are the same table up to rotation.
        pairs = itertools.combinations(uniq, 2) if num_players == 2 else itertools.permutations(uniq, 2)
        return [(x,) + (y,) * (num_players - 1) for x, y in pairs]
    raise ValueError(f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}")


def seat_lineup(table: Sequence[Any], rotation: int) -> list[Any]:
    """Who sits where in a rotation: lineup entry j goes to seat (j + rotation) % n."""
    n = len(table)
    return [table[(s - rotation) % n] for s in range(n)]


def _seed(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, dtype=np.uint32)[0])


def deal_seed(seed: int, deal: int, rotation: int = 0, duplicate: bool = True) -> int:
    """One seed per deal (per game with plain deals); it depends on nothing else."""
    return _seed(seed, deal) if duplicate else _seed(seed, deal, rotation, 1)


def agent_seed(seed: int, deal: int, table: int, rotation: int, seat: int) -> int:
    return _seed(seed, deal, table, rotation, seat, 2)


# -- playing -------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    game: str
    num_players: int
    rule_options: tuple
    tables: tuple  # of lineups of AgentSpec
    seed: int
    duplicate: bool
    tasks: tuple  # of (table, deal)
    record_moves: bool = False  # for --save-replays


_CACHE: dict = {}  # per process: envs and agent objects, reused across games


def _env(game: str, num_players: int, rule_options: tuple):
    key = ("env", game, num_players, rule_options)
    if key not in _CACHE:
        import envs

        _CACHE[key] = envs.make_raw(game, num_players=num_players, **dict(rule_options))
    return _CACHE[key]


def _agent(spec: AgentSpec, game: str, num_players: int, seat: int):
    key = ("agent", spec, game, num_players, seat)
    if key not in _CACHE:
        _CACHE[key] = spec.make(game, num_players, seed=0)
    return _CACHE[key]


def play_game(env, agents: Sequence[Any], seed: int) -> dict:
    """Play one game; per seat: final score, summed reward, final rank."""
    n = len(agents)
    env.reset(seed=seed)
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    rewards = [0.0] * n
    final = None
    for steps, name in enumerate(env.agent_iter()):
        if steps >= MAX_STEPS:
            raise RuntimeError(f"game with seed {seed} did not end in {MAX_STEPS} steps")
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agents[seat[name]].act(obs))
        # The adapter clears rewards at the next step, so summing after every step counts each once.
        for a, r in env.rewards.items():
            rewards[seat[a]] += r
        if final is None:
            for info in env.infos.values():
                if "illegal_move" in info:
                    raise RuntimeError(f"{info['illegal_move']} made an illegal move (game seed {seed})")
                if "final_scores" in info:
                    final = info
                    break
    if final is None:
        raise RuntimeError(f"game with seed {seed} ended without final scores")
    names = env.possible_agents
    return {
        "scores": [int(final["final_scores"][a]) for a in names],
        "ranks": [int(final["final_ranks"][a]) for a in names],
        "rewards": [float(r) for r in rewards],
    }


def _worker_init() -> None:
    # One thread per worker process: the workers already use every core
    # (torch reads this when an agent first imports it).
    os.environ["OMP_NUM_THREADS"] = "1"


def play_job(job: Job) -> list[dict]:
    """Play every rotation of every (table, deal) of a job; records in a fixed order."""
    env = _env(job.game, job.num_players, job.rule_options)
    n = job.num_players
    out = []
    for t, deal in job.tasks:
        table = job.tables[t]
        for r in range(n):
            lineup = seat_lineup(table, r)
            agents = []
            for s, spec in enumerate(lineup):
                a = _agent(spec, job.game, n, s)
                a.seed(agent_seed(job.seed, deal, t, r, s))
                a.reset()
                agents.append(a)
            ds = deal_seed(job.seed, deal, r, job.duplicate)
            if job.record_moves:
                from experiments.replay import MoveRecorder

                agents = MoveRecorder.wrap(agents)
            g = play_game(env, agents, ds)
            if job.record_moves:
                g["moves"] = agents[0].moves
            out.append({"table": t, "deal": deal, "rotation": r, "deal_seed": ds, "agents": [s.name for s in lineup], **g})
    return out


def check_game(game: str, num_players: int | None) -> int:
    """The player count to use; ValueError names the valid games or counts."""
    import envs

    mod = envs.module(game)
    engine = mod.raw_env.engine_cls
    if num_players is None:
        return engine.default_players
    if not engine.min_players <= num_players <= engine.max_players:
        raise ValueError(f"{game}: players must be from {engine.min_players} to {engine.max_players}, got {num_players}")
    return num_players


def play(
    game: str,
    tables: Sequence[Sequence[AgentSpec]],
    num_players: int,
    deals: Iterable[int],
    seed: int = 0,
    workers: int = 1,
    duplicate: bool = True,
    rule_options: dict | None = None,
    progress: bool | str = True,
    deadline: float | None = None,
    save_replays: str | Path | None = None,
) -> list[dict]:
    """Play `deals` (deal indices) at every table; one record per game, in (table, deal, rotation) order.

    With a `deadline` (a `time.perf_counter()` value) play stops once it has
    passed, and only the deals finished at every table are kept: a prefix of
    `deals`, so the records are exactly those of a run over that prefix.
    With `save_replays` (a folder) every kept game is also written there as a
    replay file (`experiments.replay`).
    """
    tables = tuple(tuple(AgentSpec.of(s) for s in t) for t in tables)
    for t in tables:
        if len(t) != num_players:
            raise ValueError(f"a table has {len(t)} seats, the game has {num_players}")
    deals = list(deals)
    # Deal-major order, so that whatever is done when the deadline passes is whole deals.
    tasks = [(t, d) for d in deals for t in range(len(tables))]
    opts = tuple(sorted((rule_options or {}).items()))
    chunk = max(1, min(50, len(tasks) // (max(workers, 1) * 8) or 1))
    jobs = [Job(game, num_players, opts, tables, seed, duplicate, tuple(tasks[i : i + chunk]), save_replays is not None) for i in range(0, len(tasks), chunk)]
    from tqdm import tqdm

    label = progress if isinstance(progress, str) else f"{game} {num_players}p"
    bar = tqdm(total=len(tasks) * num_players, desc=label, unit="game", disable=not progress, leave=True, dynamic_ncols=True)
    records: list[dict] = []
    done = 0
    pool = None
    try:
        if workers <= 1:
            results: Iterable[list[dict]] = map(play_job, jobs)
        else:
            pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_worker_init)
            results = pool.imap(play_job, jobs)
        for job, recs in zip(jobs, results):
            records += recs
            done += len(job.tasks)
            bar.update(len(job.tasks) * num_players)
            if deadline is not None and done >= len(tables) and time.perf_counter() > deadline:
                break
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
            pool.join()
    kept = set(deals[: done // len(tables)])
    records = [r for r in records if r["deal"] in kept]
    position = {d: i for i, d in enumerate(deals)}
    records.sort(key=lambda r: (r["table"], position[r["deal"]], r["rotation"]))
    if save_replays is not None:
        from experiments.replay import save_records

        save_records(records, save_replays, game, num_players, rule_options)
    return records


# -- statistics ----------------------------------------------------------------
def mean_ci(values: Sequence[float]) -> dict:
    """Mean and 95% normal CI of the mean: mean ± 1.96 · sd(ddof=1) / sqrt(n)."""
    x = np.asarray(values, dtype=float)
    m = len(x)
    mean = float(x.mean()) if m else float("nan")
    half = float(Z95 * x.std(ddof=1) / math.sqrt(m)) if m > 1 else float("nan")
    return {"mean": mean, "ci_low": mean - half, "ci_high": mean + half, "half_width": half, "n": m}


def win_shares(ranks: Sequence[int]) -> list[float]:
    """First place, ties shared: each of k players ranked best gets 1/k."""
    best = min(ranks)
    k = sum(1 for r in ranks if r == best)
    return [1.0 / k if r == best else 0.0 for r in ranks]


def _per_game(rec: dict) -> dict[str, dict[str, float]]:
    """Per agent name in one game: its mean over its seats of score, reward, win, rank."""
    wins = win_shares(rec["ranks"])
    out: dict[str, dict[str, list[float]]] = {}
    for s, name in enumerate(rec["agents"]):
        d = out.setdefault(name, {k: [] for k in STATS})
        d["score"].append(rec["scores"][s])
        d["reward"].append(rec["rewards"][s])
        d["win"].append(wins[s])
        d["rank"].append(rec["ranks"][s])
    return {name: {k: float(np.mean(v)) for k, v in d.items()} for name, d in out.items()}


def _units(records: Sequence[dict]) -> dict[tuple[int, int], list[dict]]:
    units: dict[tuple[int, int], list[dict]] = {}
    for rec in records:
        units.setdefault((rec["table"], rec["deal"]), []).append(rec)
    return units


def agent_stats(records: Sequence[dict]) -> dict[str, dict]:
    """Per agent: each statistic's mean and CI over (table, deal) units."""
    per_unit: dict[str, dict[str, list[float]]] = {}
    games: dict[str, int] = {}
    for recs in _units(records).values():
        acc: dict[str, dict[str, list[float]]] = {}
        for rec in recs:
            for name, v in _per_game(rec).items():
                games[name] = games.get(name, 0) + 1
                d = acc.setdefault(name, {k: [] for k in STATS})
                for k in STATS:
                    d[k].append(v[k])
        for name, d in acc.items():
            u = per_unit.setdefault(name, {k: [] for k in STATS})
            for k in STATS:
                u[k].append(float(np.mean(d[k])))
    return {name: {**{k: mean_ci(u[k]) for k in STATS}, "games": games[name]} for name, u in per_unit.items()}


def pairwise(records: Sequence[dict], names: Sequence[str]) -> dict:
    """For every ordered pair that met: score difference (paired by deal) with CI,
    share of finishing ahead (ties 1/2), and the variance reduction of duplicate deals."""
    diff_unit: dict[tuple[str, str], list[float]] = {}
    diff_game: dict[tuple[str, str], list[float]] = {}
    ahead: dict[tuple[str, str], list[float]] = {}
    for recs in _units(records).values():
        acc: dict[tuple[str, str], list[float]] = {}
        for rec in recs:
            pg = _per_game(rec)
            for a, b in itertools.permutations(pg, 2):
                d = pg[a]["score"] - pg[b]["score"]
                acc.setdefault((a, b), []).append(d)
                diff_game.setdefault((a, b), []).append(d)
            for i, j in itertools.permutations(range(len(rec["agents"])), 2):
                a, b = rec["agents"][i], rec["agents"][j]
                if a != b:
                    ri, rj = rec["ranks"][i], rec["ranks"][j]
                    ahead.setdefault((a, b), []).append(1.0 if ri < rj else 0.5 if ri == rj else 0.0)
        for k, v in acc.items():
            diff_unit.setdefault(k, []).append(float(np.mean(v)))
    out = {}
    for (a, b), units in diff_unit.items():
        per_game = np.asarray(diff_game[(a, b)])
        u = np.asarray(units)
        var_dup = float(u.var(ddof=1) / len(u)) if len(u) > 1 else float("nan")
        var_plain = float(per_game.var(ddof=1) / len(per_game)) if len(per_game) > 1 else float("nan")
        out[f"{a} vs {b}"] = {
            "a": a,
            "b": b,
            "score_diff": mean_ci(u),
            "ahead": float(np.mean(ahead[(a, b)])) if (a, b) in ahead else float("nan"),
            "var_duplicate": var_dup,
            "var_plain": var_plain,
            "variance_reduction": var_plain / var_dup if var_dup > 0 else float("nan"),
        }
    return out


def openskill_ratings(records: Sequence[dict], names: Sequence[str]) -> dict | None:
    """Plackett–Luce ratings over all games in record order; None with two agents or fewer."""
    if len(names) <= 2:
        return None
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in names}
    for rec in records:
        mean_rank: dict[str, list[int]] = {}
        for name, r in zip(rec["agents"], rec["ranks"]):
            mean_rank.setdefault(name, []).append(r)
        present = list(mean_rank)
        if len(present) < 2:
            continue
        new = model.rate([[ratings[n]] for n in present], ranks=[float(np.mean(mean_rank[n])) for n in present])
        for n, team in zip(present, new):
            ratings[n] = team[0]
    return {n: {"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())} for n, r in ratings.items()}


def summarize(records: Sequence[dict], tables: Sequence[Sequence[AgentSpec]], game: str, num_players: int, **config: Any) -> dict:
    names = [s.name for s in distinct(s for t in tables for s in t)]
    per_table = []
    for t, table in enumerate(tables):
        recs = [r for r in records if r["table"] == t]
        per_table.append({"lineup": [s.name for s in table], "agents": agent_stats(recs), "pairwise": pairwise(recs, names)})
    return {
        "game": game,
        "num_players": num_players,
        "agents": names,
        "games_played": len(records),
        **config,
        "overall": agent_stats(records),
        "pairwise": pairwise(records, names),
        "openskill": openskill_ratings(records, names),
        "tables": per_table,
    }


def run_tournament(
    game: str,
    agents: Sequence[AgentSpec | str],
    num_players: int | None = None,
    deals: int = 100,
    seed: int = 0,
    workers: int = 1,
    mode: str | None = None,
    duplicate: bool = True,
    rule_options: dict | None = None,
    progress: bool | str = True,
    first_deal: int = 0,
    save_replays: str | Path | None = None,
) -> dict:
    """Play a tournament and return its summary (plus "records", one per game)."""
    num_players = check_game(game, num_players)
    tables = make_tables(agents, num_players, mode)
    for spec in distinct(s for t in tables for s in t):
        spec.make(game, num_players, seed=0)  # fail early, in this process, on a missing agent
    t0 = time.perf_counter()
    records = play(game, tables, num_players, range(first_deal, first_deal + deals), seed, workers, duplicate, rule_options, progress,
                   save_replays=save_replays)
    wall = time.perf_counter() - t0
    result = summarize(records, tables, game, num_players, deals=deals, seed=seed, duplicate=duplicate, workers=workers, wall_s=wall)
    result["records"] = records
    return result


# -- reports -------------------------------------------------------------------
def _fmt(s: dict, digits: int = 2) -> str:
    if math.isnan(s["half_width"]):
        return f"{s['mean']:.{digits}f}"
    return f"{s['mean']:.{digits}f} ± {s['half_width']:.{digits}f}"


def markdown(results: Sequence[dict]) -> str:
    """One table for all results: a row per game, player count and agent, plus pairwise score differences."""
    lines = [
        "| game | players | agent | score / game | reward / game | win rate | mean rank | OpenSkill μ ± σ | games |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        skill = res.get("openskill") or {}
        for name in res["agents"]:
            s = res["overall"][name]
            sk = f"{skill[name]['mu']:.1f} ± {skill[name]['sigma']:.1f}" if name in skill else "–"
            lines.append(
                f"| {res['game']} | {res['num_players']} | {name} | {_fmt(s['score'])} | {_fmt(s['reward'])} | "
                f"{_fmt(s['win'])} | {_fmt(s['rank'])} | {sk} | {s['games']} |"
            )
    lines += ["", "| game | players | A vs B | score diff A − B | A ahead of B | variance reduction (duplicate vs plain) | deals × tables |", "|---|---|---|---|---|---|---|"]
    for res in results:
        names = res["agents"]
        for a, b in itertools.combinations(names, 2):
            p = res["pairwise"].get(f"{a} vs {b}")
            if p is None:
                continue
            d = p["score_diff"]
            lines.append(
                f"| {res['game']} | {res['num_players']} | {a} vs {b} | {_fmt(d)} | {p['ahead']:.1%} | "
                f"×{p['variance_reduction']:.2f} | {d['n']} |"
            )
    lines.append("")
    lines.append("± is a 95% CI (normal, on per-deal means); duplicate deals, every agent in every seat.")
    return "\n".join(lines) + "\n"


def _csv_rows(res: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["game", "players", "table", "agent", "games"] + [f"{k}_{p}" for k in STATS for p in ("mean", "ci_low", "ci_high")] + ["openskill_mu", "openskill_sigma"])
    skill = res.get("openskill") or {}
    blocks = [("all", res["overall"])] + [(" ".join(t["lineup"]), t["agents"]) for t in res["tables"]]
    for label, stats in blocks:
        for name, s in stats.items():
            sk = skill.get(name, {}) if label == "all" else {}
            w.writerow(
                [res["game"], res["num_players"], label, name, s["games"]]
                + [f"{s[k][p]:.6g}" for k in STATS for p in ("mean", "ci_low", "ci_high")]
                + [f"{sk['mu']:.6g}" if sk else "", f"{sk['sigma']:.6g}" if sk else ""]
            )
    return buf.getvalue()


def _games_csv(res: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    n = res["num_players"]
    w.writerow(["table", "deal", "rotation", "deal_seed"] + [f"{k}_{s}" for k in ("agent", "score", "reward", "rank") for s in range(n)])
    for r in res["records"]:
        w.writerow([r["table"], r["deal"], r["rotation"], r["deal_seed"]] + r["agents"] + r["scores"] + [f"{x:.6g}" for x in r["rewards"]] + r["ranks"])
    return buf.getvalue()


def plot(res: dict, out: Path) -> list[Path]:
    """Ratings (OpenSkill μ ± 2σ, or mean score ± CI with two agents) and the pairwise heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = f"{res['game']}_{res['num_players']}p"
    names = res["agents"]
    paths = []
    fig, ax = plt.subplots(figsize=(max(3.5, 1.2 + 1.1 * len(names)), 3.2))
    if res.get("openskill"):
        mu = [res["openskill"][n]["mu"] for n in names]
        err = [2 * res["openskill"][n]["sigma"] for n in names]
        ax.set_ylabel("OpenSkill μ ± 2σ")
    else:
        mu = [res["overall"][n]["score"]["mean"] for n in names]
        err = [res["overall"][n]["score"]["half_width"] for n in names]
        ax.set_ylabel("score / game (95% CI)")
    ax.errorbar(range(len(names)), mu, yerr=err, fmt="o", capsize=4)
    ax.set_xticks(range(len(names)), names)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_title(f"{res['game']}, {res['num_players']} players")
    fig.tight_layout()
    p = out / f"{stem}_ratings.png"
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)

    k = len(names)
    m = np.full((k, k), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            pw = res["pairwise"].get(f"{a} vs {b}")
            if pw is not None and not math.isnan(pw["ahead"]):
                m[i, j] = pw["ahead"]
    fig, ax = plt.subplots(figsize=(max(4.5, 1.8 + 0.9 * k), max(3.5, 1.4 + 0.8 * k)))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="RdBu")
    for i in range(k):
        for j in range(k):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.0%}", ha="center", va="center", color="black")
    ax.set_xticks(range(k), names)
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(f"{res['game']} {res['num_players']}p: row ahead of column", fontsize=10)
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    p = out / f"{stem}_winrate.png"
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)
    return paths


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def write_reports(results: Sequence[dict], out: Path, plots: bool = True) -> list[Path]:
    """results.json, per game <game>_<n>p.csv (summary) and _games.csv (every game), results.md, PNGs."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    summary = [{k: v for k, v in r.items() if k != "records"} for r in results]
    p = out / "results.json"
    p.write_text(json.dumps(_jsonable(summary), indent=1) + "\n")
    written.append(p)
    for res in results:
        stem = f"{res['game']}_{res['num_players']}p"
        p = out / f"{stem}.csv"
        p.write_text(_csv_rows(res))
        written.append(p)
        if "records" in res:
            p = out / f"{stem}_games.csv"
            p.write_text(_games_csv(res))
            written.append(p)
        if plots:
            written += plot(res, out)
    p = out / "results.md"
    p.write_text(markdown(results))
    written.append(p)
    return written


# -- command line --------------------------------------------------------------
def parse_agents(text: str, parser: argparse.ArgumentParser) -> list[AgentSpec]:
    from agents import AGENT_KINDS

    names = [a.strip() for a in text.split(",") if a.strip()]
    if not names:
        parser.error(f"--agents is empty; valid agents: {', '.join(AGENT_KINDS)}")
    specs = []
    for a in names:
        # ppo:PATH plays a checkpoint that is not (yet) the shipped one, e.g. a run's final.pt
        if a.startswith("ppo:"):
            path = a[len("ppo:"):]
            if not os.path.isfile(path):
                parser.error(f"--agents {a!r}: no checkpoint file at {path!r}")
            specs.append(AgentSpec(name=a, kind="ppo", kwargs=(("checkpoint", path),)))
            continue
        if a not in AGENT_KINDS:
            parser.error(f"unknown agent {a!r}; valid agents: {', '.join(AGENT_KINDS)}, or ppo:PATH")
        specs.append(AgentSpec.of(a))
    return specs


def main(argv: Sequence[str] | None = None) -> int:
    import envs

    p = ArgumentParser(prog="python -m experiments.tournament", description="Duplicate-deal tournament between agents.")
    p.add_argument("--game", default="neu", help=f"one of: {', '.join(envs.GAMES)}")
    p.add_argument("--players", type=int, default=None, help="player count (default: the game's default)")
    p.add_argument("--agents", default="heuristic,random", help="comma-separated agent kinds (see --mode); ppo:PATH plays a checkpoint file")
    p.add_argument("--mode", default=None, help=f"how agents become tables: {', '.join(MODES)} (see module docstring)")
    p.add_argument("--games", type=int, default=500, help="deals per table; each is played once per seat rotation")
    p.add_argument("--workers", type=int, default=1, help="parallel processes (results do not depend on it)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plain", action="store_true", help="an independent deal per game instead of duplicate deals")
    p.add_argument("--out", default=None, help="folder for JSON/CSV/Markdown/PNG (default: results/tournament-<time>)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--save-replays", default=None, metavar="DIR", help="also write every game as DIR/*.replay.jsonl (see experiments.replay)")
    args = p.parse_args(argv)

    available = envs.available_games()
    if args.game not in available:
        p.error(f"unknown game {args.game!r}; valid games: {', '.join(available)}")
    if args.mode is not None and args.mode not in MODES:
        p.error(f"unknown mode {args.mode!r}; valid modes: {', '.join(MODES)}")
    if args.games < 1 or args.workers < 1:
        p.error("--games and --workers must be at least 1")
    specs = parse_agents(args.agents, p)
    try:
        n = check_game(args.game, args.players)
        make_tables(specs, n, args.mode)
        for s in distinct(specs):
            s.make(args.game, n, seed=0)
    except (ValueError, ImportError, FileNotFoundError) as e:
        p.error(str(e))
    res = run_tournament(args.game, specs, n, args.games, args.seed, args.workers, args.mode, not args.plain, progress=not args.quiet,
                         save_replays=args.save_replays)
    out = Path(args.out) if args.out else Path("results") / time.strftime("tournament-%Y%m%d-%H%M%S")
    write_reports([res], out, plots=not args.no_plots)
    print(markdown([res]), end="")
    print(f"{res['games_played']} games in {res['wall_s']:.1f} s; wrote {out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
