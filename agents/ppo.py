"""PPO agent: a policy trained by `python -m train.ppo`, loaded from a checkpoint.

    from agents import PPOAgent, make_agent
    bot = PPOAgent.load("agents/checkpoints/neu_4p.pt", seed=0)
    bot = make_agent("ppo", game="neu", num_players=4, seed=0)   # the shipped checkpoint
    action = bot.act(observation)                                 # observation = env.last()[0]

Shipped checkpoints live in `agents/checkpoints/<game>_<n>p.pt`, each with a
`.json` sidecar holding the command that reproduces it, its training budget
and its evaluation. A checkpoint is a plain dict of tensors and numbers
(`agents/checkpoint.py`), read with ``torch.load(..., weights_only=True)``,
so loading one never runs code from the file.

The agent plays greedily by default (the most probable legal action);
``greedy=False`` samples from the policy with the agent's seeded RNG.
`act_batch` answers many decisions with one forward pass, with the choices
`act` makes row by row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent, batch_arrays, can_act_batch, checked_moves
from agents.checkpoint import CHECKPOINT_FORMAT, CheckpointError, build_network, read_checkpoint  # noqa: F401 (re-exported)
from agents.features import batch_features_module, has_batch_features
from agents.heuristic import heuristic_class
from agents.actor_kernels import actor_logits, greedy_moves
from agents.network import actor_arrays, policy_input

CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"


def checkpoint_path(game: str, num_players: int) -> Path:
    return CHECKPOINT_DIR / f"{game}_{num_players}p.pt"


class PPOAgent(Agent):
    """A trained policy network acting on the observation dict of its seat."""

    name = "ppo"

    def __init__(self, game: str, num_players: int, seed: int | None = None, *, greedy: bool = True) -> None:
        super().__init__(game, num_players, seed)
        self.greedy = greedy
        self.net = None
        self.path: Path | None = None
        self.info: dict = {}

    @classmethod
    def load(cls, path, game: str | None = None, num_players: int | None = None, seed: int | None = None,
             greedy: bool = True) -> "PPOAgent":
        """Load a checkpoint; `game` / `num_players`, when given, must match what it was trained for."""
        ckpt = read_checkpoint(path)  # every field and tensor checked before anything is built
        path = Path(path)
        if game is not None and ckpt["game"] != game:
            raise CheckpointError(f"{path}: trained for game {ckpt['game']!r}, not {game!r}")
        if num_players is not None and ckpt["num_players"] != num_players:
            raise CheckpointError(f"{path}: trained for {ckpt['num_players']} players, not {num_players}")
        features, hint = ckpt["features"], ckpt["hint"]
        net = build_network(ckpt)
        agent = cls(ckpt["game"], ckpt["num_players"], seed, greedy=greedy)
        agent.net, agent.path = net, path
        agent._to_input = policy_input(ckpt["game"], ckpt["num_players"], features, hint)
        agent._plain = not (features or hint)  # the policy reads the observation itself
        # Ma's Jong's features for a whole batch in one compiled call (agents/features_batch.py, the same
        # values), and the hint from the heuristic's compiled twin (agents/heuristic/batch.py, the same moves):
        # act and act_batch then build the policy input without a Python call per view.
        hinter = heuristic_class(ckpt["game"])(ckpt["game"], ckpt["num_players"], seed=0) if hint else None
        agent._batch_features = (features and has_batch_features(ckpt["game"])
                                 and (not hint or can_act_batch(hinter)))
        agent._hinter = hinter
        agent._features = batch_features_module(ckpt["game"]) if agent._batch_features else None
        if hinter is not None:
            import importlib

            agent._hint_kernel = (importlib.import_module(hinter.kernel).act_batch,
                                  tuple(getattr(hinter, p) for p in hinter.kernel_params))
        if agent._batch_features:  # what `_feature_moves` hands the compiled call
            strategy = hinter or heuristic_class(ckpt["game"])(ckpt["game"], ckpt["num_players"], seed=0)
            agent._feature_call = (strategy.play_kernel()[1], np.array([1, hinter is not None, agent._features.SIZE], np.int64))
        agent._obs_size = int(ckpt["obs_size"])
        # act() and act_batch() run the compiled actor (agents.actor_kernels.actor_logits): a row's logits
        # do not depend on its batch, and one observation takes microseconds, not torch's call overhead.
        agent._layers = actor_arrays(net)
        agent.info = {k: ckpt[k] for k in ("critic", "meta", "made_by") if k in ckpt}
        return agent

    @classmethod
    def for_game(cls, game: str, num_players: int, seed: int | None = None, checkpoint=None,
                 greedy: bool = True) -> "PPOAgent":
        """The shipped checkpoint for a game and player count (or `checkpoint`, a path)."""
        path = Path(checkpoint) if checkpoint is not None else checkpoint_path(game, num_players)
        if not path.is_file():
            shipped = sorted(p.name for p in CHECKPOINT_DIR.glob("*.pt")) if CHECKPOINT_DIR.is_dir() else []
            raise FileNotFoundError(
                f"no PPO checkpoint for {game} with {num_players} players at {path}. Shipped: "
                f"{', '.join(shipped) or 'none'}. Train one with: python -m train.ppo --game {game} "
                f"--players {num_players} --export {path}"
            )
        return cls.load(path, game=game, num_players=num_players, seed=seed, greedy=greedy)

    def _logits(self, x: np.ndarray) -> np.ndarray:
        """The actor's logits for policy inputs `x` (one row or many), in float64: each row's are the
        same bits alone or in any batch (agents.actor_kernels.actor_logits), so act_batch breaks a
        near-tie as act does."""
        params, dims = self._layers
        rows = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, int(dims[0]))
        out = np.empty((rows.shape[0], int(dims[3])), np.float32)
        actor_logits(rows, params, dims, out)
        return (out[0] if x.ndim == 1 else out).astype(np.float64)

    def _choose(self, logits: np.ndarray, legal: np.ndarray) -> int:
        logits = logits[legal]
        if self.greedy:
            return int(legal[int(np.argmax(logits))])
        p = np.exp(logits - logits.max())
        return int(legal[self.rng.choice(legal.size, p=p / p.sum())])

    def act(self, observation: dict) -> int:
        if self.net is None:
            raise RuntimeError("PPOAgent has no weights: build it with PPOAgent.load(path) or PPOAgent.for_game(...)")
        obs = np.asarray(observation["observation"], np.float32)
        if obs.shape != (self._obs_size,):
            raise ValueError(f"{self.path}: observation has shape {obs.shape}, the policy expects ({self._obs_size},)")
        if self.greedy:  # one compiled call: the logits and the first most probable legal move
            mask = np.asarray(observation["action_mask"])
            if mask.shape != (self._layers[1][3],):
                raise ValueError(f"{self.path}: action mask has shape {mask.shape}, the policy expects ({self._layers[1][3]},)")
            if self._batch_features:  # features, hint and actor in one compiled call
                move = self._feature_moves(obs[None], mask[None])[0]
            else:
                move = self._greedy(self._to_input(obs, mask)[None], mask[None])[0]
            return int(move) if move >= 0 else int(self.legal_actions(observation)[0])  # the all-zeros error
        legal = self.legal_actions(observation)
        mask = np.asarray(observation["action_mask"])
        x = self._batch_input(obs[None], mask[None])[0] if self._batch_features else self._to_input(obs, mask)
        return self._choose(self._logits(x), legal)

    def _batch_input(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy inputs of rows `obs` [N, obs_size] (act: one row), `_to_input`'s values row by
        row, written into one array by the compiled kernels called straight: the game's features
        (`agents.features.BATCH_FEATURES`) and the heuristic's move from its compiled twin."""
        n, size = len(obs), self._obs_size
        rows = np.ascontiguousarray(obs, dtype=np.float32)
        x = np.zeros((n, int(self._layers[1][0])), np.float32)
        x[:, :size] = rows
        f = np.empty((n, self._features.SIZE), np.float32)
        self._features.features_into(rows, self.num_players, f)
        x[:, size:size + f.shape[1]] = f
        if self._hinter is not None:  # the heuristic reads only the view: the seat changes nothing
            kernel, params = self._hint_kernel
            m = np.ascontiguousarray(mask.view(np.int8) if mask.dtype == np.bool_ else mask, dtype=np.int8)
            moves = kernel(rows, m, self.num_players, *params)
            hit = np.flatnonzero(moves >= 0)  # none legal: no hint, and act's all-zeros error follows
            x[hit, size + f.shape[1] + moves[hit]] = 1.0
        return x

    def _feature_moves(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Greedy moves of rows whose policy input `_batch_input` builds, inputs and actor in one
        compiled call (the game's ``network_moves``, `agents.actor_kernels.ppo_moves`): the same
        inputs, so the same moves as `_greedy` of `_batch_input`."""
        table, dims = self._layers
        hint_params, flags = self._feature_call
        moves = np.empty(len(obs), np.int64)
        self._features.network_moves(np.ascontiguousarray(obs, dtype=np.float32),
                                     np.ascontiguousarray(mask.view(np.int8) if mask.dtype == np.bool_ else mask, dtype=np.int8),
                                     self.num_players, hint_params, table, dims, flags, self._features.tables(), moves)
        return moves

    def _greedy(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Each row's first most probable legal move (-1 where none is legal), from `_logits`' bits."""
        table, dims = self._layers
        x = np.ascontiguousarray(x, dtype=np.float32)
        mask = np.ascontiguousarray(mask.view(np.int8) if mask.dtype == np.bool_ else mask)
        out, moves = np.empty((x.shape[0], int(dims[3])), np.float32), np.empty(x.shape[0], np.int64)
        greedy_moves(x, mask, table, dims, out, moves)
        return moves

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._row_rngs: dict | None = None  # (row, seat) -> generator, once seed_rows is called

    def seed_rows(self, rows, seeds) -> None:
        """Sampling in act_batch: seat s at batch row rows[i] draws from then on from the generator of
        PPOAgent(..., seed=seeds[i, s]), as that one-game agent would (agents/base.py's protocol)."""
        self._row_rngs = self._row_rngs or {}
        for row, row_seeds in zip(np.asarray(rows).tolist(), np.asarray(seeds).tolist()):
            for s, seed in enumerate(row_seeds):
                self._row_rngs[(row, s)] = np.random.default_rng(seed)

    def act_batch(self, obs, mask, seat, rows=None) -> np.ndarray:
        """Moves for N decisions at once (agents/base.py's protocol): obs [N, obs_size], mask
        [N, num_actions], seat [N], and `rows` [N], the batch rows they are (default 0..N-1). One
        forward pass, and `act`'s choice for every row: greedy, or sampled with the agent's
        generator serving the rows in order (or, after `seed_rows`, each row and seat's own). The
        policy reads only its own view, so the seat changes only whose stream draws."""
        if self.net is None:
            raise RuntimeError("PPOAgent has no weights: build it with PPOAgent.load(path) or PPOAgent.for_game(...)")
        obs, mask, seat = batch_arrays(obs, mask, seat, self._obs_size, self.net.actor[-1].out_features)
        if self.greedy and self._batch_features:  # features, hint and actor in one compiled call, as act's
            return checked_moves(self._feature_moves(obs, mask))
        if self._plain:
            x = obs
        elif self._batch_features:
            x = self._batch_input(obs, mask)
        else:
            x = np.stack([self._to_input(o, m) for o, m in zip(obs, mask)])
        if self.greedy:  # the first most probable legal move of each row, as act's
            return checked_moves(self._greedy(x, mask))
        logits = self._logits(x)
        legal = mask.view(bool)
        out = np.empty(len(obs), np.int64)
        keep = self.rng
        try:
            for t in range(len(obs)):
                if self._row_rngs is not None:
                    self.rng = self._row_rngs[(t if rows is None else int(rows[t]), int(seat[t]))]
                out[t] = self._choose(logits[t], np.flatnonzero(legal[t]))
        finally:
            self.rng = keep
        return out

