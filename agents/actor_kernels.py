"""The PPO actor compiled for play, without torch: `actor_logits` and `greedy_moves`.

`agents.network.actor_arrays` lays a trained actor's weights out as one float32 table; these
kernels run it row by row in one fixed order of operations, so a row's logits are the same
bits in a batch of 1 or 4,096 (`PPOAgent.act`, `act_batch`, and a tournament's compiled
lineup, `agents.lineups`). They live apart from `agents.network` so that code that only
plays a network need not import torch.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _tanh(y):
    """tanh in float32 from e = exp(-2|y|), with exp written out: 2^-m (exact powers of two,
    chosen by comparisons) times a degree-7 polynomial. Only +, -, *, / and selects, so a loop
    over a layer's outputs vectorises (a libm call does not), and the bits are IEEE's on any
    machine. The error stays under 2e-7, far below what the policy distinguishes."""
    z = min(abs(y), np.float32(9.0)) * np.float32(-2.0)  # tanh(9) is 1 in float32
    m = np.floor(z * np.float32(-1.442695) + np.float32(0.5))  # exp(z) = 2^-m * exp(r), m in [0, 26]
    r = (z + m * np.float32(0.693359375)) + m * np.float32(-2.12194440e-4)  # |r| <= 0.35
    p = np.float32(1.0 / 5040.0)
    p = p * r + np.float32(1.0 / 720.0)
    p = p * r + np.float32(1.0 / 120.0)
    p = p * r + np.float32(1.0 / 24.0)
    p = p * r + np.float32(1.0 / 6.0)
    p = p * r + np.float32(0.5)
    p = p * r + np.float32(1.0)
    p = p * r + np.float32(1.0)
    s = np.float32(1.0)
    if m >= np.float32(16.0):
        s, m = s * np.float32(2.0 ** -16), m - np.float32(16.0)
    if m >= np.float32(8.0):
        s, m = s * np.float32(2.0 ** -8), m - np.float32(8.0)
    if m >= np.float32(4.0):
        s, m = s * np.float32(2.0 ** -4), m - np.float32(4.0)
    if m >= np.float32(2.0):
        s, m = s * np.float32(0.25), m - np.float32(2.0)
    if m >= np.float32(1.0):
        s = s * np.float32(0.5)
    e = p * s
    t = (np.float32(1.0) - e) / (np.float32(1.0) + e)
    return t if y >= 0 else -t


def layer_table(mean: np.ndarray, std: np.ndarray, weights: list, biases: list) -> tuple[np.ndarray, np.ndarray]:
    """A Linear-Tanh-Linear-Tanh-Linear network on normalised inputs, as `actor_logits` reads it:
    one float32 table whose rows are the normaliser's mean and std, then each layer's weight
    (``weights[i]``: one row per input) and its bias, zero-padded to the widest size rounded up to
    16 columns (whole vectors); and the sizes [inputs, hidden, hidden, outputs]. The first layer's
    bias row holds instead the layer's value at input 0, bias + sum_j (-mean_j / std_j) * row j,
    summed exactly (`math.fsum`) and rounded once, so that a row adds only its nonzero inputs.
    Last, the last layer's weight again, transposed (one row per action): a greedy move reads
    its legal actions' weights there, each in one run of memory (`_legal_outputs`)."""
    rows = [np.asarray(mean, np.float32)[None], np.asarray(std, np.float32)[None]]
    for w, b in zip(weights, biases):
        rows += [np.asarray(w, np.float32), np.asarray(b, np.float32)[None]]
    weight, bias = rows[2].astype(np.float64), rows[3][0].astype(np.float64)
    shift = -rows[0][0].astype(np.float64) / rows[1][0].astype(np.float64)  # the normalised input at x = 0
    rows[3] = np.array([[math.fsum([bias[k], *(shift * weight[:, k])]) for k in range(weight.shape[1])]], np.float32)
    dims = np.array([rows[2].shape[0], rows[2].shape[1], rows[4].shape[1], rows[6].shape[1]], np.int64)
    rows.append(np.ascontiguousarray(rows[6].T))
    table = np.zeros((sum(len(r) for r in rows), -(-int(dims.max()) // 16) * 16), np.float32)
    at = 0
    for r in rows:
        table[at:at + len(r), :r.shape[1]] = r
        at += len(r)
    return table, dims


# The layer helpers are called, not inlined: each is compiled once (inlined into every layer of
# actor_logits they took a quarter of its compile time), and a call costs nothing beside a layer.
@njit(cache=True, error_model="numpy")
def _add_rows(v, m, table, rows, out):
    """out += v[i] * table[rows[i]] for i < m, in that order: each output adds its products in
    input order, in float32 with no fused multiply-add."""
    n_out, i = out.shape[0], 0
    while i + 8 <= m:  # eight inputs per pass over the outputs (fewer loads and stores), the same sums
        v0, v1, v2, v3, v4, v5, v6, v7 = v[i], v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5], v[i + 6], v[i + 7]
        w0, w1, w2, w3 = table[rows[i]], table[rows[i + 1]], table[rows[i + 2]], table[rows[i + 3]]
        w4, w5, w6, w7 = table[rows[i + 4]], table[rows[i + 5]], table[rows[i + 6]], table[rows[i + 7]]
        for k in range(n_out):
            y = (((out[k] + v0 * w0[k]) + v1 * w1[k]) + v2 * w2[k]) + v3 * w3[k]
            out[k] = (((y + v4 * w4[k]) + v5 * w5[k]) + v6 * w6[k]) + v7 * w7[k]
        i += 8
    while i < m:
        vi, w = v[i], table[rows[i]]
        for k in range(n_out):
            out[k] += vi * w[k]
        i += 1


@njit(cache=True, error_model="numpy")
def _add_rows4(V, m, table, rows, O):
    """`_add_rows` for four rows of inputs (V [4, m] into O [4, n_out]) sharing each weight load:
    every row gets the same sums in the same order as `_add_rows` gives it alone."""
    n_out, i = O.shape[1], 0
    o0, o1, o2, o3 = O[0], O[1], O[2], O[3]
    v0, v1, v2, v3 = V[0], V[1], V[2], V[3]
    while i + 4 <= m:
        w0, w1, w2, w3 = table[rows[i]], table[rows[i + 1]], table[rows[i + 2]], table[rows[i + 3]]
        a0, a1, a2, a3 = v0[i], v0[i + 1], v0[i + 2], v0[i + 3]
        b0, b1, b2, b3 = v1[i], v1[i + 1], v1[i + 2], v1[i + 3]
        c0, c1, c2, c3 = v2[i], v2[i + 1], v2[i + 2], v2[i + 3]
        d0, d1, d2, d3 = v3[i], v3[i + 1], v3[i + 2], v3[i + 3]
        for k in range(n_out):
            x0, x1, x2, x3 = w0[k], w1[k], w2[k], w3[k]
            o0[k] = (((o0[k] + a0 * x0) + a1 * x1) + a2 * x2) + a3 * x3
            o1[k] = (((o1[k] + b0 * x0) + b1 * x1) + b2 * x2) + b3 * x3
            o2[k] = (((o2[k] + c0 * x0) + c1 * x1) + c2 * x2) + c3 * x3
            o3[k] = (((o3[k] + d0 * x0) + d1 * x1) + d2 * x2) + d3 * x3
        i += 4
    while i < m:
        w = table[rows[i]]
        a, b, c, d = v0[i], v1[i], v2[i], v3[i]
        for k in range(n_out):
            x = w[k]
            o0[k] += a * x
            o1[k] += b * x
            o2[k] += c * x
            o3[k] += d * x
        i += 1


@njit(cache=True, error_model="numpy")
def _nonzero_inputs(X, std, rows, S):
    """The inputs nonzero in any row of X [R, inputs] (R = 1 or 4), in order: their weight rows
    in the table into ``rows`` (the first layer's start at 2) and x_j / std_j into ``S[:, i]``;
    returns how many. A row's input that is zero where another's is not gives a zero product,
    which leaves each sum as it was (at most a zero's sign, which tanh drops), so a row's
    first layer is the same in a batch as alone."""
    n, m = X.shape[1], 0
    for j in range(n):  # without a branch: which inputs are zero is not predictable
        rows[m] = j
        hit = False
        for r in range(X.shape[0]):
            hit |= X[r, j] != 0
        m += hit
    for i in range(m):
        j = rows[i]
        for r in range(X.shape[0]):
            S[r, i] = X[r, j] / std[j]
        rows[i] = 2 + j
    return m


@njit(cache=True, error_model="numpy")
def _legal_outputs(v, m, table, start, mask, out):
    """The last layer at the legal outputs only (mask != 0), each out[k] summed as `_add_rows`
    sums it (from its bias in out[k], input order, no fused multiply-add): the same bits. A
    greedy move needs no other logit, and most of a big action space is illegal at any time.
    Output k's weights are row start + k of the table (the transposed copy, `layer_table`)."""
    for k in range(mask.shape[0]):
        if mask[k] != 0:
            y, w = out[k], table[start + k]
            for i in range(m):
                y = y + v[i] * w[i]
            out[k] = y


# numpy's error model: a division by zero gives inf, not a raise. No divisor here is zero (std > 0,
# 1 + e >= 1), and without the check the loops over a layer's outputs vectorise, tanh included.
@njit(cache=True, error_model="numpy")
def actor_logits(x, table, dims, out):
    """The actor's logits (float32 [N, actions] into `out`) for policy inputs x [N, inputs].

    Row by row, with one fixed order of operations: a row's logits are the same bits in a batch
    of 1 or 4,096 (BLAS would round a row by how it blocks the batch). Each layer starts from
    its bias row and adds its inputs' products in input order. The first layer starts instead
    from its value at input 0 (`agents.network.actor_arrays`) and adds the nonzero inputs only,
    scaled by the normaliser: most inputs of a view are zero (two thirds of Ma's Jong's). Four
    rows at a time share each weight load. Vectorised across a layer's outputs only, which
    changes no rounding."""
    _forward(x, table, dims, out, np.zeros((0, 0), np.int8))


@njit(cache=True, error_model="numpy")
def _forward(x, table, dims, out, mask):
    """`actor_logits`; given a mask [N, actions] (not [0, 0]), a row whose legal moves are few
    (at most one in 8 of the last layer's outputs) gets its legal logits only, the same bits,
    and the rest of its row in `out` is left unset."""
    n_in, h1, h2, na = dims[0], dims[1], dims[2], dims[3]
    std, at2 = table[1], 2 + n_in + 1
    at3 = at2 + h1 + 1
    first, hidden, last = np.empty(n_in, np.int64), at2 + np.arange(h1), at3 + np.arange(h2)
    # The last layer computes whole vectors of outputs: the table's zero padding past the actions
    # (`actor_arrays` pads its rows to a multiple of 16) gives unused logits, not a scalar tail.
    wide = min(table.shape[1], (na + 15) // 16 * 16)
    S = np.empty((4, n_in), np.float32)
    A, C, D = np.empty((4, h1), np.float32), np.empty((4, h2), np.float32), np.empty((4, wide), np.float32)
    n_rows, t = x.shape[0], 0
    few = np.zeros(n_rows, np.bool_)
    if mask.shape[0] > 0:
        for r in range(n_rows):
            legal = 0
            for k in range(na):
                legal += mask[r, k] != 0
            few[r] = legal * 8 <= wide
    while t + 4 <= n_rows:
        m = _nonzero_inputs(x[t:t + 4], std, first, S)
        for r in range(4):
            A[r] = table[2 + n_in, :h1]
            C[r] = table[at2 + h1, :h2]
            D[r] = table[at3 + h2, :wide]
        _add_rows4(S, m, table, first, A)
        for r in range(4):
            for k in range(h1):
                A[r, k] = _tanh(A[r, k])
        _add_rows4(A, h1, table, hidden, C)
        for r in range(4):
            for k in range(h2):
                C[r, k] = _tanh(C[r, k])
        if few[t] and few[t + 1] and few[t + 2] and few[t + 3]:
            for r in range(4):
                _legal_outputs(C[r], h2, table, at3 + h2 + 1, mask[t + r], D[r])
        else:
            _add_rows4(C, h2, table, last, D)
        out[t:t + 4, :] = D[:, :na]
        t += 4
    a, c, d = A[0], C[0], D[0]
    for t in range(t, n_rows):
        m = _nonzero_inputs(x[t:t + 1], std, first, S)
        a[:] = table[2 + n_in, :h1]
        c[:] = table[at2 + h1, :h2]
        d[:] = table[at3 + h2, :wide]
        _add_rows(S[0], m, table, first, a)
        for k in range(h1):
            a[k] = _tanh(a[k])
        _add_rows(a, h1, table, hidden, c)
        for k in range(h2):
            c[k] = _tanh(c[k])
        if few[t]:
            _legal_outputs(c, h2, table, at3 + h2 + 1, mask[t], d)
        else:
            _add_rows(c, h2, table, last, d)
        out[t, :] = d[:na]


@njit(cache=True)
def greedy_moves(x, mask, table, dims, out, moves):
    """The actor's legal logits into `out` (`actor_logits`' bits; a row with few legal moves gets
    only those), then each row's first most probable legal move into `moves` (np.argmax's choice
    over the legal logits, a NaN first); -1 where no move is legal."""
    _forward(x, table, dims, out, mask)
    for t in range(x.shape[0]):
        best = -1
        for k in range(out.shape[1]):
            if mask[t, k] != 0:
                v = out[t, k]
                if best < 0 or (out[t, best] == out[t, best] and (v > out[t, best] or v != v)):
                    best = k
        moves[t] = best


@njit(cache=True, inline="always")
def ppo_moves(obs, mask, views, n, hparams, net, dims, flags, fparams, heuristic, features, out):
    """A greedy network's moves at ``views`` (indices into ``obs``) into ``out[views]``: its
    inputs built as `agents.ppo.PPOAgent._batch_input` builds them (the observation; with
    ``flags[0]`` the game's ``features(obs, n, fparams, f)``, ``flags[2]`` values; with
    ``flags[1]`` a one-hot of ``heuristic(obs, mask, n, hparams, moves)``), then `greedy_moves`
    with the actor's table ``net`` and ``dims``."""
    m, size = views.shape[0], obs.shape[1]
    ob = np.empty((m, size), np.float32)
    mk = np.empty((m, mask.shape[1]), np.int8)
    for r in range(m):
        ob[r] = obs[views[r]]
        mk[r] = mask[views[r]]
    x = np.zeros((m, dims[0]), np.float32)
    x[:, :size] = ob
    at = size
    if flags[0]:  # the game's features
        f = np.empty((m, flags[2]), np.float32)
        features(ob, n, fparams, f)
        x[:, at:at + flags[2]] = f
        at += flags[2]
    if flags[1]:  # the heuristic's move, one-hot
        hint = np.empty(m, np.int64)
        heuristic(ob, mk, n, hparams, hint)
        for r in range(m):
            if hint[r] >= 0:
                x[r, at + hint[r]] = 1.0
    logits = np.empty((m, dims[3]), np.float32)
    moves = np.empty(m, np.int64)
    greedy_moves(x, mk, net, dims, logits, moves)
    for r in range(m):
        out[views[r]] = moves[r]
