"""Where numba keeps this project's compiled kernels: each kernel in a folder named by its sources.

Numba checks a cached kernel against the file that defines it, and no other. Many kernels here
compile in code from other files: a tournament's lineup runs the PPO actor
(`agents.actor_kernels`), the heuristics step the engines (`envs.vector`), and kernels read the
engines' constants. After a change to one of those files (a `git pull` in an editable install),
numba would load the old machine code for the kernels that use it, and play the old rules or
the old network without a word.

So `use()`, called when `envs` is imported (before any kernel is defined), puts a locator of its
own first in numba's list (`SourcesLocator`): a kernel of this project is cached in
``.numba-cache/<key>/``, where the key is a hash of the text of every file the kernel compiles
in. Those files are found from the source, without running it (`sources_of`): the kernel's
own file, and for every name its body uses, the file that defines the name (a kernel it calls
or inlines, a kernel passed as an argument, a constant, a module's attribute), followed through
imports and through the bodies of the functions and constants it reaches. An edit to a file
therefore starts an empty cache for the kernels that use it, which compile once
(`envs.vector.compiling` says so), and no other: editing one game's kernels leaves the other
games' caches warm.

Where the project's folder cannot be written (an installed copy), the caches go under the
user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``cardzoo/numba``). A
``NUMBA_CACHE_DIR`` set in the environment is used as the parent instead. Key folders of the
project's own cache untouched for a week are removed (real folders inside that cache only:
never through a link); a key folder is touched whenever a process uses it.

Where no cache folder can be made (``.numba-cache`` is a file, ``NUMBA_CACHE_DIR`` names a
folder that cannot be created), `use()` says so once on stderr and points the caches at an empty
temporary folder, removed at exit: every kernel then compiles afresh in that process, and
nothing stale is ever loaded from numba's own cache. The analysis reads regular ``.py`` files
only (an editor's dangling lock link such as ``.#bot.py`` is skipped) and never makes an import
fail: a file it cannot read still changes the key.
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the folder holding envs/ and agents/
PACKAGES = ("envs", "agents", "train", "experiments", "lab")  # where kernels live and what they compile in
KEEP_SECONDS = 7 * 24 * 3600
_FOLDER: list[Path] = []  # the parent of the key folders, once `use()` has chosen it


# ---------------------------------------------------------------- what a kernel compiles in
def module_file(name: str) -> Path | None:
    """The file of project module `name` ("envs.vector.neu"), or None when it is none of ours."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def module_name(path: Path) -> str | None:
    """The dotted name of a project file, or None outside the packages."""
    try:
        parts = Path(path).resolve().relative_to(ROOT).with_suffix("").parts
    except ValueError:
        return None
    if not parts or parts[0] not in PACKAGES:
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements(body: list):
    """Every statement in `body` and in the blocks under it (imports are statements: no need to
    walk the expressions, which are most of a module's nodes)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _statements(getattr(node, field, None) or [])


def _summary(path: Path) -> tuple[str, dict, dict]:
    """A module file's digest, its imports (name -> (module, attribute or None)) and, for each of
    its top-level names, the (module, name) pairs its definition refers to: names of its module,
    imported names, and attributes of imported modules (``V.step_rows``)."""
    try:
        text = path.read_bytes()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError) as error:
        return hashlib.sha256(f"unreadable: {error}".encode()).hexdigest(), {}, {}
    name = module_name(path) or ""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imports: dict[str, tuple[str, str | None]] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    imports[a.asname] = (a.name, None)
                else:
                    imports[a.name.split(".")[0]] = (a.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                imports[a.asname or a.name] = (sub, None) if module_file(sub) else (base, a.name)
    defs: dict[str, list] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        defs.setdefault(n.id, []).append(node)
    uses = {item: _uses(nodes, name, imports, defs) for item, nodes in defs.items()}
    return hashlib.sha256(text).hexdigest(), imports, uses


def _uses(nodes: list, mod: str, imports: dict, defs: dict) -> tuple[tuple[str, str | None], ...]:
    """The (module, name) pairs the definitions `nodes` of module `mod` refer to."""
    out = []
    for n in (n for node in nodes for n in ast.walk(node)):
        if isinstance(n, ast.Attribute):
            chain, base = [], n
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in imports and imports[base.id][1] is None:
                target = imports[base.id][0]
                for attr in reversed(chain):  # a.b.c: module a.b when that is one, then its name c
                    if module_file(f"{target}.{attr}"):
                        target = f"{target}.{attr}"
                        out.append((target, None))
                    else:
                        out.append((target, attr))
                        break
        elif isinstance(n, ast.Name):
            if n.id in defs:
                out.append((mod, n.id))
            elif n.id in imports:
                out.append(imports[n.id])
    return tuple(dict.fromkeys(out))


# The summaries, kept on disk beside the caches (keyed by each file's path, mtime and size), so
# that a process reads its kernels' keys without parsing the sources again.
_MEMO: dict = {}
_MEMO_STATE = {"loaded": False, "changed": False}


def _memo_path() -> Path | None:
    return _FOLDER[0] / "sources.pickle" if _FOLDER else None


def _load_memo() -> None:
    _MEMO_STATE["loaded"] = True
    path = _memo_path()
    try:
        with open(path, "rb") as f:
            memo = pickle.load(f)
        if isinstance(memo, dict):
            _MEMO.update(memo)
    except Exception:  # noqa: BLE001 - missing, damaged or of another version: made again
        pass


def _save_memo() -> None:
    path = _memo_path()
    if not _MEMO_STATE["changed"] or path is None:
        return
    for stamp in list(_MEMO):  # only the files as they are now
        try:
            st = os.stat(stamp[0])
            if (st.st_mtime_ns, st.st_size) != stamp[1:]:
                del _MEMO[stamp]
        except OSError:
            del _MEMO[stamp]
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".sources-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(_MEMO, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # whole or not at all, whichever process writes last
    except OSError:
        pass


@functools.lru_cache(maxsize=None)  # per process: a kernel compiles once in a process
def _module(name: str) -> tuple[Path, str, dict, dict] | None:
    path = module_file(name)
    if path is None:
        return None
    if not _MEMO_STATE["loaded"]:
        _load_memo()
    try:
        st = path.stat()
        stamp = (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (str(path), 0, 0)
    summary = _MEMO.get(stamp)
    if summary is None:
        summary = _MEMO[stamp] = _summary(path)
        _MEMO_STATE["changed"] = True
    return (path, *summary)


def sources_of(module: str, name: str | None) -> dict[Path, str]:
    """Every project file that `name` of `module` (a kernel, a constant; None: the module as a
    whole) compiles in, with the digest of its text: see the module docstring."""
    found: dict[Path, str] = {}
    seen: set[tuple[str, str | None]] = set()
    todo = [(module, name)]
    while todo:
        mod, item = todo.pop()
        if (mod, item) in seen:
            continue
        seen.add((mod, item))
        got = _module(mod)
        if got is None:
            continue
        path, digest, imports, uses = got
        found[path] = digest
        if item is None:
            continue
        if item in uses:
            todo += uses[item]
        elif item in imports:
            todo.append(imports[item])
        elif module_file(f"{mod}.{item}"):
            todo.append((f"{mod}.{item}", None))
    return found


def kernel_key(py_file: str, qualname: str) -> str:
    """The first 16 hex digits of a SHA-256 over the paths and texts of every file the kernel
    `qualname` of `py_file` compiles in (a nested function: everything its file uses)."""
    module = module_name(Path(py_file))
    top = qualname.split(".")[0] if "<locals>" not in qualname else None
    if top is None:  # a function made inside another: all of its file's names
        _, _, _, uses = _module(module) or (None, "", {}, {})
        files: dict[Path, str] = {}
        for name in uses:
            files.update(sources_of(module, name))
    else:
        files = sources_of(module, top)
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path.relative_to(ROOT).as_posix()}\0{files[path]}\0".encode())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------- numba's side
def _locator_class():
    from numba.core.caching import _CacheLocator

    class SourcesLocator(_CacheLocator):
        """numba's cache locator for this project's kernels: ``<cache>/<kernel_key>/<file's folder>``."""

        _touched: set = set()

        def __init__(self, py_func, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._key = kernel_key(py_file, getattr(py_func, "__qualname__", py_func.__name__))
            self._folder = _FOLDER[0] / self._key
            self._cache_path = str(self._folder / self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self) -> str:
            return self._cache_path

        def get_source_stamp(self):  # the key covers the file's text already (a touch changes nothing)
            return self._key

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _FOLDER or module_name(Path(py_file)) is None:
                return None  # not ours: numba's own locators
            try:
                self = cls(py_func, py_file)
                self.ensure_cache_path()
                if self._folder not in cls._touched:  # in use: not pruned
                    cls._touched.add(self._folder)
                    os.utime(self._folder)
            except (OSError, ValueError):
                return None
            return self

    return SourcesLocator


def _parent() -> tuple[Path, bool]:
    """The folder that holds the key folders, and whether it is this project's own (to prune)."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given), False
    if os.access(ROOT, os.W_OK):
        return ROOT / ".numba-cache", True
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cardzoo" / "numba", True


def _prune(parent: Path) -> None:
    """Remove key folders (16 hex digits) that no process has used for `KEEP_SECONDS`."""
    if parent.is_symlink():  # the cache's own folder only, never a link's target
        return
    old = time.time() - KEEP_SECONDS
    for folder in parent.iterdir():
        name = folder.name
        if (len(name) == 16 and all(c in "0123456789abcdef" for c in name)
                and not folder.is_symlink() and folder.is_dir() and folder.stat().st_mtime < old):
            shutil.rmtree(folder, ignore_errors=True)


def use() -> Path:
    """Put `SourcesLocator` first in numba's locators, its caches under this project's cache
    folder (made if new; old key folders pruned), and return that folder; where it cannot be
    made, an empty temporary one (said once; importing envs must not fail on it)."""
    from numba import config
    from numba.core import caching

    parent, ours = _parent()
    try:
        new = not parent.is_dir()
        parent.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=parent).close()
        if ours and not new:
            _prune(parent)
    except OSError as error:
        folder = Path(tempfile.mkdtemp(prefix="cardzoo-numba-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        print(f"cardzoo: cannot use the kernel cache {parent} ({error.strerror or error}); kernels compile afresh "
              "in this process and are not kept", file=sys.stderr)
        parent = folder
    _FOLDER[:] = [parent]
    atexit.register(_save_memo)
    locators = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.68
    locators = locators._locator_classes
    if not any(getattr(c, "__name__", "") == "SourcesLocator" for c in locators):
        locators.insert(0, _locator_class())
    config.CACHE_DIR = str(parent / "other")  # numba functions of other packages: numba's own keys
    return parent
