"""Tables on the batched engine (placeholder while the split lands)."""

from __future__ import annotations

ROWS_PER_BATCH = 2048


def choose_tables(game, tables, num_players, engine, move_timeout=None, record_moves=False) -> frozenset:
    return frozenset()


def path_name(game, tables, num_players, engine, move_timeout=None, record_moves=False) -> str:
    return "aec"
