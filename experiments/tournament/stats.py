"""Statistics of a tournament's records: per-agent means with CIs over deals, paired differences, forfeits.

The unit of every statistic is a deal at one table: for each agent, its mean
over all its seats in all rotations of that deal (see the package docstring).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

from experiments.tournament import ratings
from experiments.tournament.seating import AgentSpec, distinct

Z95 = 1.959963984540054  # two-sided 95% normal quantile
STATS = ("score", "reward", "win", "rank")


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
    ranks, scores, rewards = rec["ranks"], rec["scores"], rec["rewards"]
    best = min(ranks)
    share = 1.0 / ranks.count(best)  # first place, ties shared (as win_shares)
    sums: dict[str, list] = {}
    for s, name in enumerate(rec["agents"]):
        win = share if ranks[s] == best else 0.0
        d = sums.get(name)
        if d is None:
            sums[name] = [scores[s], rewards[s], win, ranks[s], 1]
        else:
            d[0] += scores[s]
            d[1] += rewards[s]
            d[2] += win
            d[3] += ranks[s]
            d[4] += 1
    return {name: {"score": float(d[0]) / d[4], "reward": float(d[1]) / d[4], "win": float(d[2]) / d[4], "rank": float(d[3]) / d[4]}
            for name, d in sums.items()}


def _mean(v: Sequence[float]) -> float:
    # Plain Python: these lists hold a few numbers, and np.mean costs more than the sum (a tournament has ~10^5 of them).
    return float(sum(v)) / len(v)


def deal_groups(records: Sequence[dict]) -> dict[tuple[int, int], list[dict]]:
    """The games of each deal at each table: the unit every statistic averages over."""
    units: dict[tuple[int, int], list[dict]] = {}
    for rec in records:
        units.setdefault((rec["table"], rec["deal"]), []).append(rec)
    return units


def agent_stats(records: Sequence[dict]) -> dict[str, dict]:
    """Per agent: each statistic's mean and CI over (table, deal) units."""
    per_unit: dict[str, dict[str, list[float]]] = {}
    games: dict[str, int] = {}
    for recs in deal_groups(records).values():
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
                u[k].append(_mean(d[k]))
    return {name: {**{k: mean_ci(u[k]) for k in STATS}, "games": games[name]} for name, u in per_unit.items()}


def variance_reduction(var_plain: float, var_duplicate: float) -> float:
    """var_plain / var_duplicate; infinite when the per-deal differences cancel exactly (two agents
    that make the same moves: only rounding is left of var_duplicate), NaN when undefined."""
    if not var_plain > 0:
        return float("nan")
    return float("inf") if var_duplicate <= 1e-12 * var_plain else var_plain / var_duplicate


def pairwise(records: Sequence[dict], names: Sequence[str]) -> dict:
    """For every ordered pair that met: score difference (paired by deal) with CI,
    share of finishing ahead (ties 1/2), and the variance reduction of duplicate deals."""
    diff_unit: dict[tuple[str, str], list[float]] = {}
    diff_game: dict[tuple[str, str], list[float]] = {}
    ahead: dict[tuple[str, str], list[float]] = {}
    adjusted = bool(records) and all("luck" in r for r in records)
    adj_unit: dict[tuple[str, str], list[float]] = {}
    for recs in deal_groups(records).values():
        acc: dict[tuple[str, str], list[float]] = {}
        adj: dict[tuple[str, str], list[float]] = {}
        for rec in recs:
            pg = _per_game(rec)
            for a, b in itertools.permutations(pg, 2):
                d = pg[a]["score"] - pg[b]["score"]
                acc.setdefault((a, b), []).append(d)
                diff_game.setdefault((a, b), []).append(d)
            if adjusted:
                pa = _per_game({**rec, "scores": [s - c for s, c in zip(rec["scores"], rec["luck"])]})
                for a, b in itertools.permutations(pa, 2):
                    adj.setdefault((a, b), []).append(pa[a]["score"] - pa[b]["score"])
            for i, j in itertools.permutations(range(len(rec["agents"])), 2):
                a, b = rec["agents"][i], rec["agents"][j]
                if a != b:
                    ri, rj = rec["ranks"][i], rec["ranks"][j]
                    ahead.setdefault((a, b), []).append(1.0 if ri < rj else 0.5 if ri == rj else 0.0)
        for k, v in acc.items():
            diff_unit.setdefault(k, []).append(_mean(v))
        for k, v in adj.items():
            adj_unit.setdefault(k, []).append(_mean(v))
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
            "variance_reduction": variance_reduction(var_plain, var_dup),
        }
        if adjusted:
            ua = np.asarray(adj_unit[(a, b)])
            var_adj = float(ua.var(ddof=1) / len(ua)) if len(ua) > 1 else float("nan")
            out[f"{a} vs {b}"].update({
                "adjusted_diff": mean_ci(ua),  # the same difference from luck-adjusted scores
                "var_adjusted": var_adj,
                "adjusted_ratio": var_adj / var_plain if var_plain > 0 else float("nan"),  # of the games plain deals need
                "adjusted_reduction": variance_reduction(var_plain, var_adj),
            })
    return out


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
        "ratings": ratings.bradley_terry(records, names),
        "forfeits": forfeits(records, names),
        "tables": per_table,
    }


def forfeits(records: Sequence[dict], names: Sequence[str]) -> dict[str, int]:
    """Games each agent lost by forfeit (with ``on_error="forfeit"``)."""
    out = {n: 0 for n in names}
    for r in records:
        if r.get("forfeit"):
            out[r["forfeit"]["agent"]] = out.get(r["forfeit"]["agent"], 0) + 1
    return out
