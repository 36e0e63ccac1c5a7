"""The PPO network and what it reads: one module shared by the agent that plays and the trainer.

`ActorCritic` is a policy over the game's fixed action space and a value
estimate. The policy reads `policy_input(...)` of the seat's observation: the
observation itself, plus (when a checkpoint says so) the game's hand-made
features (`agents/features.py`) and a one-hot of the heuristic's move. The
critic reads the same, or with ``critic="global"`` also ``env.state()`` and
the seat (training only: the critic never plays). Both inputs are normalised
by fixed mean/std buffers stored with the weights.

Illegal actions get the logit `MASKED_LOGIT` (-1e8, not -inf: a softmax gives
exactly 0 there, and nothing turns NaN), and the entropy counts legal actions
only.

`actor_logits` is the actor compiled for play (`PPOAgent.act` and `act_batch`):
each row's logits are the same bits whatever batch it sits in, so one game's
moves never depend on the engine, the batch size or the worker count.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
from numba import njit

MASKED_LOGIT = -1e8


def layer(n_in: int, n_out: int, std: float = np.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class ActorCritic(nn.Module):
    """Policy logits over the action space, and a value, each from a Tanh MLP with two hidden layers."""

    def __init__(self, obs_size: int, num_actions: int, critic_size: int, hidden: int = 256):
        super().__init__()
        self.register_buffer("obs_mean", torch.zeros(obs_size))
        self.register_buffer("obs_std", torch.ones(obs_size))
        self.register_buffer("critic_mean", torch.zeros(critic_size))
        self.register_buffer("critic_std", torch.ones(critic_size))
        self.actor = nn.Sequential(
            layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, num_actions, std=0.01)
        )
        self.critic = nn.Sequential(
            layer(critic_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, 1, std=1.0)
        )

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.actor((obs - self.obs_mean) / self.obs_std)
        return torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))

    def get_value(self, critic_in: torch.Tensor) -> torch.Tensor:
        return self.critic((critic_in - self.critic_mean) / self.critic_std).squeeze(-1)

    def get_action_and_value(self, obs, mask, critic_in, action=None, generator=None):
        logits = self.masked_logits(obs, mask)
        logp_all = torch.log_softmax(logits, dim=-1)
        # exp() of the masked -1e8 entries takes CPU's slow underflow path (20-60x slower with
        # Not For Me's 390 actions), so exponentiate 0 there instead and zero it: same bits.
        probs = torch.where(mask, logp_all, torch.zeros_like(logp_all)).exp() * mask
        if action is None:
            action = sample(probs, generator)
        logp = logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        # Entropy over the legal actions only: illegal ones have p = 0 and must not add 0 * -1e8 noise.
        entropy = -(probs * logp_all).where(mask, torch.zeros_like(logp_all)).sum(-1)
        return action, logp, entropy, self.get_value(critic_in)


def network_shapes(input_size: int, num_actions: int, critic_size: int, hidden: int) -> dict[str, tuple[int, ...]]:
    """The name and shape of every tensor in an `ActorCritic` state dict, without building one."""
    shapes = {"obs_mean": (input_size,), "obs_std": (input_size,), "critic_mean": (critic_size,), "critic_std": (critic_size,)}
    for part, n_in, n_out in (("actor", input_size, num_actions), ("critic", critic_size, 1)):
        for i, (a, b) in enumerate(((n_in, hidden), (hidden, hidden), (hidden, n_out))):
            shapes[f"{part}.{2 * i}.weight"] = (b, a)
            shapes[f"{part}.{2 * i}.bias"] = (b,)
    return shapes


def sample(probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row by inverse CDF (much faster than torch.multinomial for small batches).

    An action with probability exactly 0 (masked) is never picked: the cumulative
    sum does not rise at it, so the first entry above u is always a legal one.
    """
    cdf = probs.cumsum(-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator) * cdf[..., -1:]
    return (cdf <= u).sum(-1).clamp_(max=probs.shape[-1] - 1)


# ---------------------------------------------------------------- the actor for play
def actor_arrays(net: ActorCritic) -> tuple[np.ndarray, np.ndarray]:
    """`net`'s actor as `actor_logits` reads it: one float32 table whose rows are the normaliser's
    mean and std, then each Linear layer's weight (one row per input) and its bias, zero-padded
    to the widest; and the sizes [inputs, hidden, hidden, actions]. Read off the module itself,
    so play runs the network ActorCritic builds."""
    kinds = [type(m) for m in net.actor]
    if kinds != [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear]:
        raise TypeError(f"the compiled actor runs Linear, Tanh, Linear, Tanh, Linear, not {[k.__name__ for k in kinds]}")
    linear = [m for m in net.actor if isinstance(m, nn.Linear)]
    rows = [net.obs_mean[None], net.obs_std[None]]
    for m in linear:
        rows += [m.weight.detach().T, m.bias.detach()[None]]
    dims = np.array([linear[0].in_features, linear[0].out_features, linear[1].out_features, linear[2].out_features], np.int64)
    table = np.zeros((sum(len(r) for r in rows), int(dims.max())), np.float32)
    at = 0
    for r in rows:
        table[at:at + len(r), :r.shape[1]] = r.detach().numpy()
        at += len(r)
    return table, dims


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


# ---------------------------------------------------------------- inputs
def input_size(facts, features: bool = False, hint: bool = False) -> int:
    """What the policy reads: the observation, plus the game's hand-made features with `features`,
    plus a one-hot of the heuristic's move with `hint` (`facts`: the game's `envs.info(...)`)."""
    from agents.features import feature_size

    extra = feature_size(facts.name, facts.num_players) if features else 0
    return facts.obs_size + extra + (facts.num_actions if hint else 0)


def critic_size(facts, critic: str, features: bool = False, hint: bool = False) -> int:
    size = input_size(facts, features, hint)
    return size if critic == "plain" else size + facts.state_size + facts.num_players


def policy_input(game: str, num_players: int, features: bool = False, hint: bool = False):
    """(obs, mask) -> the policy's input vector (the observation itself without features and hint)."""
    from agents.features import featurizer, hinter

    with_features = featurizer(game, num_players) if features else (lambda obs, mask: obs)
    if not hint:
        return with_features
    heuristic_move = hinter(game, num_players)
    return lambda obs, mask: np.concatenate([with_features(obs, mask), heuristic_move(obs, mask)])


def critic_input(env, agent: str, obs: np.ndarray, critic: str) -> np.ndarray:
    """What the value function sees: the policy's input, or (global critic) that + env.state() + the seat."""
    if critic == "plain":
        return obs
    seat = np.zeros(len(env.possible_agents), np.float32)
    seat[env.possible_agents.index(agent)] = 1.0
    return np.concatenate([obs, env.state(), seat])
