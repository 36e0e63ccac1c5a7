"""The process a student's exercise file runs in (`experiments.exercises`): started fresh.

    python -m experiments.exercise_child FILE NUMBER

It is a new interpreter, so nothing of the checker (its reference answers, its frames) is in
its memory, and it never imports the checker. It imports the file, then answers the checker's
calls, read from stdin, until stdin closes. What it sends back on its stdout is plain data
(`encode`): nothing, an integer, an array of numbers (``.npy`` bytes without pickles), or why a
call failed; the checker decodes it without unpickling anything. The file's own prints go to
stderr.

Out of the file's reach, by an audit hook: the checker's source and the shipped solutions
(by path, and by inode, so a hard link is caught; a relative path is resolved from the current
folder and from every folder the process holds open, so ``os.open(..., dir_fd=fd)`` is caught too), for exercise 3 the shipped players too
(their modules and files), and starting a process of any kind. The checker also kills the
child's whole process tree when the check ends. This is a guard against a student taking a
shortcut, not a sandbox against code that sets out to escape (ctypes can reach libc).
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
CHECKER = ROOT / "experiments" / "exercises.py"
SOLUTIONS = ROOT / "docs" / "exercises" / "solutions"
# Exercise 3 asks for a Neu agent of the student's own: cardzoo's own players are out of reach.
PLAYERS = ("agents.heuristic", "agents.search", "agents.ppo", "agents.cfr", "agents.batch_kernels",
           "agents.checkpoint", "agents.network", "agents.features", "agents.features_batch")
PLAYER_PATHS = [ROOT / "agents" / "heuristic", ROOT / "agents" / "search", ROOT / "agents" / "checkpoints"] + [
    ROOT / "agents" / f"{name}.py" for name in ("ppo", "cfr", "batch_kernels", "checkpoint", "network", "features", "features_batch")]
STARTS_A_PROCESS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                    "pty.spawn", "os.startfile")
LINKS = ("os.link", "os.symlink")

HEADER = struct.Struct("<cI")  # a frame: its kind, then its length
MAX_FRAME = 64 << 20  # bytes of one answer (the largest the checks ask for is 40,000 actions)


class _Refused(ModuleType):
    """A module the file may not use: nothing to borrow from it."""

    def __getattr__(self, name):
        raise ImportError(f"{self.__name__} is out of reach of an exercise file: the checker (and its reference answers) "
                          f"and cardzoo's own players cannot be used by a solution")


def _refuse_modules(names) -> None:
    for name in names:
        sys.modules[name] = _Refused(name)


def _open_folders() -> list[Path] | None:
    """The folders this process holds open as descriptors (Linux's /proc/self/fd); [] when only the
    descriptors it started with are open, None where they cannot be listed and a folder may be open."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None if _OPENED_FOLDER else []
    folders = []
    for name in names:
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("/") and os.path.isdir(target):
            folders.append(Path(target))
    return folders


_OPENED_FOLDER: list[bool] = []  # set once the file opens a folder (where /proc cannot list descriptors)


def _guard(path: Path, number: int) -> None:
    mine = path.resolve()
    forbidden_dirs = [SOLUTIONS.resolve()] + ([p.resolve() for p in PLAYER_PATHS if p.is_dir()] if number == 3 else [])
    forbidden_files = [CHECKER.resolve()] + ([p.resolve() for p in PLAYER_PATHS if p.is_file()] if number == 3 else [])
    inodes = set()
    for p in forbidden_files + [f for d in forbidden_dirs for f in d.rglob("*") if f.is_file()]:
        try:
            st = p.stat()
            inodes.add((st.st_dev, st.st_ino))
        except OSError:
            pass

    def out_of_reach(target: Path) -> bool:
        if target == mine:
            return False
        if target in forbidden_files or any(d == target or d in target.parents for d in forbidden_dirs):
            return True
        try:
            st = target.stat()
        except OSError:
            return False
        return (st.st_dev, st.st_ino) in inodes

    def targets(arg) -> list[Path]:
        """Every file a path may name: itself from the current folder and, when relative, from each
        folder the process holds open (an ``open`` event does not say which ``dir_fd`` it uses)."""
        path = Path(os.fsdecode(arg))
        bases = [] if path.is_absolute() else _open_folders()
        if bases is None:  # no way to list them: refuse the relative open itself
            raise PermissionError("an exercise file may not open a path relative to a folder's descriptor here")
        return [(base / path).resolve() for base in [Path.cwd(), *bases]]

    def hook(event, args):
        if event.startswith(STARTS_A_PROCESS):
            raise PermissionError("an exercise file may not start a process")
        if event in LINKS or (event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike))):
            if event == "open" and not _OPENED_FOLDER and os.path.isdir(args[0]):
                _OPENED_FOLDER.append(True)
            for arg in (args[:2] if event in LINKS else args[:1]):
                try:
                    found = targets(arg)
                except (OSError, ValueError, TypeError):
                    continue
                for target in found:
                    if out_of_reach(target):
                        raise PermissionError(f"{target.name} is the checker's or a shipped solution or player; "
                                              f"a solution cannot read it")

    sys.addaudithook(hook)
    _refuse_modules(("experiments.exercises",) + (PLAYERS if number == 3 else ()))


def encode(kind: bytes, value=None) -> bytes:
    """One answer as a frame of plain bytes (never a pickle)."""
    if kind == b"N":
        body = b""
    elif kind == b"I":
        body = struct.pack("<q", value)
    elif kind == b"A":
        buf = io.BytesIO()
        import numpy as np

        np.save(buf, value, allow_pickle=False)
        body = buf.getvalue()
    else:  # an error or a refusal: text
        body = str(value).encode(errors="replace")[:2000]
    return HEADER.pack(kind, len(body)) + body


def answer_of(value) -> bytes:
    """What a call returned, as a frame: None, an integer, or an array of numbers; anything else is named."""
    import numpy as np

    if value is None:
        return encode(b"N")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and -2**63 <= value < 2**63:
        return encode(b"I", int(value))
    try:
        array = np.asarray(value)
    except Exception:
        array = None
    if array is not None and array.dtype.kind in "biuf":
        return encode(b"A", array)
    return encode(b"T", f"returned {type(value).__name__}, not an integer or an array of numbers")


def _first(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0][:300]


def serve(path: Path, number: int) -> None:
    out = os.fdopen(os.dup(1), "wb", buffering=0)  # the answers; fd 1 goes to stderr for the file's prints
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    calls = sys.stdin.buffer
    sys.stdin = open(os.devnull)

    def send(frame: bytes) -> None:
        out.write(frame)

    try:
        # Imported before the guard: importing envs sets up numba's cache (envs.kernel_cache), which
        # reads the sources a kernel compiles in (players' files among them); the file may not.
        import envs  # noqa: F401

        _guard(path, number)
        import importlib.util

        spec = importlib.util.spec_from_file_location(f"exercise_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ImportError("not a Python file")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        send(encode(b"N"))
    except BaseException as e:  # SystemExit and KeyboardInterrupt too: the check says what happened
        send(encode(b"M", f"{type(e).__name__}\n{_first(e)}"))
        return
    objects: list = []
    while True:
        head = calls.read(4)
        if len(head) < 4:
            return
        (size,) = struct.unpack("<I", head)
        kind, name, oid, args = pickle.loads(calls.read(size))  # the checker's calls: trusted, this way
        try:
            if kind == "ping":
                value = None
            elif kind == "call":
                value = getattr(module, name)(*args)
            elif kind == "new":
                objects.append(getattr(module, name)())
                value = len(objects) - 1
            else:
                method = getattr(objects[oid], name, None)
                value = method(*args) if callable(method) else None
            frame = answer_of(value)
        except NotImplementedError as e:
            frame = encode(b"D", f"NotImplementedError\n{_first(e)}")
        except BaseException as e:
            frame = encode(b"V" if isinstance(e, ValueError) else b"R", f"{type(e).__name__}\n{_first(e)}")
        send(frame)


def _die_with_parent() -> None:
    """On Linux: killed when the checker dies, and the parent of its own orphans (so that the
    checker's kill of its tree finds them)."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


if __name__ == "__main__":
    _die_with_parent()
    serve(Path(sys.argv[1]), int(sys.argv[2]))
