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

`actor_logits` (in `agents.actor_kernels`) is the actor compiled for play (`PPOAgent.act` and `act_batch`):
each row's logits are the same bits whatever batch it sits in, so one game's
moves never depend on the engine, the batch size or the worker count.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from agents.actor_kernels import layer_table

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
    """`net`'s actor as `actor_logits` reads it (`agents.actor_kernels.layer_table`: one float32
    table of the normaliser and the layers, and the sizes [inputs, hidden, hidden, actions]). Read
    off the module itself, so play runs the network ActorCritic builds."""
    kinds = [type(m) for m in net.actor]
    if kinds != [nn.Linear, nn.Tanh, nn.Linear, nn.Tanh, nn.Linear]:
        raise TypeError(f"the compiled actor runs Linear, Tanh, Linear, Tanh, Linear, not {[k.__name__ for k in kinds]}")
    linear = [m for m in net.actor if isinstance(m, nn.Linear)]
    return layer_table(net.obs_mean.detach().numpy(), net.obs_std.detach().numpy(),
                       [m.weight.detach().numpy().T for m in linear], [m.bias.detach().numpy() for m in linear])


# ---------------------------------------------------------------- inputs
def input_size(facts, features: bool = False, hint: bool = False) -> int:
    """What the policy reads: the observation, plus the game's hand-made features with `features`,
    plus a one-hot of the heuristic's move with `hint` (`facts`: the game's `envs.info(...)`)."""
    from agents.features import feature_size

    extra = feature_size(facts.name, facts.num_players) if features else 0
    return facts.obs_size + extra + (facts.num_actions if hint else 0)


def state_size(facts) -> int:
    """What the global critic reads besides the policy's input: env.state() (every hand) and a
    one-hot of the seat."""
    return facts.state_size + facts.num_players


def critic_size(facts, critic: str, features: bool = False, hint: bool = False) -> int:
    size = input_size(facts, features, hint)
    return size if critic == "plain" else size + state_size(facts)


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
