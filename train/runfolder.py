"""A training run's folder: never replaced by accident, one trainer at a time, resumed cleanly;
and the run's log in it (`RunLog`: progress.csv, TensorBoard events, a progress bar).

`RunFolder.open` does every check before anything is written, and raises
ValueError (one line) when it refuses:

* a folder that already holds a run is replaced only with ``overwrite`` and
  continued only with ``resume``;
* ``trainer.lock`` holds the pid (and start time) of the trainer using the
  folder; a second trainer is refused while that process lives, and a lock left
  by a process that no longer runs (killed; its pid perhaps reused since) is
  taken over with a note;
* ``resume`` needs the run's own checkpoint.pt (an exported policy has no
  optimizer state), with the same game, players and network as asked for, and
  cuts progress.csv back to the checkpoint's update, so rows logged after the
  last checkpoint are not counted twice.
"""

from __future__ import annotations

import csv
import glob
import os
import sys

from agents.checkpoint import read_checkpoint

LOCK = "trainer.lock"
RUN_FILES = ("progress.csv", "checkpoint.pt", "final.pt", "teacher.npz", "strength.csv", "command.txt")  # the last three: train.ppo_search's


def _started(pid: int) -> str:
    """When process `pid` started, in clock ticks since boot (Linux's /proc); "" where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def pid_alive(pid: int) -> bool:
    """Does process `pid` run (a zombie does not)? False for a number no process can have."""
    if not 0 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's process: alive
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def owner_text() -> str:
    """What a lock or claim file holds: this process's pid and when it started, so that a later
    process given the same pid is not taken for the owner."""
    return f"{os.getpid()} {_started(os.getpid())}".strip() + "\n"


def lock_owner(text: str) -> int | None:
    """The pid of the process that wrote `owner_text()` as `text`, while that same process runs;
    None for a dead owner, a reused pid or text that names no process."""
    words = text.split()
    if not words or not words[0].isascii() or not words[0].isdigit():
        return None
    pid = int(words[0])
    if not pid_alive(pid):
        return None
    if len(words) > 1 and _started(pid) and _started(pid) != words[1]:
        return None  # the pid was given to another process since
    return pid


class RunFolder:
    def __init__(self, path: str) -> None:
        self.path = path
        self.csv_path = os.path.join(path, "progress.csv")
        self.checkpoint_path = os.path.join(path, "checkpoint.pt")
        self.final_path = os.path.join(path, "final.pt")
        self.lock_path = os.path.join(path, LOCK)
        self.resume_from: dict | None = None
        self.locked = False

    @classmethod
    def open(cls, path: str, args, expect: dict) -> "RunFolder":
        run = cls(path)
        if os.path.exists(path) and not os.path.isdir(path):
            raise ValueError(f"--out {path} is a file, not a run folder")
        if args.resume and not os.path.isfile(run.checkpoint_path):
            raise ValueError(f"--resume: no checkpoint.pt in {path} to continue from")
        os.makedirs(path, exist_ok=True)
        run.lock()
        try:
            if args.resume:
                run.resume_from = run.check_resumable(expect)
                run.truncate_log(run.resume_from["meta"]["update"])
            else:
                run.clear(args.overwrite)
        except BaseException:
            run.release()
            raise
        return run

    def lock(self) -> None:
        while True:
            try:
                fd = os.open(self.lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    with open(self.lock_path) as f:
                        text = f.read(200)
                except (OSError, ValueError):
                    text = ""
                owner = lock_owner(text)
                if owner is not None and owner != os.getpid():
                    raise ValueError(f"another trainer (pid {owner}) is using {self.path}; wait for it to finish "
                                     f"or choose another --out") from None
                print(f"{self.path}: taking over a stale {LOCK} (pid {text.split()[0][:20] if text.split() else 'none'} "
                      "is no longer running)")
                try:
                    os.remove(self.lock_path)
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "w") as f:
                f.write(owner_text())
            self.locked = True
            return

    def release(self) -> None:
        if self.locked:
            self.locked = False
            try:
                os.remove(self.lock_path)
            except FileNotFoundError:
                pass

    def existing(self) -> list[str]:
        found = [f for f in RUN_FILES if os.path.exists(os.path.join(self.path, f))]
        return found + sorted(os.path.basename(p) for p in glob.glob(os.path.join(self.path, "events.out.tfevents.*")))

    def clear(self, overwrite: bool) -> None:
        found = self.existing()
        if found and not overwrite:
            shown = ", ".join(found[:4]) + (", ..." if len(found) > 4 else "")
            raise ValueError(f"{self.path} already holds a run ({shown}); add --resume to continue it, "
                             f"--overwrite to replace it, or choose another --out")
        for name in found:
            os.remove(os.path.join(self.path, name))

    def check_resumable(self, expect: dict) -> dict:
        ckpt = read_checkpoint(self.checkpoint_path)  # CheckpointError (a ValueError) names the file and field
        meta = ckpt.get("meta")
        if "optimizer" not in ckpt or not isinstance(meta, dict) or not {"update", "global_step", "pool"} <= set(meta):
            raise ValueError(f"--resume: {self.checkpoint_path} is an exported policy (no optimizer state), "
                             "not a run's checkpoint; start a new run from scratch")
        for key, want in expect.items():
            if ckpt.get(key) != want:
                raise ValueError(f"--resume: the run in {self.path} was trained with {key.replace('_', ' ')} "
                                 f"{ckpt.get(key)!r}, not {want!r}; keep its settings or start a new run with another --out")
        return ckpt

    def truncate_log(self, update: int) -> None:
        """Keep progress.csv's rows up to the checkpoint's update (later ones are replayed)."""
        if not os.path.isfile(self.csv_path):
            return
        with open(self.csv_path, newline="") as f:
            rows = list(csv.reader(f))
        if not rows:
            return
        kept = [rows[0]] + [r for r in rows[1:] if r and r[0].isdigit() and int(r[0]) <= update]
        tmp = self.csv_path + ".tmp"
        with open(tmp, "w", newline="") as f:
            csv.writer(f).writerows(kept)
        os.replace(tmp, self.csv_path)


class RunLog:
    """What a run reports as it goes: a row per update in progress.csv, the same numbers as
    TensorBoard scalars (when the tensorboard package is installed) and, on a terminal, a progress
    bar over env steps. `say` prints a line without breaking the bar."""

    def __init__(self, run: RunFolder, fresh: bool, total: int, initial: int = 0) -> None:
        fresh = fresh or not os.path.isfile(run.csv_path) or os.path.getsize(run.csv_path) == 0
        self.header_due = fresh
        self.file = open(run.csv_path, "w" if fresh else "a", newline="")
        self.csv = None
        self.writer, self.note = None, "TensorBoard: skipped, the tensorboard package is not installed (pip install tensorboard)"
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.writer, self.note = SummaryWriter(run.path), f"TensorBoard: tensorboard --logdir {run.path}"
        except ImportError:
            pass
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True)
        self.say = self.bar.write if self.bar is not None else print

    @property
    def written(self) -> list[str]:
        return ["progress.csv", "checkpoint.pt", "final.pt"] + (["TensorBoard events"] if self.writer is not None else [])

    def advance(self, steps: int, grow: bool = False) -> None:
        """Move the bar by `steps` env steps (`grow`: steps the total did not foresee, such as a warm start)."""
        if self.bar is not None:
            if grow:
                self.bar.total += steps
            self.bar.update(steps)

    def retotal(self, total: int) -> None:
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def write(self, row: dict, env_steps: int, pool_size: int) -> None:
        if self.csv is None:
            self.csv = csv.DictWriter(self.file, fieldnames=list(row))
            if self.header_due:
                self.csv.writeheader()
        self.csv.writerow(row)
        self.file.flush()
        if self.writer is not None:
            for key, value in row.items():
                if key not in ("update", "global_step") and value == value:  # skip NaN
                    self.writer.add_scalar(f"charts/{key}", value, row["global_step"])
        self.advance(env_steps)
        if self.bar is not None:
            self.bar.set_postfix(sps=f"{row['steps_per_second']:.0f}", ret=f"{row['episode_return']:+.2f}",
                                 vs_h=f"{row['winrate_vs_heuristic']:.2f}", pool=pool_size)

    def close(self) -> None:
        self.file.close()
        if self.writer is not None:
            self.writer.close()
        if self.bar is not None:
            self.bar.close()
