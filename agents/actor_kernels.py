"""The PPO actor compiled for play, without torch: `actor_logits` and `greedy_moves`.

`agents.network.actor_arrays` lays a trained actor's weights out as one float32 table; these
kernels run it row by row in one fixed order of operations, so a row's logits are the same
bits in a batch of 1 or 4,096 (`PPOAgent.act`, `act_batch`, and a tournament's compiled
lineup, `agents.lineups`). They live apart from `agents.network` so that code that only
plays a network need not import torch.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _tanh(y):
    # exp is one IEEE-rounded call per value (numpy's and torch's tanh are vectorised and 5x
    # slower here); the error stays under 1e-7, far below what the policy distinguishes.
    e = np.exp(np.float32(-2.0) * abs(y))
    t = (np.float32(1.0) - e) / (np.float32(1.0) + e)
    return t if y >= 0 else -t


@njit(cache=True, inline="always")
def _layer(v, table, at, n_out, out):
    """out = v @ W + b, with W's rows at table[at:] and b the row after them: each output sums
    its products in input order, in float32 with no fused multiply-add."""
    for k in range(n_out):
        out[k] = 0
    n, j = v.shape[0], 0
    while j + 8 <= n:  # eight inputs per pass over the outputs (fewer loads and stores), the same sums
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        v4, v5, v6, v7 = v[j + 4], v[j + 5], v[j + 6], v[j + 7]
        w0, w1, w2, w3 = table[at + j], table[at + j + 1], table[at + j + 2], table[at + j + 3]
        w4, w5, w6, w7 = table[at + j + 4], table[at + j + 5], table[at + j + 6], table[at + j + 7]
        for k in range(n_out):
            y = (((out[k] + v0 * w0[k]) + v1 * w1[k]) + v2 * w2[k]) + v3 * w3[k]
            out[k] = (((y + v4 * w4[k]) + v5 * w5[k]) + v6 * w6[k]) + v7 * w7[k]
        j += 8
    while j + 4 <= n:  # then four, then one: each output sums its products in input order
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        w0, w1, w2, w3 = table[at + j], table[at + j + 1], table[at + j + 2], table[at + j + 3]
        for k in range(n_out):
            out[k] = (((out[k] + v0 * w0[k]) + v1 * w1[k]) + v2 * w2[k]) + v3 * w3[k]
        j += 4
    while j < n:
        vj, w = v[j], table[at + j]
        for k in range(n_out):
            out[k] += vj * w[k]
        j += 1
    b = table[at + n]
    for k in range(n_out):
        out[k] += b[k]
    return at + n + 1


@njit(cache=True, inline="always")
def _layer4(V, table, at, n_out, O):
    """`_layer` for four rows at once (V [4, n] into O [4, n_out]), sharing each weight load:
    every row's outputs get the same sums in the same order as `_layer` gives it alone."""
    n = V.shape[1]
    o0, o1, o2, o3 = O[0], O[1], O[2], O[3]
    v0, v1, v2, v3 = V[0], V[1], V[2], V[3]
    for k in range(n_out):
        o0[k] = 0
        o1[k] = 0
        o2[k] = 0
        o3[k] = 0
    j = 0
    while j + 4 <= n:
        w0, w1, w2, w3 = table[at + j], table[at + j + 1], table[at + j + 2], table[at + j + 3]
        a0, a1, a2, a3 = v0[j], v0[j + 1], v0[j + 2], v0[j + 3]
        b0, b1, b2, b3 = v1[j], v1[j + 1], v1[j + 2], v1[j + 3]
        c0, c1, c2, c3 = v2[j], v2[j + 1], v2[j + 2], v2[j + 3]
        d0, d1, d2, d3 = v3[j], v3[j + 1], v3[j + 2], v3[j + 3]
        for k in range(n_out):
            x0, x1, x2, x3 = w0[k], w1[k], w2[k], w3[k]
            o0[k] = (((o0[k] + a0 * x0) + a1 * x1) + a2 * x2) + a3 * x3
            o1[k] = (((o1[k] + b0 * x0) + b1 * x1) + b2 * x2) + b3 * x3
            o2[k] = (((o2[k] + c0 * x0) + c1 * x1) + c2 * x2) + c3 * x3
            o3[k] = (((o3[k] + d0 * x0) + d1 * x1) + d2 * x2) + d3 * x3
        j += 4
    while j < n:
        w = table[at + j]
        a, b, c, d = v0[j], v1[j], v2[j], v3[j]
        for k in range(n_out):
            x = w[k]
            o0[k] += a * x
            o1[k] += b * x
            o2[k] += c * x
            o3[k] += d * x
        j += 1
    bias = table[at + n]
    for k in range(n_out):
        x = bias[k]
        o0[k] += x
        o1[k] += x
        o2[k] += x
        o3[k] += x
    return at + n + 1


@njit(cache=True)
def actor_logits(x, table, dims, out):
    """The actor's logits (float32 [N, actions] into `out`) for policy inputs x [N, inputs].

    Row by row, with one fixed order of operations: a row's logits are the same bits in a batch
    of 1 or 4,096 (BLAS would round a row by how it blocks the batch). Vectorised across a
    layer's outputs only, which changes no rounding."""
    n_in, h1, h2, na = dims[0], dims[1], dims[2], dims[3]
    mean, std = table[0], table[1]
    V, A, C, D = np.empty((4, n_in), np.float32), np.empty((4, h1), np.float32), np.empty((4, h2), np.float32), np.empty((4, na), np.float32)
    n_rows, t = x.shape[0], 0
    while t + 4 <= n_rows:  # four rows at a time share the weight loads; a row's bits stay its own
        for r in range(4):
            for j in range(n_in):
                V[r, j] = (x[t + r, j] - mean[j]) / std[j]
        at = _layer4(V, table, 2, h1, A)
        for r in range(4):
            for k in range(h1):
                A[r, k] = _tanh(A[r, k])
        at = _layer4(A, table, at, h2, C)
        for r in range(4):
            for k in range(h2):
                C[r, k] = _tanh(C[r, k])
        _layer4(C, table, at, na, D)
        out[t:t + 4, :] = D
        t += 4
    v, a, c, d = V[0], A[0], C[0], D[0]
    for t in range(t, n_rows):
        for j in range(n_in):
            v[j] = (x[t, j] - mean[j]) / std[j]
        at = _layer(v, table, 2, h1, a)
        for k in range(h1):
            a[k] = _tanh(a[k])
        at = _layer(a, table, at, h2, c)
        for k in range(h2):
            c[k] = _tanh(c[k])
        _layer(c, table, at, na, d)
        for k in range(na):
            out[t, k] = d[k]


@njit(cache=True)
def greedy_moves(x, mask, table, dims, out, moves):
    """`actor_logits` into `out`, then each row's first most probable legal move into `moves`
    (np.argmax's choice over the legal logits, a NaN first); -1 where no move is legal."""
    actor_logits(x, table, dims, out)
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
