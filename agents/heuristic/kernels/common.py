"""Pieces the heuristic kernels share: binomial coefficients exact as floats, the legal moves of a row."""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

MAX_N = 58  # the largest deck (Neu)
COMB = np.array([[float(comb(n, k)) for k in range(MAX_N + 1)] for n in range(MAX_N + 1)])
# A float64 holds every integer below 2**53 exactly, and then C(a, h) / C(b, h) divided in floats
# is the correctly rounded ratio that Python's int / int gives. The kernels ask for C(n, k) with
# n <= 55 (the Deadfall deck) or k <= 3 (a Neu hand), all below 2**53.
assert COMB[:56].max() < 2.0**53 and COMB[:, :4].max() < 2.0**53


@njit(cache=True, inline="always")
def legal_count_and_first(mask, t):
    """How many moves row t's mask allows, and the first of them (-1 if none)."""
    legal, first = 0, -1
    for a in range(mask.shape[1]):
        if mask[t, a]:
            legal += 1
            if first < 0:
                first = a
    return legal, first
