"""Batched engines: thousands of tables of one game per call, in compiled kernels.

    import envs
    venv = envs.vector_env("neu", num_envs=4096, num_players=4, seed=0)
    obs, mask, seat = venv.reset()
    obs, mask, seat, rewards, done = venv.step(actions)

Every table plays exactly the game the AEC env plays: table ``i``'s ``k``-th
game (counting from 0) is the game of ``envs.make(game).reset(seed=seed + i +
k * num_envs)``, move for move, with the same observations, masks, rewards,
scores and ranks (tests/test_vector.py checks this at every step). The
readable engines in ``envs/<game>.py`` define the rules; the kernels in
``envs/vector/<game>.py`` are a numba copy of them over plain arrays, and the
random draws are NumPy's own PCG64 stream, shuffle for shuffle.

Arrays, for ``N = num_envs`` tables:

* ``reset() -> obs, mask, seat``: float32 ``[N, obs_size]``, int8
  ``[N, num_actions]``, int64 ``[N]``: the seat to act at each table, its
  observation (the AEC env's layout) and its legal actions.
* ``step(actions) -> obs, mask, seat, rewards, done``: ``actions`` is an
  integer array ``[N]``, one move per table for the seat to act there;
  ``rewards`` float32 ``[N, num_players]`` are every seat's zero-sum rewards
  from that move (RULES.md, "Scores and rewards"); ``done`` bool ``[N]`` marks
  the tables whose game ended with that move. Such a table starts its next game
  at once: ``obs``, ``mask`` and ``seat`` are already the new game's, and
  ``final_scores`` / ``final_ranks`` (int64 ``[N, num_players]``) hold the
  finished game's result in the rows where ``done`` is set.
* ``step(actions, rows=r)``: only the tables ``r`` (distinct indices) move,
  ``actions[i]`` at table ``r[i]``; the five arrays returned are those tables',
  in that order (EnvPool's ``step(actions, env_id)``). Search plays each
  play-out to its own end this way, and tables already at theirs cost nothing.
* ``observe(seats)``: any seat's observation at every table (for critics);
  ``state()``: the global vectors ``[N, state_size]``; ``scores()``: the
  running scores ``[N, num_players]``; ``views(rows=None)``: ``obs, mask,
  seat`` as they stand, without a step; ``score_events(rows=None)``: a count
  per table that goes up with exactly the steps that have a score event (a
  round's end, Deadfall's DEAD call), even one whose rewards are all zero (a
  round cut short in Not For Me, a drawn round in Ma's Jong).
* ``play_out(rows, actions, kernel, params, horizon)``: search's play-outs,
  each table from its first move to the next score event (or the game's end)
  in one compiled call, every seat moved by a compiled policy (a compiled
  heuristic's ``play_kernel()``); every seat's summed rewards come back.
* ``load_rows(rows, worlds) -> obs, mask, seat``: tables ``rows`` (distinct
  indices) take the states of readable engines of the same game, player count
  and rule options in a game under way (an engine played to some point, or a
  world from `envs.belief.sample_world`), so that search can play out on the
  kernels. From then on those tables play exactly the engines' games: their
  views, ``state()``, ``scores()``, rewards and final results are the
  engine's (tests/test_load_rows.py checks this at every step to the end of
  thousands of loaded games). A game's module reads an engine in
  ``load_row(st, t, engine)``, or packs it into ints (``pack_row``) that one
  compiled call reads for all the worlds (``unpack_rows``; tests check both
  give the same tables). A world's PCG64 stream is copied bit for bit, so
  even later reshuffles and deals agree. An engine given for several rows is
  read once and its table copied to the others (search plays every first move
  from the same world). When a loaded game ends, the table starts the game it
  would have started next anyway (``table_seed(row, k)``,
  ``k`` the games started there so far). Bad input is refused
  (``ValueError``, one line) and leaves every table as it was.
* ``sample_rows(rows, info, rng) -> obs, mask, seat``: tables ``rows`` take the
  worlds `envs.belief.sample_world` would draw from the information state
  ``info`` with ``rng``, exactly, without building engines: every game redeals
  the packed world in compiled code (`envs.vector.sampling`; Ma's Jong with
  ``steal_phase="eligible"`` loads ``sample_world``'s engines).

How the kernels are compiled: the helpers are inlined (``inline="always"``)
into the few kernels Python calls (``step_rows``, ``write_views``,
``write_state``; their loops over tables are shared by every game, see
`envs.vector.loops`), and those run without numba's reference counting
(``_nrt=False``), so they allocate nothing: a game's state travels as one
namedtuple of arrays, and with reference counting each helper call would
count every array in it up and down again, which made steps several times
slower. The helpers that end a round are the exception: called from several
places, inlining copied them (and the next deal) into each, and Ma's Jong's
``step_rows`` took 66 s to compile instead of 7. They are compiled once, also
without reference counting, and called. The kernels take the tables to work
on as an index array (all of them, in order, for a plain ``step``).
``cache=True`` keeps the compiled code on disk (`envs.kernel_cache`), so only
the first run on a machine pays for the compilation, and it says so on stderr
before numba starts, then names each kernel as it is done
(`envs.vector.compiling`).

A seat that is out of the game (Neu) is never the seat to act, so every row
always has a legal move. Wrong shapes or dtypes raise ``ValueError`` naming
the expected shape; a masked-out action raises ``ValueError`` naming the
tables, before any table moves.
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

import numpy as np
from numba import njit

import envs
from envs.vector import compiling  # noqa: F401 (says so before numba compiles a kernel)
from envs.vector import rng as R
from envs.vector import sampling

KERNELS = {
    "not_for_me": "envs.vector.not_for_me",
    "deadfall": "envs.vector.deadfall",
    "neu": "envs.vector.neu",
    "not_your_mas_jong": "envs.vector.not_your_mas_jong",
}


class VectorEnv:
    """``num_envs`` tables of one game, stepped together (see the module docstring)."""

    def __init__(self, game: str, num_envs: int, num_players: int | None = 4, seed: int = 0, **rule_options: Any):
        engine_cls = envs.engine_class(game)  # an unknown game raises, listing the games
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**62:
            raise ValueError(f"seed must be an integer in [0, 2**62), got {seed!r}")
        # The reference engine checks the player count and the rule options.
        engine = engine_cls(num_players, **rule_options)
        self.game = game
        self.engine_cls = engine_cls
        self.num_envs = int(num_envs)
        self.num_players = engine.num_players
        self.options = dict(engine.options)
        self.seed = int(seed)
        self.num_actions = engine.num_actions
        self.obs_size = engine.obs_size
        self.state_size = engine.state_size
        self._k = importlib.import_module(KERNELS[game])
        n, N = self.num_players, self.num_envs
        self._st = self._k.make_state(N, n, self.options)
        self._table_fields = _table_fields(self._k, n, self.options)
        self._games = np.zeros(N, np.int64)  # games started at each table
        self._mask = np.zeros((N, self.num_actions), np.int8)
        self._scratch = np.zeros(self.num_actions, np.int8)
        self._rows = np.arange(N, dtype=np.int64)
        self.final_scores = np.zeros((N, n), np.int64)
        self.final_ranks = np.zeros((N, n), np.int64)
        self._has_reset = False

    # Pickling (worker processes, checkpoints of a run): the kernel module goes by name.
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_k"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._k = importlib.import_module(KERNELS[self.game])
        if "_table_fields" not in state:  # pickled before load_rows copied tables
            self._table_fields = _table_fields(self._k, self.num_players, self.options)

    # -- tables -----------------------------------------------------------------
    def table_seed(self, table: int, game_index: int) -> int:
        """The AEC seed of a table's game: ``seed + table + game_index * num_envs``."""
        return self.seed + table + game_index * self.num_envs

    def _start(self, rows: np.ndarray) -> None:
        seeds = self.seed + rows + self._games[rows] * self.num_envs
        R.seed_rows(self._st.rng, rows, seeds)
        self._games[rows] += 1
        self._k.reset_rows(self._st, rows)

    # -- API ----------------------------------------------------------------------
    def reset(self, seeds: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every table's first game again (the same games as after construction).

        ``seeds`` (optional, integers ``[N]`` from 0 to 2**63 - 1): table ``i``'s
        game is then the game of the AEC env's ``reset(seed=seeds[i])`` instead,
        as a tournament needs for its deals; the games after it follow
        `table_seed` as usual. Bad seeds are refused (ValueError) before anything
        changes: the env is then exactly as it was.
        """
        if seeds is None:
            self._games[:] = 0
            self._start(self._rows)
        else:
            s = np.asarray(seeds)
            if s.shape != (self.num_envs,) or not np.issubdtype(s.dtype, np.integer):
                raise ValueError(f"seeds must be an integer array of shape ({self.num_envs},), got {s.dtype} {s.shape}")
            if s.size and (int(s.min()) < 0 or int(s.max()) > 2**63 - 1):
                raise ValueError("seeds must be from 0 to 2**63 - 1")
            self._games[:] = 0
            R.seed_rows(self._st.rng, self._rows, s.astype(np.int64))
            self._games[:] = 1
            self._k.reset_rows(self._st, self._rows)
        self._has_reset = True
        return self.views()

    def step(self, actions: Any, rows: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One move at every table (``actions [N]``), or only at the tables ``rows`` (distinct
        table indices, ``actions [len(rows)]``: ``actions[i]`` is played at ``rows[i]``; the
        other tables do not move). Returns ``obs, mask, seat, rewards, done`` of the tables
        stepped, in that order (see the module docstring)."""
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        r = self._rows if rows is None else self._table_rows(rows)
        a = np.asarray(actions)
        if a.shape != r.shape or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({r.size},), got {a.dtype} {a.shape}"
            )
        a = a.astype(np.int64, copy=False)
        bad = _illegal_rows(self._mask, r, a)
        if bad.size:
            shown = ", ".join(map(str, r[bad[:10]].tolist())) + (" ..." if bad.size > 10 else "")
            raise ValueError(f"masked-out action(s) at table(s) {shown} ({bad.size} in all)")
        n = self.num_players
        rewards = np.zeros((self.num_envs, n), np.float32)
        done = np.zeros(self.num_envs, np.bool_)
        self._k.step_rows(self._st, r, a, rewards, done, self.final_scores, self.final_ranks, self._scratch)
        finished = np.flatnonzero(done)
        if finished.size:
            self._start(finished)
        if rows is None:
            return (*self._views(r, self._mask), rewards, done)
        return (*self._views(r, None), rewards[r], done[r])

    def views(self, rows: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``obs, mask, seat`` of every table (or of the tables ``rows``, in that order) as they
        stand, without a step (what the last `reset`, `step` or `load_rows` returned)."""
        if not self._has_reset:
            raise RuntimeError("call reset() before views()")
        if rows is None:
            return self._views(self._rows, self._mask)
        return self._views(self._table_rows(rows), None)

    def _views(self, r: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`views` of the (checked) tables ``r``; ``mask`` is ``self._mask`` when ``r`` is every table."""
        seat = self._st.cur[r].astype(np.int64)
        obs = np.empty((r.size, self.obs_size), np.float32)
        if mask is not None:
            self._k.write_views(self._st, r, seat, obs, mask, True)
            return obs, mask.copy(), seat
        mask = np.zeros((r.size, self.num_actions), np.int8)
        self._k.write_views(self._st, r, seat, obs, mask, True)
        self._mask[r] = mask  # what step checks the moves against
        return obs, mask, seat

    def score_events(self, rows: Any = None) -> np.ndarray:
        """A count per table (int64 ``[N]``, or ``[len(rows)]``) that goes up with every step
        that has a score event (the rewards of the step, RULES.md "Scores and rewards": a
        round's end, Deadfall's DEAD call) and with no other step, until the game ends. Search
        compares it before and after a step to stop a play-out at the end of a round, even
        when that round's rewards are all zero."""
        if not self._has_reset:
            raise RuntimeError("call reset() before score_events()")
        r = self._rows if rows is None else self._table_rows(rows)
        return self._k.score_events(self._st, r)

    def _table_rows(self, rows: Any) -> np.ndarray:
        """``rows`` as distinct table indices (int64), or ValueError in one line."""
        r = np.asarray(rows)
        if r.ndim != 1 or not (np.issubdtype(r.dtype, np.integer) or r.size == 0):
            raise ValueError(f"rows must be a 1-d sequence of table indices, got {r.dtype} {r.shape}")
        r = r.astype(np.int64, copy=False)
        problem = _row_problem(r, np.zeros(self.num_envs, np.bool_))
        if problem == 1:
            raise ValueError(f"rows must be table indices in [0, {self.num_envs}), got {r.min()}..{r.max()}")
        if problem == 2:
            values, counts = np.unique(r, return_counts=True)
            raise ValueError(f"rows must be distinct; repeated: {values[counts > 1].tolist()}")
        return r

    def load_rows(self, rows: Any, worlds: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Put readable engines' states into tables: table ``rows[i]`` continues ``worlds[i]``'s game.

        ``worlds`` are engines of this game (``envs.engine_class(game)``) with this env's
        player count and rule options, in a game under way: an engine played to any point, or
        a world drawn by `envs.belief.sample_world`. Each table in ``rows`` (distinct ints in
        ``[0, num_envs)``) drops the game it was playing and plays on from its world's state:
        observations, masks, seat to act, ``observe``, ``state`` and ``scores`` are the
        engine's, and its moves give the engine's rewards and final results. The engines are
        read, never changed. Returns `views` (every table's, like `reset`).

        Chance: a world's ``rng`` (a ``numpy.random.Generator``) goes with it. A PCG64 one
        (``default_rng``, as every reset and every sampled world has) is copied exactly, so the
        table and the engine draw the same reshuffles and deals to the end of the game; any
        other bit generator seeds the table from a draw of a copy of it, the same law but other
        draws after the next chance event.

        Afterwards: when a loaded game ends, the table starts the game it would have started
        had its dropped game ended then, ``table_seed(row, k)`` with ``k`` the games started
        at that table so far; loading leaves that count alone.

        Bad input (a list of the wrong length, rows out of range or repeated, an engine of
        another game, player count or rule options, one never reset or whose game is over, one
        without a ``Generator``, one whose player to act has no legal move) raises
        ``ValueError``, and the env is then exactly as it was.
        """
        if not self._has_reset:
            raise RuntimeError("call reset() before load_rows()")
        if not hasattr(worlds, "__len__"):
            raise ValueError("worlds must be a sequence of engines (a list), one per row")
        if len(worlds) != np.size(rows):
            raise ValueError(f"rows and worlds differ in length: {np.size(rows)} rows, {len(worlds)} worlds")
        r = self._table_rows(rows)
        # An engine given for several rows (search plays every move from the same world) is
        # checked and read once; its other rows get a copy of the first one's table.
        first: dict[int, int] = {}
        first_worlds = []
        copies = []
        for i, (t, world) in enumerate(zip(r.tolist(), worlds)):
            if id(world) in first:
                copies.append((first[id(world)], t))
            else:
                self._check_world(i, world)
                first[id(world)] = t
                first_worlds.append(world)
        fields = [self._st[f] for f in self._table_fields]
        saved = [(a, a[r]) for a in fields]
        try:
            pack = getattr(self._k, "pack_row", None)
            if pack is not None:  # the worlds as one int array, read in one compiled call
                flat: list = []
                starts = []
                for world in first_worlds:
                    starts.append(len(flat))
                    flat += pack(world)
                self._k.unpack_rows(self._st, np.array(list(first.values()), np.int64), np.array(flat, np.int64),
                                    np.array(starts, np.int64))
            for world, t in zip(first_worlds, first.values()):
                if pack is None:
                    self._k.load_row(self._st, t, world)
                R.copy_stream(self._st.rng, t, world.rng)
            if copies:
                src, dst = np.array(copies, np.int64).T
                for a in fields:
                    a[dst] = a[src]
            views = self.views()
            stuck = np.flatnonzero(~views[1][r].any(axis=1))
            if stuck.size:
                # (A world sampled from another seat's view can deal the player to act a hand
                # that the rules would already have settled, e.g. Neu's, with no card to play.)
                raise ValueError(f"worlds[{stuck[0]}]: the player to act has no legal move; every table must have one")
        except BaseException:
            for a, rows_before in saved:  # put back what was there
                a[r] = rows_before
            self.views()
            raise
        return views

    def sample_rows(self, rows: Any, info: dict, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Tables ``rows`` take the worlds that ``[sample_world(info, rng) for _ in rows]`` would
        draw (`envs.belief.sample_world`), exactly: the same hidden cards and chance streams,
        from the same draws of `rng` (a PCG64 generator), which is left where those calls would
        leave it; but no engine is built. In the games whose kernels can redeal a packed world
        (`envs.vector.sampling`: every game, Ma's Jong with its default steal phase) it costs a few
        microseconds a world; elsewhere it is `load_rows` of `sample_world`'s worlds. An
        information state whose redeals never give the player to act a legal move raises
        `sample_world`'s ValueError, with the tables as they were. Returns `views`."""
        from envs.belief import SAMPLE_TRIES, no_redeal_serves, representative, sample_world

        if not self._has_reset:
            raise RuntimeError("call reset() before sample_rows()")
        r = self._table_rows(rows)
        world = representative(info)
        self._check_world(0, world, stream=False)
        layout = self._k.sample_layout(world) if hasattr(self._k, "sample_layout") else None
        if layout is None:
            return self.load_rows(r, [sample_world(info, rng) for _ in range(r.size)])
        stream = sampling.stream_of(rng)
        fields = [self._st[f] for f in self._table_fields]
        saved = [(a, a[r]) for a in fields]
        failed = self._k.sample_rows(self._st, r, np.array(self._k.pack_row(world), np.int64), int(info["seat"]),
                                     stream, np.array(layout, np.int64), SAMPLE_TRIES, self._scratch)
        sampling.put_back(rng, stream)
        if failed >= 0:
            for a, rows_before in saved:
                a[r] = rows_before
            self.views()
            raise no_redeal_serves(self.game, world.current_player)
        return self.views()

    def play_out(self, rows: Any, actions: Any, kernel: Any, params: tuple, horizon: str = "round",
                 limit: int = 20_000) -> tuple[np.ndarray, int]:
        """Play tables ``rows`` from ``actions`` (one first move each) to the horizon in one
        compiled call, every seat moved by a compiled policy: search's play-outs without Python
        between steps. ``horizon`` is ``"round"`` (to the next score event, as `score_events`
        counts them) or ``"game"``. Returns every seat's summed rewards (float64 ``[len(rows),
        num_players]``, each step's float32 rewards added as `step` returns them) and the
        agent-steps played.

        ``kernel(st, rows, actions, values, round_only, limit, rewards, done, final_scores,
        final_ranks, scratch, obs, mask, who, tables, active, start, params)`` is a compiled
        function that runs `envs.vector.loops.play_out` with this game's kernels and its policy
        (a compiled heuristic offers one: ``play_kernel()``); ``params`` are the policy's. The
        tables end exactly as `step` would have left them move by move: a table whose game
        ended has started its next one, and `views` are the tables' own."""
        if not self._has_reset:
            raise RuntimeError("call reset() before play_out()")
        if horizon not in ("round", "game"):
            raise ValueError(f"horizon must be round or game, got {horizon!r}")
        r = self._table_rows(rows)
        a = np.asarray(actions)
        if a.shape != r.shape or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be an integer array of shape ({r.size},), got {a.dtype} {a.shape}")
        a = a.astype(np.int64)  # a copy: the kernel writes each step's moves into it
        bad = _illegal_rows(self._mask, r, a)
        if bad.size:
            raise ValueError(f"masked-out first move(s) at table(s) {r[bad[:10]].tolist()} ({bad.size} in all)")
        R, n = r.size, self.num_players
        values = np.zeros((R, n))
        if R == 0:
            return values, 0
        done = np.zeros(self.num_envs, np.bool_)
        steps = kernel(self._st, r, a, values, horizon == "round", int(limit), np.zeros((self.num_envs, n), np.float32),
                       done, self.final_scores, self.final_ranks, self._scratch,
                       np.empty((R, self.obs_size), np.float32), np.zeros((R, self.num_actions), np.int8),
                       np.empty(R, np.int64), np.empty(R, np.int64), np.empty(R, np.int64), np.empty(R, np.int64), params)
        finished = r[done[r]]
        if finished.size:
            self._start(finished)
        self._views(r, None)  # what step checks the next moves against
        if steps < 0:
            raise RuntimeError(f"a {self.game} play-out did not end in {limit} steps")
        return values, int(steps)

    def play_games(self, rows: Any, kernel: Any, params: tuple, limit: int = 20_000) -> dict | int:
        """Play tables ``rows`` from where they stand to their games' ends in one compiled call,
        every move chosen by a compiled lineup (a tournament's batch: `agents.batch_kernels`,
        a heuristic's ``table_rows``). ``kernel`` runs `envs.vector.loops.play_games` with this
        game's kernels; ``params`` are its policy's. Returns ``{"values", "moves", "scores",
        "ranks"}``: every seat's summed rewards (float64, as `step` returns them, added), the
        moves made, and the final scores and ranks, one row per table of ``rows``; or, when the
        policy could not choose a legal move, the index in ``rows`` of that table. The tables
        then start their next games, as `step` would have left them."""
        if not self._has_reset:
            raise RuntimeError("call reset() before play_games()")
        r = self._table_rows(rows)
        R, n = r.size, self.num_players
        values, moves = np.zeros((R, n)), np.zeros(R, np.int64)
        done = np.zeros(self.num_envs, np.bool_)
        steps = kernel(self._st, r, values, moves, int(limit), np.zeros((self.num_envs, n), np.float32), done,
                       self.final_scores, self.final_ranks, self._scratch, np.empty((R, self.obs_size), np.float32),
                       np.zeros((R, self.num_actions), np.int8), np.empty(R, np.int64), np.empty(R, np.int64),
                       np.empty(R, np.int64), np.empty(R, np.int64), params) if R else 0
        result = {"values": values, "moves": moves, "scores": self.final_scores[r].copy(), "ranks": self.final_ranks[r].copy()}
        finished = r[done[r]]
        if finished.size:
            self._start(finished)
        self._views(r, None)
        if steps == -1:
            raise RuntimeError(f"a {self.game} game did not end in {limit} moves")
        return int(-2 - steps) if steps < -1 else result

    def copy_rows(self, src: Any, dst: Any) -> None:
        """Tables ``dst[i]`` take table ``src[i]``'s game as it stands (position, scores and
        chance stream: from then on both play the same game for the same moves). Search loads
        a world once and copies it to a row per first move. ``src`` may repeat a table;
        ``dst`` must be distinct and disjoint from ``src``; the count of games started at each table is its own."""
        if not self._has_reset:
            raise RuntimeError("call reset() before copy_rows()")
        s, d = np.asarray(src), self._table_rows(dst)
        if s.ndim != 1 or not np.issubdtype(s.dtype, np.integer) or (s.size and (s.min() < 0 or s.max() >= self.num_envs)):
            raise ValueError(f"src must be a 1-d sequence of table indices in [0, {self.num_envs})")
        if s.size != d.size:
            raise ValueError(f"src and dst differ in length: {s.size} and {d.size}")
        if np.intersect1d(s, d).size:
            raise ValueError("src and dst must not share a table")
        for f in self._table_fields:
            a = self._st[f]
            a[d] = a[s]
        self._mask[d] = self._mask[s]

    def shuffle_unseen(self, rows: Any, seeds: Any, tops: Any = None) -> None:
        """Tables ``rows`` redeal what no seat can see, as the readable engine's
        ``shuffle_unseen(numpy.random.default_rng(seeds[i]), top=tops[i])`` does: the chance
        stream becomes that generator's, the draw pile (where the game has one) is shuffled with
        it, and where ``tops[i] >= 0`` a card of that kind is drawn next. Every view stays as it
        was. The luck-adjusted estimator samples chance outcomes with it."""
        if not self._has_reset:
            raise RuntimeError("call reset() before shuffle_unseen()")
        r, s = self._table_rows(rows), np.asarray(seeds)
        if s.shape != r.shape or not np.issubdtype(s.dtype, np.integer) or (s.size and (s.min() < 0 or s.max() > 2**63 - 1)):
            raise ValueError(f"seeds must be integers from 0 to 2**63 - 1, one per row ({r.size}), got {s.dtype} {s.shape}")
        top = np.full(r.size, -1, np.int64) if tops is None else np.asarray(tops)
        if top.shape != r.shape or not np.issubdtype(top.dtype, np.integer):
            raise ValueError(f"tops must be integers, one per row ({r.size}), got {top.dtype} {top.shape}")
        pile = getattr(self._st, "draw", None)
        forced = top >= 0
        if forced.any():
            if pile is None:
                raise ValueError(f"{self.game}: no draw pile to draw a given card from")
            held = (pile[r] == top[:, None]) & (np.arange(pile.shape[1]) < self._st.ndraw[r][:, None])
            missing = forced & ~held.any(axis=1)
            if missing.any():
                raise ValueError(f"no card of kind {int(top[missing][0])} in the draw pile of table {int(r[missing][0])}")
        R.reseed_and_shuffle(self._st.rng, r, s.astype(np.int64), pile, None if pile is None else self._st.ndraw,
                             top.astype(np.int64))

    def _check_world(self, i: int, world: Any, stream: bool = True) -> None:
        where = f"worlds[{i}]" if stream else "the information state's world"
        if not isinstance(world, self.engine_cls):
            raise ValueError(f"{where} is a {type(world).__name__}, not a {self.engine_cls.__name__} engine ({self.game})")
        if world.num_players != self.num_players:
            raise ValueError(f"{where} has {world.num_players} players; this env has {self.num_players}")
        if dict(world.options) != self.options:
            differ = ", ".join(f"{k}={world.options.get(k)!r} (env: {v!r})" for k, v in self.options.items() if world.options.get(k) != v)
            raise ValueError(f"{where} has other rule options: {differ}")
        if not hasattr(world, "game_over"):
            raise ValueError(f"{where} has no game: reset it first")
        if world.game_over:
            raise ValueError(f"{where}'s game is over: nothing to play on from")
        if stream and not isinstance(getattr(world, "rng", None), np.random.Generator):
            raise ValueError(f"{where} has no random stream (its rng is {type(getattr(world, 'rng', None)).__name__}, "
                             "not a numpy Generator): give it one, e.g. world.rng = numpy.random.default_rng(seed)")

    def observe(self, seats: Any, rows: Any = None) -> np.ndarray:
        """Observation of ``seats[t]`` at table ``t`` (an int array ``[N]``, or one int for all);
        with ``rows``, of ``seats[i]`` at table ``rows[i]`` only (``seats`` then ``[len(rows)]``)."""
        if not self._has_reset:
            raise RuntimeError("call reset() before observe()")
        r = self._rows if rows is None else self._table_rows(rows)
        s = np.asarray(seats)
        if s.shape == ():
            s = np.full(r.size, s)
        if s.shape != (r.size,) or not np.issubdtype(s.dtype, np.integer):
            raise ValueError(f"seats must be an int or an integer array of shape ({r.size},), got {s.dtype} {s.shape}")
        if s.size and (s.min() < 0 or s.max() >= self.num_players):
            raise ValueError(f"seats must be in [0, {self.num_players})")
        obs = np.empty((r.size, self.obs_size), np.float32)
        self._k.write_views(self._st, r, s.astype(np.int64), obs, self._mask, False)
        return obs

    def state(self, rows: Any = None) -> np.ndarray:
        """The global state (every hand: `Engine.state()`) of every table, or of tables ``rows``."""
        if not self._has_reset:
            raise RuntimeError("call reset() before state()")
        r = self._rows if rows is None else self._table_rows(rows)
        out = np.empty((r.size, self.state_size), np.float32)
        self._k.write_state(self._st, r, out)
        return out

    def scores(self) -> np.ndarray:
        if not self._has_reset:
            raise RuntimeError("call reset() before scores()")
        return self._k.scores(self._st)

    def state_bytes_per_table(self) -> float:
        """Memory of the game state per table (the observation arrays not counted)."""
        total = sum(self._st[f].nbytes for f in self._table_fields) + self._games.nbytes + self._mask.nbytes
        return total / self.num_envs


def _table_fields(kernels: Any, num_players: int, options: dict) -> list[int]:
    """The indices of a game state's fields that hold one entry per table (the others are the
    rules and scratch space): those whose length follows the number of tables."""
    one, two = kernels.make_state(1, num_players, options), kernels.make_state(2, num_players, options)
    return [i for i, (a, b) in enumerate(zip(one, two))
            if isinstance(a, np.ndarray) and a.shape[:1] == (1,) and b.shape[:1] == (2,)]


@njit(cache=True)
def _illegal_rows(mask, rows, actions):
    """The positions i where ``actions[i]`` is not legal at table ``rows[i]``."""
    bad = np.zeros(actions.shape[0], np.bool_)
    for i in range(actions.shape[0]):
        a = actions[i]
        bad[i] = a < 0 or a >= mask.shape[1] or mask[rows[i], a] == 0
    return np.flatnonzero(bad)


@njit(cache=True)
def _row_problem(rows, seen):
    """0 when ``rows`` are distinct table indices, 1 when one is out of range, 2 when one repeats."""
    for i in range(rows.shape[0]):
        t = rows[i]
        if t < 0 or t >= seen.shape[0]:
            return 1
        if seen[t]:
            return 2
        seen[t] = True
    return 0


def vector_env(game: str, num_envs: int, num_players: int | None = 4, seed: int = 0, **rule_options: Any) -> VectorEnv:
    """``num_envs`` tables of ``game`` in one batched engine; see `envs.vector`."""
    return VectorEnv(game, num_envs, num_players, seed, **rule_options)
