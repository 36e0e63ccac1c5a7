"""The tournament's statistics (`experiments.tournament.stats`, computed on arrays) against the
same statistics added up game by game, as loops: the same numbers to the bit, the same order."""

from __future__ import annotations

import itertools
import json
from typing import Sequence

import numpy as np
import pytest

from experiments.tournament.stats import STATS, _mean, _per_game, agent_stats, deal_groups, mean_ci, pairwise, variance_reduction


# -- the loops: every statistic added up game by game -------------------------------------------
def loop_agent_stats(records: Sequence[dict]) -> dict[str, dict]:
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


def loop_pairwise(records: Sequence[dict], names: Sequence[str]) -> dict:
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


def _records(seed: int, luck: bool) -> list[dict]:
    """Games at two tables whose deals come in mixed order, with shared places, repeated names,
    forfeits and (with `luck`) luck terms: every case the statistics treat apart."""
    rng = np.random.default_rng(seed)
    lineups = [["a", "b", "b", "c"], ["c", "a", "d", "a"]]
    recs = []
    for _ in range(60):
        t, deal, rot = int(rng.integers(2)), int(rng.integers(7)), int(rng.integers(4))
        agents = lineups[t][rot:] + lineups[t][:rot]
        scores = [int(x) for x in rng.integers(-3, 4, size=4)]
        ranks = [1 + sum(o > s for o in scores) for s in scores]
        rec = {"table": t, "deal": deal, "rotation": rot, "deal_seed": deal, "agents": agents, "scores": scores,
               "ranks": ranks, "rewards": [float(x) for x in rng.normal(size=4)], "forfeit": None}
        if rng.random() < 0.1:
            rec.update(scores=[0] * 4, ranks=[1, 1, 4, 1], forfeit={"seat": 2, "error": "x", "agent": agents[2]})
        if luck:
            rec["luck"] = [float(x) for x in rng.normal(size=4)]
        recs.append(rec)
    return recs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("luck", [False, True])
def test_the_statistics_are_the_loops_numbers_in_the_loops_order(seed, luck):
    recs = _records(seed, luck)
    assert json.dumps(agent_stats(recs)) == json.dumps(loop_agent_stats(recs))
    assert json.dumps(pairwise(recs, [])) == json.dumps(loop_pairwise(recs, []))


def test_the_statistics_of_no_games_and_of_one_game():
    assert agent_stats([]) == loop_agent_stats([]) == {}
    assert pairwise([], []) == {}
    one = _records(0, False)[:1]
    assert json.dumps(agent_stats(one)) == json.dumps(loop_agent_stats(one))
    assert json.dumps(pairwise(one, [])) == json.dumps(loop_pairwise(one, []))
