"""The history a seat's information-set key is made of (`History.information_key`).

`History` is mixed into `envs.engine.Engine`: while an engine keeps its history
(``keep_history()``), each game's own ``reset`` starts it again and its ``step`` adds every move
as each seat saw it. The wrapping is done once per game class, when the class is defined.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Callable

import numpy as np


def _restarts_history(reset: Callable) -> Callable:
    @functools.wraps(reset)
    def restarting(self, *args: Any, **kwargs: Any):
        if self.__dict__.get("_history") is not None:
            self._history = []
        return reset(self, *args, **kwargs)

    restarting._keeps_history = True
    return restarting


def _records_move(step: Callable) -> Callable:
    @functools.wraps(step)
    def recording(self, action: int):
        history = self.__dict__.get("_history")
        if history is not None:
            seat, a = self.current_player, int(action)
            history.append((seat, a, self.public_action_name(a, seat), np.asarray(self.observe(seat), np.float32).tobytes()))
        return step(self, action)

    recording._keeps_history = True
    return recording


class History:
    """Keeping the moves as each seat saw them, and the information-set key from them."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Each game's own reset and step, wrapped once: while the engine keeps its history
        # (`keep_history`), a reset starts it again and every step adds its move to it.
        super().__init_subclass__(**kwargs)
        for name, wrap in (("reset", _restarts_history), ("step", _records_move)):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_keeps_history", False):
                setattr(cls, name, wrap(method))

    def keep_history(self, on: bool = True) -> None:
        """Keep, from the next ``reset()`` on, every move as each seat saw it (`information_key`):
        the mover's observation and action, and how the move looked to the others
        (``public_action_name``). Off by default: it costs an observation a step."""
        self._history = [] if on else None

    def information_key(self, seat: int) -> bytes | None:
        """The key of `seat`'s information set now (16 bytes), None unless the engine keeps its
        history: the seat's private history (its observation and action at each of its own
        moves) and the public history in order (every other move as the others saw it), then
        its observation now and, when it is to act, its legal moves. Two states share a key
        exactly when the seat has seen the same things in the same order."""
        history = self.__dict__.get("_history")
        if history is None:
            return None
        h = hashlib.blake2b(digest_size=16)
        for actor, action, public, observation in history:
            if actor == seat:
                h.update(b"own" + observation + int(action).to_bytes(2, "little"))
            else:
                h.update(b"saw" + int(actor).to_bytes(1, "little") + public.encode())
        h.update(b"now" + np.asarray(self.observe(seat), np.float32).tobytes())
        if not self.game_over and self.current_player == seat:
            h.update(np.asarray(self.legal_mask(), np.int8).tobytes())
        return h.digest()

    def public_log(self, seat: int) -> list | None:
        """The round's moves as `seat` saw them, for a belief that reads them in order (a game
        that keeps such a record overrides this); None: no record."""
        return None
