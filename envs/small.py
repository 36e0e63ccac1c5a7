"""What the small presets share: the player count a preset fixes, and the list of every first deal,
for exact solving.

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


def player_range(engine_cls, rule_options: dict | None = None) -> tuple[int, int]:
    """`Engine.player_range`: the player counts a game takes with these rule options, a preset's
    own count (`Engine.PRESET_PLAYERS`), else min_players to max_players."""
    preset = (rule_options or {}).get("rules")
    fixed = engine_cls.PRESET_PLAYERS.get(preset) if isinstance(preset, str) else None
    return (fixed, fixed) if fixed else (engine_cls.min_players, engine_cls.max_players)


def preset_for(engine_cls, num_players: int | None) -> dict:
    """`Engine.preset_for`: the rule options of the one preset that fixes a player count outside the
    game's own range (Ma's Jong at two players: its small preset), else {}: what an agent built
    for a player count alone reads its sizes from."""
    if num_players is None or engine_cls.min_players <= num_players <= engine_cls.max_players:
        return {}
    presets = [p for p, n in engine_cls.PRESET_PLAYERS.items() if n == num_players]
    return {"rules": presets[0]} if len(presets) == 1 else {}
