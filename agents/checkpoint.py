"""The PPO checkpoint format: what a file holds, how it is checked, how the network is rebuilt.

A checkpoint is a plain dict of tensors, numbers and strings, read with
``torch.load(..., weights_only=True)``, so loading one never runs code from
the file:

    format        "cardzoo-ppo-1"
    game          a game name (envs.available_games())
    num_players   the player count it was trained for
    obs_size      the env's observation size then (a changed env is refused)
    num_actions   the env's action count then
    critic        "plain" or "global" (the value also read env.state())
    features      the policy also read the game's hand-made features
    hint          ... and a one-hot of the heuristic's move
    critic_size   the critic's input size
    hidden        width of the two hidden layers
    model         the ActorCritic state dict (weights and input normalisers)
    args, meta    the training arguments; meta["update"] etc. in a resumable run's checkpoint
    optimizer     (resumable checkpoints only) the Adam state

`read_checkpoint` checks everything (the header's types and bounds, and every
tensor's name, shape and values against the header) before anything is
built, so a hostile or damaged file costs no memory and gives one
`CheckpointError` naming the file and the field. Numbers that are finite but
unusable are refused too: a normaliser's std below `MIN_STD` (dividing by it
overflows), weights beyond `MAX_WEIGHT` (trained networks stay below 1) and,
last, a network whose logits or value on probe inputs are not finite.
"""

from __future__ import annotations

import os
import pickle
import pickletools
import re
import warnings
import zipfile
from pathlib import Path

import torch

from agents.network import ActorCritic, critic_size, input_size, network_shapes

CHECKPOINT_FORMAT = "cardzoo-ppo-1"
MAX_HIDDEN = 4096  # the shipped networks use 128-256; a larger header is damage or a trap
HEADER = ("game", "num_players", "obs_size", "num_actions", "critic_size", "hidden", "model")
MIN_STD, MAX_STD = 1e-8, 1e6  # a normaliser's std (trained ones: 0.05 to 40; measure_scales floors it at 1e-6)
MAX_MEAN = 1e6  # a normaliser's mean (trained ones: below 50)
MAX_WEIGHT = 1e4  # every weight and bias (trained ones: below 1)
# Pickle instructions that import or call something: a refused file holding them would run code.
CODE_OPCODES = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"}


class CheckpointError(ValueError):
    """A file that is not a usable PPO checkpoint for the game asked for."""


def _short(text: str, limit: int = 200) -> str:
    """The first sentence of an error message, cut at a word if it is still long."""
    first = (text.strip().splitlines() or [""])[0]
    first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0] + " ..."


def _runs_code(path: Path) -> bool:
    """Whether the file is a well-formed pickle (bare, or torch's zip with data.pkl) that imports or
    calls something. Read with pickletools, which parses and never executes; random bytes fail to parse."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                names = [n for n in z.namelist() if n.endswith("data.pkl")]
                data = z.read(names[0]) if names else b""
        else:
            data = path.read_bytes()
        return any(op.name in CODE_OPCODES for op, _, _ in pickletools.genops(data))
    except Exception:  # noqa: BLE001 - not a pickle at all
        return False


def _load(path: Path) -> dict:
    try:
        with warnings.catch_warnings():  # torch warns of a foreign pickle's protocol before the error said below
            warnings.simplefilter("ignore", UserWarning)
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        if "weights only" in str(e).lower() and _runs_code(path):
            wanted = re.search(r"GLOBAL ([\w.]+)", str(e))
            what = f" (it asks for {wanted.group(1)}, which no checkpoint needs)" if wanted else ""
            raise CheckpointError(f"{path}: refused: the file would run code when loaded{what}") from None
        raise CheckpointError(f"{path}: not a PPO checkpoint: the file is corrupt or of another kind") from None
    except Exception as e:  # truncated zip, garbage bytes, ...
        raise CheckpointError(f"{path}: not a PPO checkpoint: the file is corrupt or of another kind "
                              f"({type(e).__name__}: {_short(str(e))})") from None


def _whole(ckpt: dict, key: str, path: Path, low: int, high: int) -> int:
    value = ckpt[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise CheckpointError(f"{path}: field {key!r} must be a whole number from {low} to {high}, got {value!r}")
    return value


def read_checkpoint(path) -> dict:
    """Load a checkpoint file and check it completely; errors name the file and the field."""
    import envs

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"PPO checkpoint {path} {'is a directory, not a file' if path.is_dir() else 'does not exist'}")
    ckpt = _load(path)
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        found = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise CheckpointError(f"{path}: not a cardzoo PPO checkpoint (format {found!r}, expected {CHECKPOINT_FORMAT!r})")
    missing = [k for k in HEADER if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: checkpoint lacks {', '.join(missing)}")

    # The header, checked for type and range before it is used for anything.
    game = ckpt["game"]
    if not isinstance(game, str) or game not in envs.available_games():
        raise CheckpointError(f"{path}: field 'game' must be one of {', '.join(envs.available_games())}, got {game!r}")
    num_players = _whole(ckpt, "num_players", path, 2, 64)
    try:
        engine = envs.info(game, num_players)
    except ValueError as e:
        raise CheckpointError(f"{path}: field 'num_players': {e}") from None
    for key, now in (("obs_size", engine.obs_size), ("num_actions", engine.num_actions)):
        if _whole(ckpt, key, path, 1, 10**6) != now:
            raise CheckpointError(
                f"{path}: {key.replace('_', ' ')} {ckpt[key]} in the checkpoint, but {game} "
                f"with {num_players} players has {now} (the env changed since training; retrain)"
            )
    critic = ckpt.setdefault("critic", "plain")
    if critic not in ("plain", "global"):
        raise CheckpointError(f"{path}: field 'critic' must be 'plain' or 'global', got {critic!r}")
    for key in ("features", "hint"):
        if not isinstance(ckpt.setdefault(key, False), bool):
            raise CheckpointError(f"{path}: field {key!r} must be true or false, got {ckpt[key]!r}")
    try:
        size_in = input_size(engine, ckpt["features"], ckpt["hint"])
    except ValueError as e:  # features asked for a game that has none
        raise CheckpointError(f"{path}: field 'features': {e}") from None
    expected_critic = critic_size(engine, critic, ckpt["features"], ckpt["hint"])
    if _whole(ckpt, "critic_size", path, 1, 10**6) != expected_critic:
        raise CheckpointError(f"{path}: field 'critic_size' is {ckpt['critic_size']}, but a {critic} critic for {game} reads {expected_critic}")
    hidden = _whole(ckpt, "hidden", path, 1, MAX_HIDDEN)

    # The weights: exactly the tensors of that network, finite, with usable normalisers.
    model = ckpt["model"]
    if not isinstance(model, dict):
        raise CheckpointError(f"{path}: field 'model' must be a dict of tensors, got {type(model).__name__}")
    shapes = network_shapes(size_in, engine.num_actions, expected_critic, hidden)
    missing, extra = sorted(set(shapes) - set(model)), sorted(set(model) - set(shapes))
    if missing or extra:
        raise CheckpointError(f"{path}: weights do not fit the network (missing {missing or 'none'}, unexpected {extra or 'none'})")
    for name, shape in shapes.items():
        t = model[name]
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise CheckpointError(f"{path}: field 'model.{name}' must be a float tensor, got {type(t).__name__}")
        if tuple(t.shape) != shape:
            raise CheckpointError(f"{path}: weights do not fit the network: 'model.{name}' has shape {tuple(t.shape)}, "
                                  f"the header (hidden {hidden}) needs {shape}")
        if not torch.isfinite(t).all():
            raise CheckpointError(f"{path}: field 'model.{name}' holds NaN or infinite values")
        low, high = (MIN_STD, MAX_STD) if name.endswith("_std") else (-MAX_MEAN, MAX_MEAN) if name.endswith("_mean") else (-MAX_WEIGHT, MAX_WEIGHT)
        if not ((t >= low) & (t <= high)).all():
            what = "a normaliser's std, divided by" if name.endswith("_std") else "a normaliser's mean" if name.endswith("_mean") else "a weight"
            raise CheckpointError(f"{path}: field 'model.{name}' holds values outside [{low:g}, {high:g}] ({what}; "
                                  f"from {t.min().item():.3g} to {t.max().item():.3g}): degenerate, refused")
    _probe(path, ckpt)
    return ckpt


def _probe(path: Path, ckpt: dict) -> None:
    """The network's logits and value on probe inputs (the normalisers' means, and 10 std either side)
    must be finite: weights within bounds can still combine into overflow."""
    net = build_network(ckpt)
    with torch.no_grad():
        x = net.obs_mean + torch.tensor([[0.0], [10.0], [-10.0]]) * net.obs_std
        c = net.critic_mean + torch.tensor([[0.0], [10.0], [-10.0]]) * net.critic_std
        logits, value = net.actor((x - net.obs_mean) / net.obs_std), net.get_value(c)
    if not (torch.isfinite(logits).all() and torch.isfinite(value).all()):
        raise CheckpointError(f"{path}: field 'model': the network's logits or value are not finite on probe inputs: degenerate, refused")


def build_network(ckpt: dict) -> ActorCritic:
    """The network of a checkpoint that `read_checkpoint` accepted."""
    import envs

    engine = envs.info(ckpt["game"], ckpt["num_players"])
    net = ActorCritic(input_size(engine, ckpt["features"], ckpt["hint"]), ckpt["num_actions"], ckpt["critic_size"], ckpt["hidden"])
    net.load_state_dict(ckpt["model"])
    return net.eval()


def make_checkpoint(net: ActorCritic, *, game: str, num_players: int, critic: str, features: bool, hint: bool,
                    hidden: int, args: dict, meta: dict, optimizer_state: dict | None = None) -> dict:
    """What a checkpoint holds (see the module docstring)."""
    import envs

    engine = envs.info(game, num_players)
    return {
        "format": CHECKPOINT_FORMAT,
        "game": game,
        "num_players": num_players,
        "obs_size": int(engine.obs_size),
        "num_actions": int(engine.num_actions),
        "critic": critic,
        "features": bool(features),
        "hint": bool(hint),
        "critic_size": int(net.critic_mean.numel()),
        "hidden": hidden,
        "model": net.state_dict(),
        "args": args,
        "meta": meta,
        **({"optimizer": optimizer_state} if optimizer_state is not None else {}),
    }


def save_checkpoint(obj: dict, path) -> None:
    tmp = f"{path}.tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)  # never leave a half-written checkpoint behind
