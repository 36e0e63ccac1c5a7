"""Hand-made features a policy network may read next to the raw observation (`train.ppo_warmstart --features`).

The env's observation is raw: card counts, piles, tokens. For most games a
small MLP learns what it needs from that. Not Your Ma's Jong is different: the
value of a discard hangs on a combinatorial question (how far is the hand from
three sets and a pair, and which cards shorten that distance?), which the
network would have to rediscover from sparse round wins. Mahjong programs
(Suphx, and every shanten-based bot) hand their networks such features. Neu's
are the heuristic's own chances for each move (is the next player stuck, am I
stuck later), which the heuristic adds up with fixed weights. All are computed
from the seat's own observation (and, for Neu, its action mask) only, so they
reveal nothing the seat does not already know.

A checkpoint records whether it was trained with features; `PPOAgent` adds
them when it acts, and training adds them everywhere an observation enters the
network (`train/rollout.py`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from agents.heuristic import heuristic_class
from agents.heuristic.neu import NeuHeuristic
from agents.heuristic.hand_distance import shanten_each
from agents.heuristic.not_your_mas_jong import acceptance, distance_after_steal, hand_distance, read_view
from envs import neu
from envs import not_your_mas_jong as mj

_FAR = 9  # distance reported for a discard or steal that is not possible (the worst hand is 8 away)


def mas_jong_features(obs: np.ndarray, num_players: int) -> np.ndarray:
    """81 values from the seat's own view.

    [0]       distance of the hand now (cards still to exchange; 0 = complete)
    [1:26]    distance after discarding each card type (_FAR when not held)
    [26:30]   steal phase: distance after each set steal (identical, as lowest, middle, highest)
              and the best discard that follows it (_FAR when not possible)
    [30]      steal phase: 1 when the waiting discard completes the hand
    [31:56]   copies of each card type not yet seen (3 minus own hand, every discard pile, every locked set)
    [56:81]   for each discard that keeps the hand closest: unseen copies of the draws that would then
              lower its distance ("acceptance"; 0 for the other discards)
    """
    n_types = mj.NUM_TYPES
    hand, locked, _, unseen = read_view(obs, num_players)
    out = np.full(81, _FAR, np.float32)
    out[0] = hand_distance(tuple(hand), locked)
    for k, d in enumerate(shanten_each(hand, locked, -1)):
        if d is not None:
            out[1 + k] = d
    out[30] = 0.0
    if obs[mj.OBS_PHASE] == 1:
        card = int(np.argmax(obs[mj.OBS_DISCARD : mj.OBS_DISCARD + n_types]))
        hand[card] += 1
        out[30] = float(hand_distance(tuple(hand), locked) == 0)
        hand[card] -= 1
        for a, first, second in mj.SET_STEAL_CARDS[card]:  # identical, as lowest, middle, highest
            d = distance_after_steal(hand, locked, (first, second))
            if d is not None:
                out[26 + a - mj.A_STEAL_IDENTICAL] = d
    out[31:56] = unseen
    out[56:81] = 0.0
    closest = out[1:26].min()
    for k in range(n_types):
        if hand[k] and out[1 + k] == closest:
            hand[k] -= 1
            out[56 + k] = acceptance(hand, locked, int(closest), unseen)
            hand[k] += 1
    return out


@lru_cache(maxsize=None)
def _neu_heuristic(num_players: int) -> NeuHeuristic:
    return NeuHeuristic("neu", num_players)  # deterministic: one instance serves every seat


def neu_features(obs: np.ndarray, mask: np.ndarray, num_players: int) -> np.ndarray:
    """3 values per action, from the seat's own view: the Neu heuristic's hypergeometric chances
    (attack: the player who must play next is stuck; now: I am stuck on my own second play;
    future: I am stuck later, averaged over a few higher totals), 0 for illegal actions.

    The heuristic adds them up with fixed weights; the network may weigh them by the
    situation (chips left, who is next, which safe cards I hold)."""
    out = np.zeros((len(mask), 3), np.float32)
    for a, terms in _neu_heuristic(num_players).terms({"observation": obs, "action_mask": mask}).items():
        out[a] = terms
    return out.ravel()


# game -> (feature count for a player count, function(obs, mask, num_players))
FEATURES = {
    "not_your_mas_jong": (lambda n: 81, lambda obs, mask, n: mas_jong_features(obs, n)),
    "neu": (lambda n: 3 * (neu.A_SHOT + n - 1), neu_features),
}


# game -> the compiled copy of FEATURES[game] over a batch (the same values; tests/test_learn.py checks them)
# The module that computes a game's features for a whole batch: its `with_features(obs, n)`, and
# `features_into(obs, n, out)` with `SIZE`, unchecked, for `agents.ppo.PPOAgent`'s compiled inputs.
BATCH_FEATURES = {"not_your_mas_jong": "agents.features_batch"}


def has_batch_features(game: str) -> bool:
    """Whether `batch_features` computes this game's features for a whole batch in one compiled call."""
    return game in BATCH_FEATURES


def batch_features(game: str, obs: np.ndarray, num_players: int) -> np.ndarray:
    """[N, obs_size] -> [N, obs_size + feature_size]: every row followed by its features."""
    return batch_features_module(game).with_features(obs, num_players)


def batch_features_module(game: str):
    """The module of `BATCH_FEATURES` for `game`, imported on first use (numba loads only when asked for)."""
    import importlib

    return importlib.import_module(BATCH_FEATURES[game])


def feature_size(game: str, num_players: int) -> int:
    """How many values `featurizer` adds for this game and player count (0: none)."""
    return FEATURES[game][0](num_players) if game in FEATURES else 0


def featurizer(game: str, num_players: int):
    """(obs, mask) -> obs with the game's features appended (a float32 copy); ValueError for a
    game without features."""
    if game not in FEATURES:
        raise ValueError(f"no hand-made features for {game!r}; games with features: {', '.join(FEATURES)}")
    fn = FEATURES[game][1]
    return lambda obs, mask: np.concatenate([obs, fn(obs, mask, num_players)]).astype(np.float32, copy=False)


def hinter(game: str, num_players: int):
    """(obs, mask) -> one-hot of the move the game's heuristic would play here (`train.ppo_warmstart --hint`).

    A hint, not a rule: the network may follow it or learn where to deviate
    ("residual" learning on top of a hand-written policy). The heuristic reads
    only the seat's own observation and mask, and every heuristic is
    deterministic, so the hint reveals nothing the seat does not know and the
    same view always gives the same hint.
    """
    heuristic = heuristic_class(game)(game, num_players, seed=0)

    def hint(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = np.zeros(len(mask), np.float32)
        out[heuristic.act({"observation": obs, "action_mask": mask})] = 1.0
        return out

    return hint
