"""What the small presets share: the list of every first deal, for exact solving.

A small preset (RULES.md, "Small presets") is a rule option of a game's engine whose whole game
tree can be enumerated; its engine's ``deals()`` lists every first deal with its probability,
as stacked deals for ``reset(rng, deal=...)``, and `experiments.solve` walks the tree from there.
"""

from __future__ import annotations

from collections import Counter
from itertools import permutations
from typing import Callable, Sequence


def stacked_deals(deck: Sequence[int], hand_sizes: Sequence[int], name: Callable[[int], str]) -> list[tuple[float, dict]]:
    """Every way a shuffled `deck` can be dealt into hands of `hand_sizes` (dealt from the top)
    and a draw pile, with its probability: each distinct order of the deck is equally likely, and
    orders that differ only inside a hand give the same deal (their probabilities add up)."""
    count: Counter = Counter()
    orders = set(permutations(sorted(deck)))
    for order in orders:
        hands, at = [], 0
        for size in hand_sizes:
            hands.append(tuple(sorted(order[at:at + size])))
            at += size
        count[(tuple(hands), order[at:])] += 1
    total = len(orders)
    return [(n / total, {"hands": [[name(k) for k in h] for h in hands], "draw_pile": [name(k) for k in pile]})
            for (hands, pile), n in sorted(count.items())]
