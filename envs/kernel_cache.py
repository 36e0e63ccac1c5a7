"""Where numba keeps this project's compiled kernels: a folder named by their sources.

Numba checks a cached kernel against the timestamp of the file that defines it, and no other.
Many kernels here compile in code from other files: a tournament's lineup runs the PPO actor
(`agents.actor_kernels`), the heuristics step the engines (`envs.vector`), and kernels read
the engines' constants. After a change to one of those files (a `git pull` in an editable
install), numba would load the old machine code for the kernels that use it, and play the old
rules or the old network without a word.

So `use()`, called when `envs` is imported (before any kernel is defined), points numba's cache
(``numba.config.CACHE_DIR``) at ``.numba-cache/<hash>`` beside the packages, where the hash
covers the text of every ``.py`` file in ``envs/`` and ``agents/``: a change anywhere there
starts an empty cache, which compiles once (`envs.vector.compiling` says so) and is kept
afterwards. Where that folder cannot be written (an installed copy), the cache goes under the
user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``cardzoo/numba``). A
``NUMBA_CACHE_DIR`` set in the environment is used as the parent instead. When a new cache is
made in one of the project's own folders, those of other sources untouched for a week are
removed (real folders inside that cache only: never through a link).

Where no keyed folder can be made (``.numba-cache`` is a file, ``NUMBA_CACHE_DIR`` names a folder
that cannot be created), `use()` says so once on stderr and points numba at an empty temporary
folder, removed at exit: every kernel then compiles afresh in that process, and nothing stale is
ever loaded from numba's own cache (which checks only each defining file's timestamp). The hash
reads regular ``.py`` files only (an editor's dangling lock link such as ``.#bot.py`` is skipped)
and never makes the import fail.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the folder holding envs/ and agents/
PACKAGES = ("envs", "agents")
KEEP_SECONDS = 7 * 24 * 3600


def source_hash() -> str:
    """The first 16 hex digits of a SHA-256 over every .py file of `PACKAGES`: paths and text."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            try:
                if not path.is_file():  # a dangling link, a folder named *.py, a pipe
                    continue
                text = path.read_bytes()
            except OSError as error:  # unreadable: it still changes the key, and the import goes on
                text = f"unreadable: {error.strerror}".encode()
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + text + b"\0")
    return digest.hexdigest()[:16]


def _parent() -> tuple[Path, bool]:
    """The folder that holds the caches, and whether it is this project's own (to prune)."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given), False
    if os.access(ROOT, os.W_OK):
        return ROOT / ".numba-cache", True
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cardzoo" / "numba", True


def _prune(parent: Path, keep: Path) -> None:
    """Remove the caches of other sources (16 hex digits) that nothing has changed for `KEEP_SECONDS`."""
    if parent.is_symlink():  # the cache's own folder only, never a link's target
        return
    old = time.time() - KEEP_SECONDS
    for folder in parent.iterdir():
        name = folder.name
        if (folder != keep and len(name) == 16 and all(c in "0123456789abcdef" for c in name)
                and not folder.is_symlink() and folder.is_dir() and folder.stat().st_mtime < old):
            shutil.rmtree(folder, ignore_errors=True)


def use() -> Path:
    """Point numba's cache at this source's folder (made if new) and return it; where no such
    folder can be made, at an empty temporary one (said once; importing envs must not fail on it)."""
    from numba import config

    parent, ours = _parent()
    folder = parent / source_hash()
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            if ours:
                _prune(parent, folder)
    except OSError as error:
        folder = Path(tempfile.mkdtemp(prefix="cardzoo-numba-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        print(f"cardzoo: cannot use the kernel cache {parent} ({error.strerror or error}); kernels compile afresh "
              "in this process and are not kept", file=sys.stderr)
    config.CACHE_DIR = str(folder)
    return folder
