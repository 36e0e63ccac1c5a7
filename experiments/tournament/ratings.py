"""Ratings that depend on the set of games, not their order: a Bradley–Terry fit with bootstrap CIs over deals.

Every game compares each two agents that sit at it: the one with the better
rank wins that comparison, a tie counts half to each (the same comparisons as
the "A ahead of B" share of `stats.pairwise`). A Bradley–Terry model gives
agent ``a`` a strength ``p_a`` and says ``a`` finishes ahead of ``b`` with
probability ``p_a / (p_a + p_b)``; the strengths are the maximum-likelihood fit
to all comparisons at once (Hunter's MM iteration), so they are a function of
the games alone: feeding them in another order changes nothing. Reported as a
rating on the Elo scale, ``400 · log10(p_a)``, centred so that the agents
average 0: 100 points apart means the stronger finishes ahead of the weaker
in 64% of their comparisons, 200 points in 76%.

Each pair of agents that met gets one drawn comparison of prior weight, so
that an agent that never (or always) finishes ahead still has a finite
rating; it is symmetric, so it moves no agent towards or away from another.

The 95% interval is a bootstrap over deals: the (table, deal) units (every
rotation of a deal, as in the other statistics) are drawn with replacement
``BOOTSTRAP`` times, the fit is repeated on each draw, and the 2.5th and
97.5th percentiles are the interval. The draws use a fixed seed and the units
in a fixed order, so the interval too is the same for any order of the games.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

SCALE = 400 / math.log(10)  # Elo points per unit of log-strength
BOOTSTRAP = 200  # resamples of the deals for the interval
PRIOR_DRAWS = 1.0  # drawn comparisons added to each pair that met
TOLERANCE = 1e-10
MAX_ITERATIONS = 20_000


def comparisons(records: Sequence[dict], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per (table, deal) unit, in a fixed order: ``wins[u, a, b]`` (a ahead of b, ties 1/2) and
    ``met[u, a, b]`` (comparisons of a and b; symmetric)."""
    index = {n: i for i, n in enumerate(names)}
    units: dict = {}
    k = len(names)
    for rec in records:
        key = (repr(rec["table"]), rec["deal"])
        if key not in units:
            units[key] = (np.zeros((k, k)), np.zeros((k, k)))
        wins, met = units[key]
        agents, ranks = rec["agents"], rec["ranks"]
        for i, a in enumerate(agents):
            for j, b in enumerate(agents):
                if a != b:
                    ia, ib = index[a], index[b]
                    wins[ia, ib] += 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                    met[ia, ib] += 1.0
    order = sorted(units)  # the order of the games does not matter, only the set
    if not order:
        return np.zeros((0, k, k)), np.zeros((0, k, k))
    return np.stack([units[u][0] for u in order]), np.stack([units[u][1] for u in order])


def fit(wins: np.ndarray, met: np.ndarray) -> np.ndarray:
    """Log-strengths (mean 0) of the Bradley–Terry maximum-likelihood fit; ``wins`` and ``met`` are
    ``[..., k, k]`` (a leading batch of independent fits is allowed)."""
    met_any = (met > 0).astype(float)
    w = wins + 0.5 * PRIOR_DRAWS * met_any
    m = met + PRIOR_DRAWS * met_any
    total_wins = w.sum(axis=-1)
    p = np.ones(w.shape[:-1])
    for _ in range(MAX_ITERATIONS):
        denom = (m / (p[..., :, None] + p[..., None, :])).sum(axis=-1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1.0), 1.0)
        new = new / np.exp(np.log(new).mean(axis=-1, keepdims=True))
        done = np.max(np.abs(new - p) / new) < TOLERANCE
        p = new
        if done:
            break
    return np.log(p)


def bradley_terry(records: Sequence[dict], names: Sequence[str], min_agents: int = 2, bootstrap: int = BOOTSTRAP,
                  seed: int = 0) -> dict | None:
    """Per agent: ``rating`` (Elo scale, mean 0) with its 95% bootstrap interval over deals; None with
    fewer than `min_agents` agents or no comparisons."""
    if len(names) < min_agents:
        return None
    wins, met = comparisons(records, names)
    if not met.any():
        return None
    rating = SCALE * fit(wins.sum(axis=0), met.sum(axis=0))
    counts = np.random.default_rng(seed).multinomial(len(wins), np.full(len(wins), 1 / len(wins)), size=bootstrap).astype(float)
    draws = SCALE * fit(np.einsum("bu,uij->bij", counts, wins), np.einsum("bu,uij->bij", counts, met))
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    return {n: {"rating": float(rating[i]), "ci_low": float(low[i]), "ci_high": float(high[i])} for i, n in enumerate(names)}
