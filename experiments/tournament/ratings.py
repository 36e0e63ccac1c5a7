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

The fit reads per-pair sums only (wins and comparisons of each pair that
met, and per deal for the bootstrap, stored sparsely), so memory grows with
the pairs that meet, not with deals x agents squared. An agent with no games
has no rating (no entry). Agents that fall into groups that never met, even
through others, cannot be put on one scale: each group is fitted on its own
(mean 0 within it), each rating says its ``group``, and the report says so.

The 95% interval is a bootstrap over deals: the (table, deal) units (every
rotation of a deal, as in the other statistics) are drawn with replacement
``BOOTSTRAP`` times, the fit is repeated on each draw, and the 2.5th and
97.5th percentiles are the interval (widened, where rounding puts it beside the
rating, to hold it). The draws use a fixed seed and the units
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
MAX_ITERATIONS = 200  # Newton steps (a fit takes about 10)


def comparisons(records: Sequence[dict], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-pair sufficient statistics per (table, deal) unit, sparse: for every (unit, pair) that met,
    ``unit[e]``, ``pair[e]`` (an index into the ``[P, 2]`` array of agent pairs ``pairs``, ``a < b``),
    and ``stats[e]`` = (a ahead of b, ties 1/2; comparisons), with units numbered in a fixed order.
    Memory grows with the pairs that meet at each unit, never with units x agents**2."""
    index = {n: i for i, n in enumerate(names)}
    keys: dict = {}
    by_size: dict = {}  # seats -> ([unit key id], [agent indices], [ranks])
    lineups: dict[tuple, list[int]] = {}  # each lineup's agent indices, looked up once
    for rec in records:
        agents = tuple(rec["agents"])
        kid = keys.setdefault((repr(rec["table"]), rec["deal"]), len(keys))
        u, who, rk = by_size.setdefault(len(agents), ([], [], []))
        u.append(kid)
        seats = lineups.get(agents)
        if seats is None:
            seats = lineups[agents] = [index[a] for a in agents]
        who.append(seats)
        rk.append(rec["ranks"])
    order = np.empty(len(keys), np.int64)  # key id -> unit number in sorted order (the order of the games does not matter)
    order[[keys[k] for k in sorted(keys)]] = np.arange(len(keys))
    k = len(names)
    cells, wins_all, met_all = [], [], []
    for n, (u, who, rk) in by_size.items():
        u, who, rk = order[np.array(u, np.int64)], np.array(who, np.int64).reshape(-1, n), np.array(rk, np.float64).reshape(-1, n)
        for i in range(n):
            for j in range(i + 1, n):
                a, b, ra, rb = who[:, i], who[:, j], rk[:, i], rk[:, j]
                keep = a != b
                swap = a > b
                lo, hi = np.where(swap, b, a), np.where(swap, a, b)
                ahead = np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0))
                ahead = np.where(swap, 1.0 - ahead, ahead)
                cells.append(((u * k + lo) * k + hi)[keep])
                wins_all.append(ahead[keep])
    if not cells:
        return np.zeros((0, 2), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2))
    cell = np.concatenate(cells)
    uniq, inverse = np.unique(cell, return_inverse=True)
    wins = np.bincount(inverse, np.concatenate(wins_all), minlength=len(uniq))
    met = np.bincount(inverse, minlength=len(uniq)).astype(np.float64)
    unit, ab = np.divmod(uniq, k * k)
    pair_codes, pair = np.unique(ab, return_inverse=True)
    pairs = np.stack(np.divmod(pair_codes, k), axis=1).astype(np.int64)
    return pairs, unit.astype(np.int64), pair.astype(np.int64), np.stack([wins, met], axis=1)


def groups(pairs: np.ndarray, k: int) -> np.ndarray:
    """The connected group of each of `k` agents in the graph of pairs that met (-1: met nobody)."""
    parent = list(range(k))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs.tolist():
        parent[root(a)] = root(b)
    seen = np.zeros(k, bool)
    seen[pairs.ravel()] = True
    out = np.full(k, -1, np.int64)
    numbered: dict = {}
    for a in range(k):
        if seen[a]:
            out[a] = numbered.setdefault(root(a), len(numbered))
    return out


def _curvature(pairs: np.ndarray, met: np.ndarray, theta: np.ndarray, k: int) -> np.ndarray:
    """The inverse of the log-likelihood's negative Hessian at `theta` (one fit), with the mean fixed."""
    a, b = pairs[:, 0], pairs[:, 1]
    prob = 1.0 / (1.0 + np.exp(theta[b] - theta[a]))
    c = (met + PRIOR_DRAWS) * prob * (1.0 - prob)
    lap = (np.bincount(a * k + a, c, k * k) + np.bincount(b * k + b, c, k * k)
           - np.bincount(a * k + b, c, k * k) - np.bincount(b * k + a, c, k * k)).reshape(k, k)
    return np.linalg.inv(lap + 1.0 / k)


def fit(pairs: np.ndarray, wins: np.ndarray, met: np.ndarray, k: int, start: np.ndarray | None = None,
        curvature: np.ndarray | None = None) -> np.ndarray:
    """Log-strengths of the Bradley–Terry maximum-likelihood fit from per-pair sums: ``pairs`` ``[P, 2]``,
    ``wins`` and ``met`` ``[..., P]`` (a leading batch of independent fits is allowed); ``[..., k]``,
    mean 0. The agents must be one connected group (`bradley_terry` fits each group apart). Newton's
    method on the log-likelihood (concave; the prior draws keep it strictly so), steps capped at 1."""
    a, b = pairs[:, 0], pairs[:, 1]
    batch = wins.shape[:-1]
    w_ab = np.broadcast_to(wins + 0.5 * PRIOR_DRAWS, batch + (len(a),)).reshape(-1, len(a))
    m = np.broadcast_to(met + PRIOR_DRAWS, batch + (len(a),)).reshape(-1, len(a))
    B = w_ab.shape[0]
    theta = np.zeros((B, k)) if start is None else np.tile(start, (B, 1))
    # With `curvature` (the full fit's, for bootstrap draws near it): that one matrix for every step and
    # draw (a chord method: one small product a step, no linear solve per draw).
    flat = (a * k + b, b * k + a, a * k + a, b * k + b)
    for _ in range(MAX_ITERATIONS):
        prob = 1.0 / (1.0 + np.exp(theta[:, b] - theta[:, a]))  # a ahead of b
        resid = w_ab - m * prob  # a's wins minus their expectation
        grad = np.empty((B, k))
        for row in range(B):  # bincount, not a matrix product: no BLAS threads to wait for on a busy machine
            grad[row] = np.bincount(a, resid[row], k) - np.bincount(b, resid[row], k)
        if curvature is not None:
            step = grad @ curvature
            if not np.abs(step).max() < 1.0:  # too far from the full fit for its curvature: Newton's steps instead
                return _newton(pairs, wins, met, k, start)
            theta = theta + step
            theta -= theta.mean(axis=-1, keepdims=True)
            if np.abs(step).max() < TOLERANCE:
                break
            continue
        c = m * prob * (1.0 - prob)
        lap = np.empty((B, k * k))
        for row in range(B):
            lap[row] = (np.bincount(flat[2], c[row], k * k) + np.bincount(flat[3], c[row], k * k)
                        - np.bincount(flat[0], c[row], k * k) - np.bincount(flat[1], c[row], k * k))
        lap = lap.reshape(B, k, k) + 1.0 / k  # the mean is fixed at 0: the gauge
        step = np.linalg.solve(lap, grad[..., None])[..., 0]
        step *= np.minimum(1.0, 1.0 / np.maximum(np.abs(step).max(axis=-1, keepdims=True), 1e-300))
        theta = theta + step
        theta -= theta.mean(axis=-1, keepdims=True)
        if np.abs(step).max() < TOLERANCE:
            break
    else:
        if curvature is not None:  # the chord did not settle: Newton's steps
            return _newton(pairs, wins, met, k, start)
    return theta.reshape(batch + (k,))


def _newton(pairs: np.ndarray, wins: np.ndarray, met: np.ndarray, k: int, start: np.ndarray | None) -> np.ndarray:
    """`fit` by Newton's steps, 16 fits at a time (memory: 16 x k**2)."""
    if wins.ndim < 2:
        return fit(pairs, wins, met, k, start)
    return np.concatenate([fit(pairs, wins[i:i + 16], met[i:i + 16], k, start) for i in range(0, len(wins), 16)])


def bradley_terry(records: Sequence[dict], names: Sequence[str], min_agents: int = 2, bootstrap: int = BOOTSTRAP,
                  seed: int = 0) -> dict | None:
    """Per agent that met another: ``rating`` (Elo scale, mean 0 within its group) with its 95% bootstrap
    interval over deals, and ``group`` (1, 2, ...) when the agents fall into groups that never met, each
    then rated on a scale of its own. An agent without games has no entry. None with fewer than
    `min_agents` agents or no comparisons."""
    if len(names) < min_agents:
        return None
    k = len(names)
    pairs, unit, pair, stats = comparisons(records, names)
    if not len(stats):
        return None
    P, U = len(pairs), int(unit.max()) + 1
    wins = np.bincount(pair, stats[:, 0], minlength=P)
    met = np.bincount(pair, stats[:, 1], minlength=P)
    group = groups(pairs, k)
    rng = np.random.default_rng(seed)
    draws_w = np.zeros((bootstrap, P))
    draws_m = np.zeros((bootstrap, P))
    for start in range(0, bootstrap, 16):  # a few resamples at a time: memory stays at 16 x units
        for row in range(min(16, bootstrap - start)):
            weight = np.bincount(rng.integers(0, U, size=U), minlength=U).astype(float)[unit]  # U units drawn with replacement
            draws_w[start + row] = np.bincount(pair, weight * stats[:, 0], minlength=P)
            draws_m[start + row] = np.bincount(pair, weight * stats[:, 1], minlength=P)
    rating = np.full(k, np.nan)
    draws = np.full((bootstrap, k), np.nan)
    n_groups = int(group.max()) + 1
    for g in range(n_groups):
        members = np.flatnonzero(group == g)
        local = np.full(k, -1, np.int64)
        local[members] = np.arange(len(members))
        sel = np.flatnonzero(group[pairs[:, 0]] == g)
        sub = local[pairs[sel]]
        theta = fit(sub, wins[sel], met[sel], len(members))
        rating[members] = SCALE * theta
        if bootstrap:
            curvature = _curvature(sub, met[sel], theta, len(members))
            draws[:, members] = SCALE * fit(sub, draws_w[:, sel], draws_m[:, sel], len(members), theta, curvature)
    low, high = rating.copy(), rating.copy()
    seen = np.flatnonzero(group >= 0)
    if bootstrap:
        low[seen], high[seen] = np.percentile(draws[:, seen], [2.5, 97.5], axis=0)
        # the resampled fits stop at a tolerance, so with one deal (every draw the same) they sit
        # a rounding away from the fit itself: the interval is widened to hold the rating
        low, high = np.fmin(low, rating), np.fmax(high, rating)
    out = {}
    for i, n in enumerate(names):
        if group[i] < 0:
            continue
        out[n] = {"rating": float(rating[i]), "ci_low": float(low[i]), "ci_high": float(high[i])}
        if n_groups > 1:
            out[n]["group"] = int(group[i]) + 1
    return out
