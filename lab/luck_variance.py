"""What the luck-adjusted estimator buys: per game, the variance of a pair's difference under
plain, duplicate and adjusted scores, the cost of the corrections, and (``--plot``) the 95% CI
half-width against the number of deals for the three estimators, one panel per game.

    python -m lab.luck_variance --deals 30 --plot luck.png
    python -m lab.luck_variance --repeats 20 --deals 2000 --agents heuristic,random   # unbiased?

The games are played once on the batched engine with their moves recorded; the corrections are
then computed from the moves for the values V (`experiments.tournament.luck`): the one a
tournament of the pair uses (`value_for`: the learned value where one knows the pair), the linear
fit where that differs, and the score alone; on the batched engine as the tournament does
(`batched_corrections`), or with ``--readable`` on the readable engine with every draw enumerated
(`corrections`). "plain" is the per-game variance of the same games, the
variance independent deals would have (as the tournament's "plain deals need ×k games").
"""

from __future__ import annotations

import argparse
import time
from typing import Sequence

import numpy as np

from experiments.tournament import luck, runner, stats, vector

LINEUPS = (("neu", 4), ("not_for_me", 4), ("deadfall", 4), ("not_your_mas_jong", 4), ("not_your_mas_jong", 3))


def measure(game: str, n: int, agents: Sequence[str], deals: int, seed: int, with_score: bool = True,
            readable: bool = False) -> dict:
    tables = runner.make_tables_checked(list(agents), game, n, None)
    vt = vector.choose_tables(game, tables, n, "auto")
    job = runner.Job(game, n, (), seed, True, tuple((0, d) for d in range(deals)), record_moves=True, vector_tables=vt)
    t0 = time.perf_counter()
    recs = runner.play_job(job, tables)
    play_s = time.perf_counter() - t0
    a, b = tables[0][0].name, tables[0][1].name
    out = {"game": game, "players": n, "pair": f"{a} vs {b}", "games": len(recs), "play_ms": 1000 * play_s / len(recs)}
    values = [("fitted", luck.value_for(game, n, agents)), ("linear", luck.LinearValue.load(game, n)), ("score", luck.LinearValue())]
    if not isinstance(values[0][1], luck.NetValue):  # the tournament's V is the linear one
        values.pop(1)
    for label, value in values if with_score else values[:-1]:
        t0 = time.perf_counter()
        if readable:  # every draw enumerated, one game at a time on the readable engine
            for r in recs:
                v = value.seated(r["agents"]) if isinstance(value, luck.NetValue) else value
                r["luck"] = luck.corrections(game, n, None, r["deal_seed"], r["moves"], v, seed=seed)
        else:  # as the tournament corrects: every game side by side on the batched engine
            for r, c in zip(recs, luck.batched_corrections(game, n, None, recs, value, seed=seed)):
                r["luck"] = c
        out[f"{label}_ms"] = 1000 * (time.perf_counter() - t0) / len(recs)
        p = stats.pairwise(recs, [a, b])[f"{a} vs {b}"]
        out.update({"diff": p["score_diff"], "var_plain": p["var_plain"], "var_duplicate": p["var_duplicate"],
                    f"{label}_diff": p["adjusted_diff"], f"{label}_ratio": p["adjusted_ratio"]})
        out[f"{label}_units"] = _units(recs, a, b, adjusted=True)
    out["dup_units"] = _units(recs, a, b, adjusted=False)
    out["plain_games"] = [pa[a]["score"] - pa[b]["score"] for pa in (stats._per_game(r) for r in recs)]
    return out


def _units(recs: list[dict], a: str, b: str, adjusted: bool) -> list[float]:
    units = []
    for group in stats.deal_groups(recs).values():
        d = []
        for r in group:
            if adjusted:
                r = {**r, "scores": luck.adjusted_scores(r)}
            pg = stats._per_game(r)
            d.append(pg[a]["score"] - pg[b]["score"])
        units.append(sum(d) / len(d))
    return units


def unbiased(game: str, n: int, agents: Sequence[str], deals: int, repeats: int) -> dict:
    """`repeats` independent runs (seeds 0..repeats-1): per run, the mean over deals of the adjusted
    minus the duplicate difference (the correction's share of it, which must average zero) and its
    standard error; z = their pooled mean over its standard error."""
    means, ses = [], []
    for seed in range(repeats):
        r = measure(game, n, agents, deals, seed, with_score=False)
        d = np.asarray(r["fitted_units"]) - np.asarray(r["dup_units"])
        means.append(d.mean())
        ses.append(d.std(ddof=1) / np.sqrt(len(d)))
    means, ses = np.asarray(means), np.asarray(ses)
    se = float(np.sqrt((ses ** 2).sum())) / repeats
    return {"game": game, "players": n, "runs": repeats, "deals": deals, "mean": float(means.mean()), "se": se,
            "z": float(means.mean() / se) if se > 0 else 0.0}


def _running_half_width(x: Sequence[float], per_deal: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, float)
    k = np.arange(2, len(x) + 1)
    sd = np.array([x[:m].std(ddof=1) for m in k])
    return k / per_deal, stats.Z95 * sd / np.sqrt(k)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(rows), figsize=(4 * len(rows), 3.2))
    for ax, r in zip(np.atleast_1d(axes), rows):
        n = r["players"]
        for label, x, per in (("plain", r["plain_games"], n), ("duplicate", r["dup_units"], 1), ("adjusted", r["fitted_units"], 1)):
            d, h = _running_half_width(x, per)
            ax.plot(d, h, label=label)
        ax.set_title(f"{r['game']} {n}p: {r['pair']}", fontsize=8)
        ax.set_xlabel("deals")
        ax.set_ylabel("95% CI half-width")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m lab.luck_variance", description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--agents", default="ppo,heuristic")
    p.add_argument("--games", default=None, help="game:players,... (default: every game at 4, Ma's Jong also at 3)")
    p.add_argument("--plot", default=None, metavar="PNG")
    p.add_argument("--fitted-only", action="store_true", help="skip V = the score alone (half the time)")
    p.add_argument("--readable", action="store_true",
                   help="correct on the readable engine, every draw enumerated, one game at a time (the tournament "
                        "corrects on the batched engine)")
    p.add_argument("--repeats", type=int, default=None, metavar="R",
                   help="instead: R independent runs per game, and whether adjusted minus duplicate averages zero (|z| < 2)")
    a = p.parse_args(argv)
    if a.deals < 2:
        p.error("--deals must be at least 2")
    lineups = [(g, int(k)) for g, k in (x.split(":") for x in a.games.split(","))] if a.games else LINEUPS
    if a.repeats is not None:
        print("| game | players | runs × deals | adjusted − duplicate, mean | its SE | z |\n|---|---|---|---|---|---|")
        for g, n in lineups:
            u = unbiased(g, n, a.agents.split(","), a.deals, a.repeats)
            print(f"| {g} | {n} | {u['runs']} × {u['deals']} | {u['mean']:+.4g} | {u['se']:.3g} | {u['z']:+.2f} |", flush=True)
        return
    rows = []
    print("| game | players | pair | games | diff (duplicate) | adjusted diff | var ratio dup/plain | adjusted/plain (fitted V) "
          "| adjusted/plain (linear V) | adjusted/plain (score V) | ms/game batched | + corrections ms/game (fitted, score) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for g, n in lineups:
        r = measure(g, n, a.agents.split(","), a.deals, a.seed, not a.fitted_only, a.readable)
        rows.append(r)
        print(f"| {g} | {n} | {r['pair']} | {r['games']} | {r['diff']['mean']:+.3g} ± {r['diff']['half_width']:.2g} | "
              f"{r['fitted_diff']['mean']:+.3g} ± {r['fitted_diff']['half_width']:.2g} | {r['var_duplicate'] / r['var_plain']:.3f} | "
              f"{r['fitted_ratio']:.3f} | {r.get('linear_ratio', r['fitted_ratio']):.3f} | {r.get('score_ratio', float('nan')):.3f} | {r['play_ms']:.2f} | "
              f"{r['fitted_ms']:.1f}, {r.get('score_ms', float('nan')):.1f} |", flush=True)
    if a.plot:
        plot(rows, a.plot)


if __name__ == "__main__":
    main()
