"""The replay files the web page lists and opens: the folder's index, each file's checked header
for the list, and bounded caches of parsed replays and of their frames per view.

A file over MAX_REPLAY_BYTES, or whose header does not check, is listed as unreadable with the
reason and never parsed; a link to a file outside the folder is neither listed nor served; the
list never carries a seed (a seat's viewer must not be handed the deal).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path

from experiments import replay as replay_format
from experiments.web.frames import parse_view, replay_frames
from experiments.web.http import ApiError, one_line

MAX_REPLAYS = 5000  # files listed from one folder
MAX_REPLAY_BYTES = 1 << 20  # a longer replay file is listed as unreadable and never parsed
REPLAY_CACHE = 64  # parsed replays kept
FRAME_CACHE = 16  # (replay, view) frame lists kept


class ReplayFolder:
    """The replay files under one folder, by id (the path below the folder, without the suffix).

    Each file is parsed once while it keeps its modification time and size (its header for the
    list, the whole file when it is opened); a file over MAX_REPLAY_BYTES, or whose header does
    not check, is listed as unreadable, with the reason, and never parsed.
    """

    def __init__(self, folder: str | Path | None):
        self.folder = Path(folder) if folder is not None else None
        self._headers: dict[Path, tuple[tuple, replay_format.Replay | str]] = {}
        self._replays: OrderedDict = OrderedDict()  # (path, mtime, size) -> Replay | str
        self._frames: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def index(self) -> dict[str, Path]:
        if self.folder is None or not self.folder.is_dir():
            return {}
        root = self.folder.resolve()
        paths = sorted(self.folder.rglob("*" + replay_format.SUFFIX))[:MAX_REPLAYS]
        # A link to a file outside the folder is not served.
        return {p.relative_to(self.folder).as_posix()[: -len(replay_format.SUFFIX)]: p
                for p in paths if p.resolve().is_relative_to(root) and p.is_file()}

    @staticmethod
    def _stamp(path: Path) -> tuple:
        st = path.stat()
        return (st.st_mtime_ns, st.st_size)

    def _too_big(self, stamp: tuple) -> str | None:
        if stamp[1] > MAX_REPLAY_BYTES:
            return f"{stamp[1]:,} bytes, over the {MAX_REPLAY_BYTES:,}-byte limit for a replay file"
        return None

    def header(self, path: Path) -> replay_format.Replay | str:
        """The checked header (a Replay without moves), or why the file cannot be read."""
        stamp = self._stamp(path)
        cached = self._headers.get(path)
        if cached is None or cached[0] != stamp:
            head: replay_format.Replay | str | None = self._too_big(stamp)
            if head is None:
                try:
                    head = replay_format.read_header(path)
                    head.result = recorded_result(path)
                except (OSError, ValueError, UnicodeDecodeError) as e:
                    head = one_line(e, path)
            cached = self._headers[path] = (stamp, head)
        return cached[1]

    def replay(self, rid: str) -> tuple[replay_format.Replay, tuple]:
        """The whole replay, parsed once per (file, mtime, size); ApiError when it is unknown or unreadable."""
        path = self.index().get(rid)
        if path is None:
            raise ApiError(404, f"no replay {rid[:80]!r}")
        stamp = self._stamp(path)
        key = (path, *stamp)
        with self._lock:
            rep = self._replays.get(key)
            if rep is not None:
                self._replays.move_to_end(key)
        if rep is None:
            rep = self._too_big(stamp)
            if rep is None:
                try:
                    rep = replay_format.read(path)
                except (OSError, ValueError, UnicodeDecodeError, RecursionError) as e:
                    rep = one_line(e, path)
            with self._lock:
                self._replays[key] = rep
                while len(self._replays) > REPLAY_CACHE:
                    self._replays.popitem(last=False)
        if isinstance(rep, str):
            raise ApiError(400, f"replay {rid!r} cannot be read: {rep}")
        return rep, key

    def listing(self) -> list[dict]:
        out = []
        with self._lock:
            index = self.index()
            for gone in set(self._headers) - set(index.values()):
                del self._headers[gone]
            for rid, path in index.items():
                try:
                    head = self.header(path)
                except OSError as e:  # removed while listing
                    head = one_line(e, path)
                if isinstance(head, str):
                    out.append({"id": rid, "unreadable": head})
                    continue
                # No seed here: a seat's viewer must not be handed the deal.
                out.append({"id": rid, "game": head.game, "players": head.num_players, "agents": head.agents,
                            "winners": None if head.result is None else [s for s, r in enumerate(head.result["ranks"]) if r == 1]})
        return out

    def get(self, rid: str, view_text: str | None) -> dict:
        rep, key = self.replay(rid)
        view = parse_view(view_text, rep.num_players)
        key = (*key, view)
        with self._lock:
            frames = self._frames.get(key)
            if frames is not None:
                self._frames.move_to_end(key)
        if frames is None:
            try:
                frames = replay_frames(rep, view)
            except ValueError as e:
                raise ApiError(400, f"replay {rid!r} does not replay: {one_line(e)}") from None
            with self._lock:
                self._frames[key] = frames
                while len(self._frames) > FRAME_CACHE:
                    self._frames.popitem(last=False)
        out = {
            "id": rid,
            "game": rep.game,
            "env": f"{rep.game}_v0",
            "players": rep.num_players,
            "agents": rep.agents,
            "rule_options": replay_format.jsonable(rep.rule_options),
            "view": view,
            "frames": frames,
        }
        if view == "spectator":
            out["seed"] = rep.seed
        return out


def recorded_result(path: Path) -> dict | None:
    """A replay's recorded result (its last line), unchecked, for the list; None when it has none."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - 4096))
            result = json.loads(f.read().splitlines()[-1])["result"]
        return {"scores": [int(x) for x in result["scores"]], "ranks": [int(x) for x in result["ranks"]]}
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        return None

