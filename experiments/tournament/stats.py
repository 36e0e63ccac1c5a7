"""Statistics of a tournament's records: per-agent means with CIs over deals, paired differences, forfeits.

The unit of every statistic is a deal at one table: for each agent, its mean
over all its seats in all rotations of that deal (see the package docstring).
"""

from __future__ import annotations

import copy
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


class _Games:
    """The records as arrays, in `deal_groups`' order (deals at tables as they first appear, each
    deal's games in record order): each agent's mean per game of every statistic (`_per_game`
    for all games at once). Sums run in the order `_per_game` and `_mean` add, so every
    statistic below is the same number as one added up game by game (tests/test_tournament.py
    checks this against the loops written out)."""

    def __init__(self, records: Sequence[dict], luck: bool = False) -> None:
        units: dict[tuple[int, int], int] = {}
        unit = np.array([units.setdefault((r["table"], r["deal"]), len(units)) for r in records], np.int64)
        self.order = np.argsort(unit, kind="stable")
        recs = [records[g] for g in self.order.tolist()]
        self.unit, self.units = unit[self.order], len(units)
        n = max((len(r["agents"]) for r in recs), default=0)
        # names and seat pairs in the order the loops meet them: deals, then games, then seats
        self.names: dict[str, int] = {}
        lineups: dict[tuple, np.ndarray] = {}
        lab = np.full((len(recs), n), -1, np.int64)
        for g, r in enumerate(recs):
            key = tuple(r["agents"])
            row = lineups.get(key)
            if row is None:
                row = lineups[key] = np.array([self.names.setdefault(a, len(self.names)) for a in key], np.int64)
            lab[g, :row.size] = row
        self.lineups, self.lab = lineups, lab
        G, A = len(recs), len(self.names)
        seated = lab >= 0
        even = all(row.size == n for row in lineups.values())

        def pad(key: str, fill: float = 0.0) -> np.ndarray:
            if even:  # every game has n seats (a tournament's): one conversion
                return np.array([r[key] for r in recs], np.float64).reshape(G, n)
            return np.array([list(r[key]) + [fill] * (n - len(r[key])) for r in recs], np.float64).reshape(G, n)
        ranks = pad("ranks", np.inf)
        scores = pad("scores")
        best = ranks.min(axis=1, keepdims=True) if n else ranks
        win = np.where(ranks == best, 1.0 / np.maximum((ranks == best).sum(axis=1, keepdims=True), 1), 0.0)
        flat = (np.arange(G)[:, None] * A + lab)[seated]
        self.count = np.bincount(flat, minlength=G * A).reshape(G, A)
        self.present = self.count > 0
        per = lambda x: np.bincount(flat, weights=x[seated], minlength=G * A).reshape(G, A) / np.maximum(self.count, 1)
        self.mean = {"score": per(scores), "reward": per(pad("rewards")), "win": per(win), "rank": per(ranks)}
        if luck:
            self.mean["adjusted"] = per(scores - pad("luck"))
        self.ranks = ranks

    def unit_means(self, x: np.ndarray, games: np.ndarray) -> np.ndarray:
        """Per deal: the mean of x over its games in ``games`` (bool), for the deals that have any."""
        u = self.unit[games]
        total = np.bincount(u, weights=x[games], minlength=self.units)
        count = np.bincount(u, minlength=self.units)
        return total[count > 0] / count[count > 0]


def _adjusted(records: Sequence[dict]) -> bool:
    """Whether every record carries its luck correction (the adjusted estimator's)."""
    return bool(records) and all("luck" in r for r in records)


def agent_stats(records: Sequence[dict], games: _Games | None = None) -> dict[str, dict]:
    """Per agent: each statistic's mean and CI over (table, deal) units (``games``: the records
    as arrays, when the caller has them)."""
    t = _Games(records) if games is None else games
    out = {}
    for name, a in t.names.items():
        games = t.present[:, a]
        out[name] = {**{k: mean_ci(t.unit_means(t.mean[k][:, a], games)) for k in STATS}, "games": int(games.sum())}
    return out


def variance_reduction(var_plain: float, var_duplicate: float) -> float:
    """var_plain / var_duplicate; infinite when the per-deal differences cancel exactly (two agents
    that make the same moves: only rounding is left of var_duplicate), NaN when undefined."""
    if not var_plain > 0:
        return float("nan")
    return float("inf") if var_duplicate <= 1e-12 * var_plain else var_plain / var_duplicate


def pairwise(records: Sequence[dict], names: Sequence[str], games: _Games | None = None) -> dict:
    """For every ordered pair that met: score difference (paired by deal) with CI,
    share of finishing ahead (ties 1/2), and the variance reduction of duplicate deals."""
    adjusted = _adjusted(records)
    t = _Games(records, luck=adjusted) if games is None else games
    pairs: dict[tuple[int, int], None] = {}  # in the order the games meet them
    for row in t.lineups.values():
        seen = list(dict.fromkeys(row.tolist()))
        for p in itertools.permutations(seen, 2):
            pairs.setdefault(p)
    # finishing ahead, per pair of seats (in permutation order) of every game, game by game
    seat_pairs = list(itertools.permutations(range(t.lab.shape[1]), 2))
    first = t.lab[:, [i for i, _ in seat_pairs]] if seat_pairs else np.zeros((len(t.lab), 0), np.int64)
    second = t.lab[:, [j for _, j in seat_pairs]] if seat_pairs else first
    ri = t.ranks[:, [i for i, _ in seat_pairs]] if seat_pairs else np.zeros(first.shape)
    rj = t.ranks[:, [j for _, j in seat_pairs]] if seat_pairs else ri
    ahead_all = np.where(ri < rj, 1.0, np.where(ri == rj, 0.5, 0.0))
    by_name = {i: name for name, i in t.names.items()}
    out = {}
    for a, b in pairs:
        games = t.present[:, a] & t.present[:, b]
        diff = t.mean["score"][:, a] - t.mean["score"][:, b]
        u = t.unit_means(diff, games)
        per_game = diff[games]
        var_dup = float(u.var(ddof=1) / len(u)) if len(u) > 1 else float("nan")
        var_plain = float(per_game.var(ddof=1) / len(per_game)) if len(per_game) > 1 else float("nan")
        met = (first == a) & (second == b)
        A, B = by_name[a], by_name[b]
        out[f"{A} vs {B}"] = {
            "a": A,
            "b": B,
            "score_diff": mean_ci(u),
            "ahead": float(np.mean(ahead_all[met])) if met.any() else float("nan"),
            "var_duplicate": var_dup,
            "var_plain": var_plain,
            "variance_reduction": variance_reduction(var_plain, var_dup),
        }
        if adjusted:
            ua = t.unit_means(t.mean["adjusted"][:, a] - t.mean["adjusted"][:, b], games)
            var_adj = float(ua.var(ddof=1) / len(ua)) if len(ua) > 1 else float("nan")
            out[f"{A} vs {B}"].update({
                "adjusted_diff": mean_ci(ua),  # the same difference from luck-adjusted scores
                "var_adjusted": var_adj,
                "adjusted_ratio": var_adj / var_plain if var_plain > 0 else float("nan"),  # of the games plain deals need
                "adjusted_reduction": variance_reduction(var_plain, var_adj),
            })
    return out


def summarize(records: Sequence[dict], tables: Sequence[Sequence[AgentSpec]], game: str, num_players: int, **config: Any) -> dict:
    names = [s.name for s in distinct(s for t in tables for s in t)]
    games = _Games(records, luck=_adjusted(records))  # the records as arrays, once for both
    overall, pairs = agent_stats(records, games), pairwise(records, names, games)
    per_table = []
    for t, table in enumerate(tables):
        recs = [r for r in records if r["table"] == t]
        if len(recs) == len(records):  # one table: its statistics are the overall ones
            per_table.append({"lineup": [s.name for s in table], "agents": copy.deepcopy(overall), "pairwise": copy.deepcopy(pairs)})
            continue
        per_table.append({"lineup": [s.name for s in table], "agents": agent_stats(recs), "pairwise": pairwise(recs, names)})
    return {
        "game": game,
        "num_players": num_players,
        "agents": names,
        "games_played": len(records),
        **config,
        "overall": overall,
        "pairwise": pairs,
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
