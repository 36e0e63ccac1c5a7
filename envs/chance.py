"""Chance as part of the engine protocol: every random event of a game goes through here.

`Chance` is mixed into `envs.engine.Engine`. Every draw from a face-down pile is
``chance_draw(pile)``, and a deal of new hands or a reshuffle says so (``chance_deal()``,
``chance_reshuffle()``). With nothing asked of them they do what the engine always did (the same
draws from the same stream, so seeded games are unchanged); ``take_chance`` makes the next draws
take given outcomes, ``step_outcomes`` lists every way a move can turn out with its exact
probability (the tree builder and the luck estimator read it), and ``record_chance`` keeps a log
of the events as they happen.
"""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any, NamedTuple, Sequence


class ChanceEvent(NamedTuple):
    """A chance event inside a step (`Engine.chance_draw`, `Engine.chance_deal`, `Engine.chance_reshuffle`).

    ``kind`` is "draw" (the top card of a face-down pile), "deal" (new hands from a shuffled
    deck) or "reshuffle" (a pile turned over into a new face-down pile); ``outcomes`` are what
    can come, each once (card kinds for a draw), with their exact ``probabilities``: empty for a
    deal, whose outcomes are too many to list, and for a reshuffle, which shows nothing (the
    draws from the new pile are chance events of their own). ``outcome`` is what came."""

    kind: str
    outcomes: tuple
    probabilities: tuple
    outcome: Any = None


class NeedChance(Exception):
    """Raised at a chance event while an engine is asked to enumerate its chance
    (`Engine.step_outcomes`), so that the caller can branch on each outcome."""

    def __init__(self, event: ChanceEvent) -> None:
        super().__init__(f"a chance event ({event.kind}) with {len(event.outcomes)} outcomes")
        self.event = event



class Chance:
    """The chance methods of every engine (see the module docstring)."""

    # Every random event of a game goes through one of the three methods below. With nothing
    # asked of them they do what the engine always did (the same draws from the same stream, so
    # seeded games are unchanged); `take_chance` makes the next draws take given outcomes,
    # `step_outcomes` lists every way a move can turn out with its exact probability, and
    # `record_chance` keeps a log of the events as they happen.

    def chance_draw(self, pile: list) -> Any:
        """Take the top card of the face-down `pile` (its end): a chance event whose outcomes are
        the kinds in the pile, each with probability count / size, as nobody can see the order.
        A forced outcome (`take_chance`) brings the topmost card of that kind to the top first."""
        counts = Counter(pile)
        outcomes = tuple(sorted(counts))
        event = ChanceEvent("draw", outcomes, tuple(counts[k] / len(pile) for k in outcomes))
        forced = self.__dict__.get("_forced")
        if forced:
            kind = forced.pop(0)
            if isinstance(kind, dict):
                raise ValueError(f"{self.game_name}: a deal was given where the game draws a card")
            if kind not in counts:
                raise ValueError(f"{self.game_name}: cannot draw {kind!r}: the pile holds {outcomes}")
            i = len(pile) - 1 - pile[::-1].index(kind)
            pile[i], pile[-1] = pile[-1], pile[i]
        elif self.__dict__.get("_enumerating"):
            raise NeedChance(event)
        card = pile.pop()
        self._log_chance(event._replace(outcome=card))
        return card

    def chance_deal(self) -> dict | None:
        """Say that new hands are about to be dealt (a new round or hand): a chance event with too
        many outcomes to list, which `step_outcomes` refuses. Returns the stacked deal given by
        `take_chance` (a dict: what ``reset(rng, deal=...)`` takes, shaped by `deal_parts`), or
        None: the engine then deals from its stream."""
        forced = self.__dict__.get("_forced")
        if forced and isinstance(forced[0], dict):
            deal = forced.pop(0)
            self._log_chance(ChanceEvent("deal", (), (), deal))
            return deal
        event = ChanceEvent("deal", (), ())
        if self.__dict__.get("_enumerating"):
            raise NeedChance(event)
        self._log_chance(event)
        return None

    def chance_reshuffle(self) -> None:
        """Say that a pile is turned over into a new face-down pile: a chance event that shows
        nothing, since every draw from the new pile is a chance event of its own."""
        self._log_chance(ChanceEvent("reshuffle", (), ()))

    def _log_chance(self, event: ChanceEvent) -> None:
        log = self.__dict__.get("_chance_log")
        if log is not None:
            log.append(event)

    def take_chance(self, outcomes: Sequence[Any]) -> None:
        """The next chance events take these outcomes, in order: a card kind for a draw (instead
        of the pile's top), a stacked deal (a dict) for a deal (instead of the stream's)."""
        self._forced = list(outcomes)

    def deal_parts(self) -> tuple[list[int], list[tuple[str, list[int] | int]]]:
        """What a deal at this point names, for dealing it card by card (`envs.openspiel`): the
        cards it deals from, and the stacked deal's parts in order, each a key with its sizes
        (a list, one size per seat: a list of lists in the deal) or one size (a flat list). The
        cards a deal leaves unnamed go, shuffled, where the engine keeps the rest (a draw pile:
        every draw from it is a chance event of its own; or a set-aside nobody sees)."""
        raise NotImplementedError(f"{self.game_name}: no deal_parts()")

    def record_chance(self, log: list | None) -> None:
        """Append every chance event from now on to `log` (None stops)."""
        self._chance_log = log

    def step_outcomes(self, action: int) -> list[tuple[float, Any, Any, tuple]]:
        """Every way `action` can turn out from this state: (probability, the engine after it, its
        score event, the draws' outcomes), branching at each draw the move meets, with exact
        probabilities that sum to 1. This engine is left as it was. A move that meets a deal
        (a new round dealt from the stream) cannot be listed: ValueError."""
        out: list = []

        log, self._chance_log = self.__dict__.get("_chance_log"), None
        try:
            state = pickle.dumps(self, pickle.HIGHEST_PROTOCOL)  # copied once, then restored per branch
        finally:
            self._chance_log = log

        def go(forced: list, probability: float) -> None:
            e = pickle.loads(state)  # several times cheaper than copy.deepcopy
            e._forced, e._enumerating, e._chance_log = list(forced), True, None
            try:
                event = e.step(action)
            except NeedChance as need:
                if not need.event.outcomes:
                    raise ValueError(f"{self.game_name}: a move meets a {need.event.kind}, whose outcomes are too "
                                     f"many to list") from None
                for o, p in zip(need.event.outcomes, need.event.probabilities):
                    go(forced + [o], probability * p)
                return
            e._forced, e._enumerating = None, False
            out.append((probability, e, event, tuple(forced)))

        go([], 1.0)
        return out
