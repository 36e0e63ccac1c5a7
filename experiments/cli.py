"""Shared command-line plumbing: one flag vocabulary, values checked before anything runs,
bad arguments get one clear line and exit code 2, and report folders that appear only when complete.

The vocabulary every command uses: ``--game NAME``, ``--games A,B`` (several
names), ``--deals N`` (a count), ``--players``, ``--seed``, ``--workers``, ``--out``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

MAX_COUNT = 10**9  # a count above this is a typo: a billion deals is years of play
MAX_SEED = 2**63 - 1


class DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows a flag's default once: not when its help already names it ("default: ..."),
    not for a required flag, and not for an empty default (None, False, "")."""

    def _get_help_string(self, action):
        text = action.help or ""
        empty = action.default is None or action.default is False or action.default == "" or action.default is argparse.SUPPRESS
        if empty or action.required or "default" in text.lower() or "%(default)" in text:
            return text
        return super()._get_help_string(action)


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but an error is one line naming what is wrong (no usage dump, no traceback);
    ``--help`` shows each default once (`DefaultsShown`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsShown)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def _integer(text: str, what: str) -> int:
    text = text.strip()
    if not text.lstrip("+-").isdecimal() or not text.isascii() or len(text) > 20:
        raise argparse.ArgumentTypeError(f"{what}, got {text[:30]!r}")
    return int(text)


def count(text: str) -> int:
    """A count such as --deals: a whole number from 1 to a billion."""
    n = _integer(text, f"must be a whole number from 1 to {MAX_COUNT:,}")
    if not 1 <= n <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_COUNT:,}, got {n}")
    return n


def workers(text: str) -> int:
    """A count of local worker processes: from 1 to `train.cli.max_workers()` (a few per CPU)."""
    from train.cli import max_workers

    n = count(text)
    if n > max_workers():
        raise argparse.ArgumentTypeError(f"{n} is far above this machine's {os.cpu_count()} CPUs: at most {max_workers()}")
    return n


def count_or_zero(text: str) -> int:
    """A count where 0 means never or none."""
    return 0 if text.strip() == "0" else count(text)


def seed(text: str) -> int:
    """A seed: a whole number from 0 to 2**63 - 1."""
    n = _integer(text, "must be a whole number from 0 to 2**63 - 1")
    if not 0 <= n <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 2**63 - 1, got {n}")
    return n


def seconds(text: str) -> float:
    """A duration: a finite number of seconds, at least 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text[:30]!r}") from None
    if not math.isfinite(x) or x < 0 or x > 10**7:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds from 0 to 10,000,000, got {text[:30]!r}")
    return x


def positive_seconds(text: str) -> float:
    x = seconds(text)
    if x <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text[:30]!r}")
    return x


def names(text: str) -> list[str]:
    """A comma-separated list, blanks dropped, first occurrence kept."""
    return list(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))


def parse_games(text: str, parser: argparse.ArgumentParser, flag: str = "--games") -> list[str]:
    import envs

    available = envs.available_games()
    games = names(text)
    if not games:
        parser.error(f"{flag} is empty; valid games: {', '.join(available)}")
    for g in games:
        if g not in available:
            hint = " (the number of deals is --deals)" if g.isdigit() else ""
            parser.error(f"unknown game {g!r}; valid games: {', '.join(available)}{hint}")
    return games


# -- run metadata ---------------------------------------------------------------
def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    """The commit of the source tree this code runs from, when it is a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        r = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=5)
    return r.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def run_metadata(command: str, seed: int, **extra) -> dict:
    """What is needed to repeat a run: the command, seed, versions and commit."""
    return {
        "command": command,
        "seed": seed,
        **extra,
        "cardzoo_version": _version("cardzoo"),
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
        "pettingzoo": _version("pettingzoo"),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def command_line(prog: str, argv) -> str:
    import shlex

    from train.cli import shown

    return " ".join([prog] + [shlex.quote(shown(a)) for a in (sys.argv[1:] if argv is None else argv)])


# -- report folders ---------------------------------------------------------------
CLAIM = ".cardzoo-run"  # made with O_EXCL in a report folder while a run owns it


def claim_out(out: str | None, parser: argparse.ArgumentParser, prefix: str = "", link_latest: bool = True) -> "ReportFolder":
    """Claim the report folder before any game: --out must be a new folder (in an existing or
    creatable parent) or an empty one, and no other run may hold it; None means the default,
    results/<prefix><timestamp>. Refusals are parser errors (one line, exit 2)."""
    check_out(out, parser)
    try:
        return ReportFolder(None if out is None else Path(out), prefix=prefix, link_latest=link_latest)
    except FileExistsError:
        parser.error((out is not None and stale_claim(Path(out))) or
                     f"--out {out!r} already holds files (or another run is writing there); give a new or empty folder")
    except OSError as e:
        where = f"--out {out!r}" if out is not None else "the report folder under results/"
        parser.error(f"{where}: {e.strerror or e}{f' ({e.filename})' if getattr(e, 'filename', None) else ''}")
    raise AssertionError("unreachable")


def _claim_text(claim: Path) -> str | None:
    """The text of a claim file (its owner's pid and start time), or None when it cannot be read."""
    try:
        return claim.read_text()[:200]
    except OSError:
        return None


def stale_claim(folder: Path) -> str | None:
    """The refusal of a folder left behind by a run that no longer runs (killed where nothing could
    clean up: SIGKILL, a power cut), with the command that clears it; None for any other folder."""
    claim = folder / CLAIM
    rest = [c.name for c in folder.iterdir() if c.name != CLAIM and not c.name.startswith(".partial-")]
    from train.runfolder import lock_owner

    text = _claim_text(claim) if claim.exists() else None
    if text is None or rest or lock_owner(text) is not None:
        return None
    pid = text.split()[0][:20] if text.split() else "unnamed"
    import shlex

    q = shlex.quote(str(folder))
    return (f"--out {str(folder)!r} was claimed by a run (pid {pid}) that is no longer running and left no reports; "
            f"clear it with: rm -r {q}/{CLAIM} {q}/.partial-*")


def check_out(out: str | None, parser: argparse.ArgumentParser) -> None:
    """The checks of `claim_out` without the claim, for a command to refuse a bad --out at once,
    before slower checks; `claim_out` repeats them when it claims."""
    if out is None:
        parent = Path("results")
        if parent.exists() and not parent.is_dir():
            parser.error(f"cannot write reports: {parent} is a file, not a folder")
    else:
        p = Path(out)
        if p.exists() and not p.is_dir():
            parser.error(f"--out {out!r} is a file, not a folder")
        if p.is_dir() and any(p.iterdir()):
            parser.error(stale_claim(p) or f"--out {out!r} already holds files (or another run is writing there); "
                                            f"give a new or empty folder")
        probe = p.parent if str(p.parent) else Path(".")
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir():
            parser.error(f"--out {out!r}: {probe} is a file, not a folder")
        if not os.access(probe, os.W_OK):
            parser.error(f"--out {out!r}: cannot write in {probe}")


class ReportFolder:
    """A report folder claimed before any game and filled only once the run is complete.

    The folder is made (or, if it exists and is empty, taken) at once, with a
    claim file made exclusively, so two runs can never share it. Reports are
    written into a hidden folder inside it; `commit()` moves them into place.
    A run that fails or is interrupted leaves nothing: the folder it made is
    removed again, an empty folder it was given is left empty.

        with ReportFolder(out) as folder:
            write_reports(results, folder.path)
            final = folder.commit()
    """

    def __init__(self, out: Path | None, prefix: str = "", link_latest: bool = True) -> None:
        self.link_latest = link_latest and out is None
        self.parent = Path("results") if out is None else (out.parent if str(out.parent) else Path("."))
        self.parent.mkdir(parents=True, exist_ok=True)
        self.made = False
        if out is None:
            stamp = prefix + time.strftime("%Y%m%d-%H%M%S")
            for i in range(1, 1000):
                target = self.parent / (stamp if i == 1 else f"{stamp}-{i}")
                try:
                    target.mkdir()  # two runs in one second each get their own name, with no check-then-act race
                except FileExistsError:
                    continue
                self.made = True
                break
            else:
                raise RuntimeError(f"no free folder name for {stamp} in {self.parent}")
        else:
            target = out
            try:
                target.mkdir()
                self.made = True
            except FileExistsError:
                if not target.is_dir() or any(target.iterdir()):
                    raise
        self.final = target
        self.claim = target / CLAIM
        try:
            fd = os.open(self.claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            raise  # another run claimed the folder first: it is theirs
        try:
            from train.runfolder import owner_text

            os.write(fd, owner_text().encode())  # whose claim: a dead run's is reported as stale
        finally:
            os.close(fd)
        self.path = target / f".partial-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.path.mkdir()
        self.committed = False

    def commit(self) -> Path:
        """Move every report into the folder (results.md last) and release the claim."""
        names = sorted(os.listdir(self.path), key=lambda n: n == "results.md")
        for name in names:
            os.rename(self.path / name, self.final / name)
        self.path.rmdir()
        self.claim.unlink()
        self.committed = True
        if self.link_latest:
            self._link_latest(self.final)
        return self.final

    def undo(self) -> None:
        """Take a committed folder back (its run could not be recorded)."""
        for child in list(self.final.iterdir()):
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        self.committed = False
        self._give_up()

    def _give_up(self) -> None:
        if self.made:
            shutil.rmtree(self.final, ignore_errors=True)

    def _link_latest(self, target: Path) -> None:
        latest = self.parent / "latest"
        if latest.exists() and not latest.is_symlink():
            return  # a real folder named latest is the user's: leave it
        tmp = self.parent / f".latest-{uuid.uuid4().hex[:12]}"
        try:
            tmp.symlink_to(target.name, target_is_directory=True)
            os.replace(tmp, latest)
        except OSError:
            if tmp.is_symlink():
                tmp.unlink()

    def __enter__(self) -> "ReportFolder":
        return self

    def __exit__(self, *exc) -> None:
        if not self.committed:
            shutil.rmtree(self.path, ignore_errors=True)
            if self.claim.exists():
                self.claim.unlink()
            self._give_up()
