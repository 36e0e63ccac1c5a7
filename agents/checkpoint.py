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
    made_by       how it was made: {"command": the command line that made it, "teacher": the agent
                  spec its warm start imitated ("" when none), "steps": env steps played by then}
                  (absent in files written before the field existed)
    args, meta    the training arguments; meta["update"] etc. in a resumable run's checkpoint
    optimizer     (resumable checkpoints only) the Adam state

`read_checkpoint` checks everything (the header's types and bounds, and every
tensor's name, shape and values against the header) before anything is
built, and gives one `CheckpointError` naming the file and the field. Before
any tensor is read, the file's index and its pickle (at most `MAX_PICKLE`
bytes, read with stand-ins for the tensors) are checked: a compressed member
(``torch.save`` never compresses), a top-level key outside the format's, and
tensor data that does not match what the pickle declares or exceeds what the
header's network can hold (`tensor_budget`: the model, an Adam state and a
resumable run's opponent pool, at 8 bytes a number) are refused unread. So loading costs at most about that
budget in memory, never what a hostile file would decompress to. Numbers that are finite but
unusable are refused too: a normaliser's std below `MIN_STD` (dividing by it
overflows), weights beyond `MAX_WEIGHT` (trained networks stay below 1) and,
last, a network whose logits or value on probe inputs are not finite.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import pickletools
import re
import warnings
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

# torch and the network are imported where a checkpoint is read, built or saved: importing this
# module (its constants, for a trainer's --help) stays quick.
if TYPE_CHECKING:
    from agents.network import ActorCritic

CHECKPOINT_FORMAT = "cardzoo-ppo-1"
MAX_HIDDEN = 4096  # the shipped networks use 128-256; a larger header is damage or a trap
HEADER = ("game", "num_players", "obs_size", "num_actions", "critic_size", "hidden", "model")
# A resumable checkpoint's meta["pool"]: at most this many frozen copies of the network (train.ppo's
# opponent pool, the first snapshot and the most recent ones).
POOL_SNAPSHOTS = 9
MIN_STD, MAX_STD = 1e-8, 1e6  # a normaliser's std (trained ones: 0.05 to 40; measure_scales floors it at 1e-6)
MAX_MEAN = 1e6  # a normaliser's mean (trained ones: below 50)
MAX_WEIGHT = 1e4  # every weight and bias (trained ones: below 1)
# Pickle instructions that import or call something: a refused file holding them would run code.
CODE_OPCODES = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"}


# "oracle": written (as false) by earlier trainers, which also had an input of every hand; read, never written.
KEYS = frozenset(HEADER) | {"format", "critic", "features", "hint", "oracle", "made_by", "args", "meta", "optimizer"}  # a checkpoint's top level
MAX_COMMAND = 8000  # characters of made_by's command and teacher (a long command line: under 1,000)
MAX_PICKLE = 4 << 20  # bytes of a checkpoint's pickle (the shipped ones: under 10 kB)
_ITEMSIZE = {"Double": 8, "Float": 4, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2, "Char": 1, "Byte": 1, "Bool": 1}


class CheckpointError(ValueError):
    """A file that is not a usable PPO checkpoint for the game asked for."""


class _Storage:
    """A stand-in for a tensor's storage while the pickle is scanned: its zip member and declared bytes."""

    def __init__(self, key: str, nbytes: int) -> None:
        self.key, self.nbytes = key, nbytes


class _TensorStub:
    def __init__(self, storage, offset, size, *rest) -> None:
        self.storage = storage


class _Dict(dict):
    """collections.OrderedDict while the pickle is scanned (a state dict carries ``_metadata``)."""


class _Unscannable(Exception):
    """The pickle uses something the scan does not stand in for: torch.load decides, as before."""


class _Scan(pickle.Unpickler):
    def __init__(self, file) -> None:
        super().__init__(file)
        self.storages: dict[str, int] = {}  # zip member (under data/) -> bytes the pickle declares

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return _Dict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _TensorStub
        if module == "torch" and name.endswith("Storage") and name[:-7] in _ITEMSIZE:
            return name[:-7]
        raise _Unscannable(f"{module}.{name}")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and pid[1] in _ITEMSIZE):
            raise _Unscannable(repr(pid)[:80])
        st = _Storage(str(pid[2]), _ITEMSIZE[pid[1]] * int(pid[4]))
        self.storages[st.key] = st.nbytes
        return st


def tensor_budget(shapes: dict) -> int:
    """The most tensor bytes a checkpoint of this network may hold: the weights, an Adam state (two
    copies more) and a resumable run's opponent pool (`POOL_SNAPSHOTS` copies), at 8 bytes a
    number, and 1 MB for the rest (the optimizer's step counts)."""
    numel = sum(math.prod(shape) for shape in shapes.values())
    return (3 + POOL_SNAPSHOTS) * 8 * numel + (1 << 20)


def _scan(path: Path) -> tuple[dict, dict, dict] | None:
    """The checkpoint's dict with stand-ins for its tensors, its storages and the zip's member sizes, read
    without reading any tensor; None when the file is not torch's zip or its pickle is beyond the scan.
    Refuses compressed members and a pickle over `MAX_PICKLE` bytes, unread."""
    try:
        if not zipfile.is_zipfile(path):
            return None
        z = zipfile.ZipFile(path)
        infos = z.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    with z:
        packed = [i.filename for i in infos if i.compress_type != zipfile.ZIP_STORED]
        if packed:
            raise CheckpointError(f"{path}: refused unread: member {packed[0]!r} is compressed (torch.save stores every member as is)")
        pkl = [i for i in infos if i.filename.endswith("data.pkl")]
        if not pkl:
            return None
        if pkl[0].file_size > MAX_PICKLE:
            raise CheckpointError(f"{path}: refused unread: its pickle is {pkl[0].file_size} bytes, more than {MAX_PICKLE}")
        prefix = pkl[0].filename[: -len("data.pkl")]
        try:
            with z.open(pkl[0]) as f:
                scanner = _Scan(io.BytesIO(f.read(MAX_PICKLE + 1)))
                ckpt = scanner.load()
            storages = scanner.storages
        except _Unscannable:
            return None
        except Exception:  # noqa: BLE001 - a damaged pickle: torch.load says so
            return None
    sizes = {i.filename[len(prefix) + len("data/"):]: i.file_size for i in infos if i.filename.startswith(prefix + "data/")}
    return (ckpt, storages, sizes) if isinstance(ckpt, dict) else None


def _short(text: str, limit: int = 200) -> str:
    """The first sentence of an error message, cut at a word if it is still long."""
    first = (text.strip().splitlines() or [""])[0]
    first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0] + " ..."


def _runs_code(path: Path) -> bool:
    """Whether the file is a well-formed pickle (bare, or torch's zip with data.pkl) that imports or
    calls something. Read with pickletools, which parses and never executes. The whole stream must parse
    and balance its stack first (pickletools.dis checks both): random bytes often decode to a code
    instruction before they break, and would otherwise be called code rather than damage."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                names = [n for n in z.namelist() if n.endswith("data.pkl")]
                data = z.read(names[0]) if names else b""
        else:
            data = path.read_bytes()
        pickletools.dis(data, out=io.StringIO())
        return any(op.name in CODE_OPCODES for op, _, _ in pickletools.genops(data))
    except Exception:  # noqa: BLE001 - not a pickle at all
        return False


def _load(path: Path) -> dict:
    import torch

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


def _header(ckpt: Any, path: Path) -> tuple:
    """The header, checked for type and range before it is used for anything (tensors are not read):
    the engine, the policy's input size, the action count, the critic's input size and the width."""
    import envs
    from agents.network import critic_size, input_size

    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        found = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise CheckpointError(f"{path}: not a cardzoo PPO checkpoint (format {found!r}, expected {CHECKPOINT_FORMAT!r})")
    missing = [k for k in HEADER if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: checkpoint lacks {', '.join(missing)}")

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
    for key in ("features", "hint", "oracle"):
        if not isinstance(ckpt.setdefault(key, False), bool):
            raise CheckpointError(f"{path}: field {key!r} must be true or false, got {ckpt[key]!r}")
    if ckpt["oracle"]:
        raise CheckpointError(f"{path}: field 'oracle': the policy reads every hand (oracle guiding's training "
                              "input), which no player may; cardzoo no longer reads such checkpoints")
    try:
        size_in = input_size(engine, ckpt["features"], ckpt["hint"])
    except ValueError as e:  # features asked for a game that has none
        raise CheckpointError(f"{path}: field 'features': {e}") from None
    expected_critic = critic_size(engine, critic, ckpt["features"], ckpt["hint"])
    if _whole(ckpt, "critic_size", path, 1, 10**6) != expected_critic:
        raise CheckpointError(f"{path}: field 'critic_size' is {ckpt['critic_size']}, but a {critic} critic for {game} reads {expected_critic}")
    hidden = _whole(ckpt, "hidden", path, 1, MAX_HIDDEN)
    if "made_by" in ckpt:
        _made_by(ckpt["made_by"], path)
    return engine, size_in, engine.num_actions, expected_critic, hidden


def _made_by(made_by: Any, path: Path) -> None:
    """The provenance field: exactly a command, a teacher and a step count."""
    if not isinstance(made_by, dict) or set(made_by) != {"command", "teacher", "steps"}:
        keys = sorted(map(str, made_by)) if isinstance(made_by, dict) else type(made_by).__name__
        raise CheckpointError(f"{path}: field 'made_by' must hold exactly command, teacher and steps, got {keys}")
    for key, most in (("command", MAX_COMMAND), ("teacher", MAX_COMMAND)):
        if not isinstance(made_by[key], str) or len(made_by[key]) > most:
            raise CheckpointError(f"{path}: field 'made_by.{key}' must be text of at most {most} characters")
    steps = made_by["steps"]
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 10**15:
        raise CheckpointError(f"{path}: field 'made_by.steps' must be a whole number of env steps, got {steps!r}")


def read_checkpoint(path) -> dict:
    """Load a checkpoint file and check it completely; errors name the file and the field."""
    import torch

    from agents.network import network_shapes

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"PPO checkpoint {path} {'is a directory, not a file' if path.is_dir() else 'does not exist'}")
    scanned = _scan(path)
    if scanned is not None:  # the header and the tensor sizes, before any tensor is read
        stub, storages, sizes = scanned
        _, *sized = _header(stub, path)
        unknown = sorted(str(k) for k in stub if k not in KEYS)
        if unknown:
            raise CheckpointError(f"{path}: refused unread: unknown top-level key(s) {', '.join(map(repr, unknown[:5]))}")
        shapes = network_shapes(*sized)
        for key, nbytes in storages.items():
            if sizes.get(key) != nbytes:
                raise CheckpointError(f"{path}: refused unread: tensor data {key!r} is {sizes.get(key)} bytes, its pickle declares {nbytes}")
        total, budget = sum(storages.values()), tensor_budget(shapes)
        if total > budget:
            raise CheckpointError(f"{path}: refused unread: {total} bytes of tensors, more than the {budget} "
                                  f"the header's network (hidden {stub['hidden']}) can hold")
    ckpt = _load(path)
    engine, size_in, _, expected_critic, hidden = _header(ckpt, path)

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
    import torch

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
    from agents.network import ActorCritic, input_size

    engine = envs.info(ckpt["game"], ckpt["num_players"])
    net = ActorCritic(input_size(engine, ckpt["features"], ckpt["hint"]), ckpt["num_actions"],
                      ckpt["critic_size"], ckpt["hidden"])
    net.load_state_dict(ckpt["model"])
    return net.eval()


def make_checkpoint(net: ActorCritic, *, game: str, num_players: int, critic: str, features: bool, hint: bool,
                    hidden: int, args: dict, meta: dict, optimizer_state: dict | None = None,
                    made_by: dict | None = None) -> dict:
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
        **({"made_by": made_by} if made_by is not None else {}),
        "model": net.state_dict(),
        "args": args,
        "meta": meta,
        **({"optimizer": optimizer_state} if optimizer_state is not None else {}),
    }


def save_checkpoint(obj: dict, path) -> None:
    import torch

    tmp = f"{path}.tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)  # never leave a half-written checkpoint behind
