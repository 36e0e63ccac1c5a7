"""What the small presets share: the list of every first deal, for exact solving.

A small preset (RULES.md, "Small presets") is a rule option of a game's engine whose whole game
tree can be enumerated; its engine's ``deals()`` lists every first deal with its probability,
as stacked deals for ``reset(rng, deal=...)``, and `experiments.solve` walks the tree from there.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from math import comb
from typing import Callable, Sequence


def stacked_deals(deck: Sequence[int], hand_sizes: Sequence[int], name: Callable[[int], str]) -> list[tuple[float, dict]]:
    """Every way a shuffled `deck` can be dealt into hands of `hand_sizes`, with its probability:
    combinations, not orders. The rest is the draw pile, in sorted order: its order is no part of
    the deal, since every draw from it is a chance event of its own (`Engine.chance_draw`), whose
    outcomes and probabilities depend only on what the pile holds."""
    count: Counter = Counter()
    total = 0
    for hands in _splits(Counter(deck), list(hand_sizes)):
        ways = 1
        left = Counter(deck)
        for hand in hands:  # the number of orders of the deck that deal these hands
            for kind, k in Counter(hand).items():
                ways *= comb(left[kind], k)
                left[kind] -= k
        count[hands] += ways
        total += ways
    return [(n / total, {"hands": [[name(k) for k in h] for h in hands],
                         "draw_pile": [name(k) for k in sorted((Counter(deck) - sum(map(Counter, hands), Counter())).elements())]})
            for hands, n in sorted(count.items())]


def _splits(left: Counter, sizes: list[int]):
    """Every tuple of sorted hands of `sizes` drawn from the multiset `left`, each once."""
    if not sizes:
        yield ()
        return
    kinds = sorted(left)
    for hand in combinations_with_replacement(kinds, sizes[0]):
        need = Counter(hand)
        if all(left[k] >= c for k, c in need.items()):
            for rest in _splits(left - need, sizes[1:]):
                yield (hand,) + rest
