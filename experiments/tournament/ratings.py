"""Ratings of the agents in a tournament, fitted over every game."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def openskill_ratings(records: Sequence[dict], names: Sequence[str], min_agents: int = 3) -> dict | None:
    """Plackett–Luce ratings over all games in record order; None with fewer than `min_agents` agents
    (two agents are compared by their score table instead)."""
    if len(names) < min_agents:
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
