"""A SQLite record of every game played by `compare` and `tournament` (``--db FILE``).

Two tables (standard library ``sqlite3``, one file, append-only):

* ``runs`` — one row per run: ``run_id``, the command line, seed, deals per
  table (JSON: a number, or per game), versions (cardzoo, numpy, torch, pettingzoo, Python), git commit,
  start time, and ``games``, the number of games the run recorded;
* ``games`` — one row per game and seat: ``run_id``, ``game``, ``num_players``,
  ``rule_options`` (JSON), ``table_index``, ``deal``, ``deal_seed``,
  ``rotation``, ``seat``, ``agent`` (its label), ``score``, ``reward``,
  ``rank`` and ``forfeit`` (1 for the seat whose agent failed and forfeited).

A run is written in one transaction, so a run that is killed leaves the file
as it was: its rows are all in or all out. `experiments.leaderboard` reads it.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started_utc TEXT,
    command TEXT,
    seed INTEGER,
    deals TEXT,
    games INTEGER NOT NULL,
    cardzoo_version TEXT,
    git_commit TEXT,
    python TEXT,
    numpy TEXT,
    torch TEXT,
    pettingzoo TEXT,
    metadata TEXT
);
CREATE TABLE IF NOT EXISTS games (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    game TEXT NOT NULL,
    num_players INTEGER NOT NULL,
    rule_options TEXT NOT NULL,
    table_index INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    agent TEXT NOT NULL,
    score REAL NOT NULL,
    reward REAL NOT NULL,
    rank INTEGER NOT NULL,
    forfeit INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS games_by_game ON games (game, num_players);
"""

CHUNK = 5000  # rows per executemany; all chunks of a run share one transaction


def connect(path: str | Path) -> sqlite3.Connection:
    """A connection that writes: the schema is created if the file is new."""
    con = sqlite3.connect(str(path), timeout=60, isolation_level=None)  # transactions are explicit
    con.executescript(SCHEMA)
    return con


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A connection that cannot write, for commands that only read (SQLite's ``mode=ro``)."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=60)


def _tables(path: str | Path) -> dict[str, set[str]] | None:
    """The tables of an existing database and their columns, read without writing; None for an empty file."""
    if Path(path).stat().st_size == 0:
        return None
    con = connect_read_only(path)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: {r[1] for r in con.execute(f"PRAGMA table_info({json.dumps(n)})")} for n in names}
    finally:
        con.close()


def _columns(table: str) -> set[str]:
    body = SCHEMA.split(f"CREATE TABLE IF NOT EXISTS {table} (")[1].split(");")[0]
    return {line.split()[0] for line in body.strip().splitlines()}


def check_db(path: str, must_exist: bool = False) -> str | None:
    """Why `path` cannot hold (or, with `must_exist`, be read as) a record, or None; checked before any
    game, and without writing: a database that is not a cardzoo record is refused as it is."""
    p = Path(path)
    if p.exists() and p.is_dir():
        return f"--db {path!r} is a folder, not a database file"
    if not p.exists():
        if must_exist:
            return f"--db {path!r}: no such file"
        if not p.parent.is_dir():
            return f"--db {path!r}: folder {p.parent} does not exist"
        return None
    try:
        tables = _tables(p)
    except sqlite3.DatabaseError as e:
        return f"--db {path!r} is not a usable SQLite database ({e})"
    if tables is None and not must_exist:
        return None
    if not tables:
        return f"--db {path!r} holds no cardzoo record"
    for name in ("runs", "games"):
        if name not in tables or not _columns(name) <= tables[name]:
            other = ", ".join(sorted(t for t in tables if t not in ("runs", "games"))[:5])
            return (f"--db {path!r} is not a cardzoo record (it has no {name!r} table of cardzoo's columns"
                    + (f"; its tables: {other}" if other else "") + "); give a new file or one written by --db")
    return None


def _rows(run_id: str, results: Sequence[dict]) -> Iterable[tuple]:
    for res in results:
        opts = json.dumps(res.get("rule_options") or {}, sort_keys=True)
        for r in res["records"]:
            forfeit_seat = r["forfeit"]["seat"] if r.get("forfeit") else -1
            for s, agent in enumerate(r["agents"]):
                yield (
                    run_id, res["game"], res["num_players"], opts, r["table"], r["deal"], r["deal_seed"], r["rotation"],
                    s, agent, float(r["scores"][s]), float(r["rewards"][s]), int(r["ranks"][s]), int(s == forfeit_seat),
                )


def _insert_chunk(con: sqlite3.Connection, rows: list[tuple]) -> None:
    con.executemany("INSERT INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def write_run(path: str | Path, results: Sequence[dict], metadata: dict, before_commit: Callable[[], Any] | None = None) -> str:
    """Append one run (every game of every result) in one transaction; its run id.

    `before_commit` runs once every row is in, inside the transaction: the run's
    report folder is moved into place there, so that the run is in the record
    exactly when its report is (an error in it rolls the rows back)."""
    run_id = f"{metadata.get('started_utc', '')}-{uuid.uuid4().hex[:8]}"
    games = sum(len(res["records"]) for res in results)
    con = connect(path)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute(
            "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id, metadata.get("started_utc"), metadata.get("command"), metadata.get("seed"), json.dumps(metadata.get("deals")), games,
                metadata.get("cardzoo_version"), metadata.get("git_commit"), metadata.get("python"), metadata.get("numpy"),
                metadata.get("torch"), metadata.get("pettingzoo"), json.dumps(metadata, sort_keys=True, default=str),
            ),
        )
        chunk: list[tuple] = []
        for row in _rows(run_id, results):
            chunk.append(row)
            if len(chunk) >= CHUNK:
                _insert_chunk(con, chunk)
                chunk = []
        if chunk:
            _insert_chunk(con, chunk)
        if before_commit is not None:
            before_commit()
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    finally:
        con.close()
    return run_id


def read_games(path: str | Path, game: str | None = None, num_players: int | None = None) -> list[dict]:
    """Every recorded game (optionally of one game / player count) as tournament records,
    in run order then (table, deal, rotation); ``table`` is ``(run_id, table_index)``. Read only."""
    con = connect_read_only(path)
    try:
        where, args = [], []
        if game is not None:
            where.append("g.game = ?")
            args.append(game)
        if num_players is not None:
            where.append("g.num_players = ?")
            args.append(num_players)
        sql = (
            "SELECT g.run_id, g.game, g.num_players, g.rule_options, g.table_index, g.deal, g.deal_seed, g.rotation, g.seat,"
            " g.agent, g.score, g.reward, g.rank, g.forfeit FROM games g JOIN runs r ON r.run_id = g.run_id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY r.started_utc, g.run_id, g.game, g.num_players, g.rule_options, g.table_index, g.deal, g.rotation, g.seat"
        )
        games: dict[tuple, dict] = {}
        for run_id, g, n, opts, t, deal, ds, rot, seat, agent, score, reward, rank, forfeit in con.execute(sql, args):
            key = (run_id, g, n, opts, t, deal, rot)
            rec = games.get(key)
            if rec is None:
                rec = games[key] = {
                    "run_id": run_id, "game": g, "num_players": n, "rule_options": opts, "table": (run_id, opts, t),
                    "deal": deal, "deal_seed": ds, "rotation": rot, "agents": [], "scores": [], "rewards": [], "ranks": [],
                    "forfeit": None,
                }
            rec["agents"].append(agent)
            rec["scores"].append(score)
            rec["rewards"].append(reward)
            rec["ranks"].append(rank)
            if forfeit:
                rec["forfeit"] = {"seat": seat, "agent": agent}
        return list(games.values())
    finally:
        con.close()


def run_count(path: str | Path) -> int:
    con = connect_read_only(path)
    try:
        return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        con.close()
