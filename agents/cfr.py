"""The average policy of a solved small preset, as an agent: ``cfr:<file>`` (agents.spec).

`experiments.solve` writes the file (``policy.npz``): for each information set, a key and the
probability of every action. An information set is what one seat knows when it must act: its
own observations and actions and every other move as it saw it, in order
(`envs.engine.Engine.information_key`). The agent reads the key of its seat from the
information state every runner hands it before a move (``inform``; the engine keeps the
history when an agent at the table asks for it), so it plays exactly the solved policy; it
samples from it with its own seeded generator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.npzfile import read_npz
from envs import engine_class

KEY_BYTES = 16  # an information set's key (`Engine.information_key`)
MAX_POLICY_BYTES = 256 << 20  # a solved small preset's policy file, uncompressed: a few MB; far more is refused unread


def read_policy(path) -> dict:
    """A ``policy.npz`` of `experiments.solve`, checked from its zip index before it is read
    (`agents.npzfile`), then its probabilities: finite, not negative, some weight in every row."""
    data = read_npz(path, {"game": ("U", ()), "num_players": ("iu", ()), "keys": ("u", ("infos", KEY_BYTES)),
                           "probs": ("f", ("infos", None)), "option_names": ("U", ("options",)),
                           "option_values": ("U", ("options",))}, MAX_POLICY_BYTES, "cfr agent: policy file")
    p = data["probs"]
    if not (np.isfinite(p).all() and (p >= 0).all() and (p.sum(axis=1) > 0).all()):
        raise ValueError(f"cfr agent: policy file {path}: probs must be finite, not negative, with weight in every row")
    return data


class CFRAgent(Agent):
    """Plays a solved average policy (a ``policy.npz`` of `experiments.solve`)."""

    name = "cfr"

    def __init__(self, game: str, num_players: int, seed: int | None = None, path: str | None = None) -> None:
        super().__init__(game, num_players, seed)
        if path is None:
            raise ValueError("cfr agent: give the policy file, as cfr:PATH")
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"cfr agent: no policy file at {path!r} (python -m experiments.solve writes one)")
        data = read_policy(p)
        if str(data["game"]) != game or int(data["num_players"]) != num_players:
            raise ValueError(f"cfr agent: {path} solves {data['game']} with {int(data['num_players'])} players, "
                             f"not {game} with {num_players}")
        self.rules = dict(zip(data["option_names"].tolist(), data["option_values"].tolist()))
        try:
            engine = engine_class(game)(num_players, **self.rules)
        except ValueError as e:
            raise ValueError(f"cfr agent: {path}: its rule options do not make a game ({e})") from None
        if data["probs"].shape[1] != engine.num_actions:
            raise ValueError(f"cfr agent: {path}: probs has {data['probs'].shape[1]} actions per information set; "
                             f"{game} with {self.rules} has {engine.num_actions}")
        self.probs = data["probs"]
        self.index = {k.tobytes(): i for i, k in enumerate(data["keys"])}
        if len(self.index) != len(self.probs):
            raise ValueError(f"cfr agent: {path}: an information set's key appears twice")
        self.path = str(p)
        self.reset()

    def reset(self) -> None:
        self._key = None

    def inform(self, info: dict) -> None:
        """Called by every runner right before `act`: the information-set key of this move."""
        self._key = info.get("key")

    def probs_at(self, key: bytes) -> np.ndarray:
        """The policy's action probabilities at an information set (`Engine.information_key`)."""
        i = self.index.get(key)
        if i is None:
            raise ValueError(f"cfr agent: an information set the solved game ({self.path}) never reaches; "
                             f"is the env built with the same rule options ({self.rules})?")
        return self.probs[i]

    def act(self, observation: dict) -> int:
        key, self._key = self._key, None
        if key is None:
            raise ValueError("cfr agent: act() needs inform(info_state) with the information-set key first: the "
                             "tournament, compare, the single-agent env and the web page give it (their engines keep "
                             "the history an information set needs); env.unwrapped.information_state(agent) gives it "
                             "in your own loop")
        mask = observation["action_mask"]
        p = self.probs_at(bytes(key)) * (np.asarray(mask) > 0)
        legal = self.legal_actions(observation)
        return int(self.rng.choice(p.size, p=p / p.sum())) if p.sum() > 0 else int(legal[0])
