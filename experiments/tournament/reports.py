"""Reports of tournament results: the Markdown table, CSVs, plots and results.json."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from experiments.tournament.stats import STATS


def _fmt(s: dict, digits: int = 2) -> str:
    if math.isnan(s["half_width"]):
        return f"{s['mean']:.{digits}f}"
    return f"{s['mean']:.{digits}f} ± {s['half_width']:.{digits}f}"


ENGINE_WORDS = {
    "vector": "the batched engine",
    "aec": "one env per game",
    "vector+aec": "the batched engine where every agent at a table acts in batches, one env per game elsewhere",
}

COLUMN_NOTES = """\
What the columns mean:

- **score / game**: the game's own final score (chips, points, tokens: `infos["final_scores"]`), an absolute amount.
- **reward / game**: the sum of the env's rewards, each a score change minus the table's mean change, so rewards
  sum to zero at every table: an agent can end with a positive score and a negative reward when the others did better, or the reverse.
- **win rate**: share of games finished first (ties shared); **mean rank**: 1 = best.
- **rating [95% CI]**: a Bradley–Terry rating on the Elo scale (the agents average 0), fitted to every comparison of two
  agents at a game at once (the better rank wins it, ties count half), so it does not depend on the order of the games;
  100 points apart means the higher finishes ahead of the lower in 64% of their comparisons, 200 points in 76%. The
  interval is a bootstrap over deals. It sums up the "A ahead of B" shares below; the score differences measure the
  game's own currency and can order two agents differently (one that wins small pots often and loses big ones).
- **games**: games the agent played (every seat of every deal).
- **score diff A − B**: mean over deals of A's score minus B's, on the same cards (paired).
- **A ahead of B**: share of games where A finished above B (ties count 1/2).
- **plain deals need ×k games**: to reach the CI of this duplicate-deal design, independent deals would need k times as many
  games; k > 1 means duplicate deals help, k < 1 that they cost precision for this pair; ∞: the pair's differences
  cancel exactly on every deal (two agents that make the same moves), so any number of plain deals is worse.
- ± is a 95% confidence interval (normal, over per-deal means); every agent sits in every seat of every deal.
"""


def _rating(r: dict) -> str:
    return f"{r['rating']:+.0f} [{r['ci_low']:+.0f}, {r['ci_high']:+.0f}]"


def markdown(results: Sequence[dict], notes: bool = True) -> str:
    """One table for all results: a row per game, player count and agent, plus pairwise score differences,
    then what each column means."""
    # The optional column of `experiments.compare --exploit-steps`: a best response's edge over each agent.
    exploited = [res for res in results if res.get("exploitability")]
    extra = " best-response edge |" if exploited else ""
    lines = [
        "| game | players | agent | score / game | reward / game | win rate | mean rank | rating [95% CI] | games |" + extra,
        "|---|---|---|---|---|---|---|---|---|" + ("---|" if exploited else ""),
    ]
    for res in results:
        rated = res.get("ratings") or {}
        lost = res.get("forfeits") or {}
        edges = res.get("exploitability") or {}
        for name in res["agents"]:
            s = res["overall"][name]
            sk = _rating(rated[name]) if name in rated else "–"
            games = f"{s['games']}" + (f" ({lost[name]} forfeited)" if lost.get(name) else "")
            edge = f" {edges[name]['edge']:+.3g} ± {edges[name]['edge_ci']:.2g} |" if name in edges else (" – |" if exploited else "")
            lines.append(
                f"| {res['game']} | {res['num_players']} | {name} | {_fmt(s['score'])} | {_fmt(s['reward'])} | "
                f"{_fmt(s['win'])} | {_fmt(s['rank'])} | {sk} | {games} |{edge}"
            )
    for res in results:  # agents in groups that never met are rated on separate scales: say so
        rated = res.get("ratings") or {}
        parts: dict = {}
        for name, r in rated.items():
            if "group" in r:
                parts.setdefault(r["group"], []).append(name)
        if parts:
            lines.append("")
            lines.append(f"{res['game']}, {res['num_players']} players: the agents fall into {len(parts)} groups that never met "
                         "(even through others), each rated on its own scale (mean 0 within it); ratings of two groups "
                         "cannot be compared: " + "; ".join(f"group {g}: {', '.join(v)}" for g, v in sorted(parts.items())) + ".")
    for res in exploited:
        e = next(iter(res["exploitability"].values()))
        lines += ["", f"Best-response edge, {res['game']} {res['num_players']}p: a PPO best response trained from scratch "
                      f"against each agent for {e['budget']}, then its mean score minus the agent's own in the same seat "
                      f"on {e['deals']} held-out duplicate deals, ± 95% CI (`experiments.exploit`)."]
    lines += ["", "| game | players | A vs B | score diff A − B | A ahead of B | plain deals need ×k games | deals × tables |", "|---|---|---|---|---|---|---|"]
    for res in results:
        names = res["agents"]
        for a, b in itertools.combinations(names, 2):
            p = res["pairwise"].get(f"{a} vs {b}")
            if p is None:
                continue
            d = p["score_diff"]
            k = p["variance_reduction"]
            lines.append(
                f"| {res['game']} | {res['num_players']} | {a} vs {b} | {_fmt(d)} | {p['ahead']:.1%} | "
                f"{'–' if k is None or math.isnan(k) else '∞' if math.isinf(k) else f'×{k:.2f}'} | {d['n']} |"
            )
    lines += _adjusted_lines(results)
    lines.append("")
    engines = [f"{res['game']} {res['num_players']}p played on: {res['engine']} ({ENGINE_WORDS[res['engine']]})"
               for res in results if res.get("engine") in ENGINE_WORDS]
    if engines:
        lines += ["; ".join(engines), ""]
    if notes:
        lines.append(COLUMN_NOTES)
    return "\n".join(lines).rstrip("\n") + "\n"


def _adjusted_lines(results: Sequence[dict]) -> list[str]:
    """With ``estimator="adjusted"``: each pair's plain and luck-adjusted difference side by side."""
    rows = []
    for res in results:
        for a, b in itertools.combinations(res["agents"], 2):
            p = res["pairwise"].get(f"{a} vs {b}")
            if p is None or "adjusted_diff" not in p:
                continue
            r = p["adjusted_ratio"]
            rows.append(f"| {res['game']} | {res['num_players']} | {a} vs {b} | {_fmt(p['score_diff'])} | {_fmt(p['adjusted_diff'])} | "
                        f"{'–' if math.isnan(r) else f'{r:.3f}'} | {p['adjusted_diff']['n']} |")
    if not rows:
        return []
    return ["", "Luck-adjusted (`--estimator adjusted`): each game's score minus the luck of its chance events "
                "(docs/benchmarking.md); variance ratio = the adjusted variance over that of plain deals, "
                "the share of the games plain deals need for the same CI.", "",
            "| game | players | A vs B | score diff A − B | adjusted diff A − B | variance ratio adjusted / plain | deals × tables |",
            "|---|---|---|---|---|---|---|"] + rows


def _csv_rows(res: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["game", "players", "table", "agent", "games"] + [f"{k}_{p}" for k in STATS for p in ("mean", "ci_low", "ci_high")] + ["rating", "rating_ci_low", "rating_ci_high"])
    rated = res.get("ratings") or {}
    blocks = [("all", res["overall"])] + [(" ".join(t["lineup"]), t["agents"]) for t in res["tables"]]
    for label, stats in blocks:
        for name, s in stats.items():
            sk = rated.get(name, {}) if label == "all" else {}
            w.writerow(
                [res["game"], res["num_players"], label, name, s["games"]]
                + [f"{s[k][p]:.6g}" for k in STATS for p in ("mean", "ci_low", "ci_high")]
                + [f"{sk[k]:.6g}" if sk else "" for k in ("rating", "ci_low", "ci_high")]
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


def _tick_label(name: str, width: int = 14) -> str:
    """Long labels (``ppo:runs/x/final.pt``) broken over lines so that ticks never overlap."""
    import textwrap

    if len(name) <= width:
        return name
    return "\n".join(textwrap.wrap(name.replace("/", "/ "), width, break_long_words=True)).replace("/ ", "/")


def plot(res: dict, out: Path) -> list[Path]:
    """Ratings (with their 95% intervals, as in the table; mean score ± 95% CI when there are none) and the pairwise heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = f"{res['game']}_{res['num_players']}p"
    names = res["agents"]
    ticks = [_tick_label(n) for n in names]
    lines = max(t.count("\n") + 1 for t in ticks)
    paths = []
    fig, ax = plt.subplots(figsize=(max(4.5, 1.5 + 1.3 * len(names)), 3.4 + 0.25 * lines), layout="constrained")
    if res.get("ratings"):
        rated = res["ratings"]
        none = {"rating": float("nan"), "ci_low": float("nan"), "ci_high": float("nan")}  # an agent without games
        mu = [rated.get(n, none)["rating"] for n in names]
        err = [[rated.get(n, none)["rating"] - rated.get(n, none)["ci_low"] for n in names],
               [rated.get(n, none)["ci_high"] - rated.get(n, none)["rating"] for n in names]]
        ax.set_ylabel("rating (Elo scale, 95% CI)")
    else:
        mu = [res["overall"][n]["score"]["mean"] for n in names]
        err = [0.0 if math.isnan(h := res["overall"][n]["score"]["half_width"]) else h for n in names]
        ax.set_ylabel("score / game (± 95% CI)")
    ax.errorbar(range(len(names)), mu, yerr=err, fmt="o", capsize=4)
    ax.set_xticks(range(len(names)), ticks, fontsize=9)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{res['game']}, {res['num_players']} players", fontsize=11)
    p = out / f"{stem}_ratings.png"
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)

    k = len(names)
    m = np.full((k, k), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            pw = res["pairwise"].get(f"{a} vs {b}")
            if pw is not None and pw["ahead"] is not None and not math.isnan(pw["ahead"]):
                m[i, j] = pw["ahead"]
    fig, ax = plt.subplots(figsize=(max(5.0, 2.6 + 1.0 * k), max(4.0, 2.0 + 0.8 * k + 0.2 * lines)), layout="constrained")
    cmap = plt.get_cmap("RdBu")
    im = ax.imshow(m, vmin=0, vmax=1, cmap=cmap)
    for i in range(k):
        for j in range(k):
            if not np.isnan(m[i, j]):
                r, g, b, _ = cmap(m[i, j])
                dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # perceived brightness of the cell
                ax.text(j, i, f"{m[i, j]:.0%}", ha="center", va="center", color="white" if dark else "black")
    ax.set_xticks(range(k), ticks, fontsize=9)
    ax.set_yticks(range(k), ticks, fontsize=9)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(f"{res['game']}, {res['num_players']} players:\nshare of games the row finished ahead of the column", fontsize=10)
    fig.colorbar(im, ax=ax, shrink=0.8, label="row ahead of column")
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


def write_reports(results: Sequence[dict], out: Path, plots: bool = True, metadata: dict | None = None,
                  header: str = "", notes: Sequence[str] = ()) -> list[Path]:
    """results.json, per game <game>_<n>p.csv (summary) and _games.csv (every game), results.md, PNGs.

    ``metadata`` (`experiments.cli.run_metadata`: command, seed, versions, commit)
    is stored with every result in results.json under "run"."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    summary = [{**{k: v for k, v in r.items() if k != "records"}, **({"run": metadata} if metadata else {})} for r in results]
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
    p.write_text(header + markdown(results) + "".join(f"\nNote: {x}" for x in notes) + ("\n" if notes else ""))
    written.append(p)
    return written
