"""The loops over tables that every game's kernels share.

Each game's module keeps thin ``@njit(cache=True, _nrt=False)`` kernels
``step_rows``, ``write_views`` and ``write_state`` that call these loops with
the game's own helpers (``_move``, ``_public``, ``_legal`` and the like) passed
as function arguments.
Why arguments: numba's on-disk cache (``cache=True``) only keeps functions
defined at module level; a kernel built per game by a factory function (a
closure) misses the cache and recompiles in every new process. A numba
dispatcher passed as an argument is typed per dispatcher, and these loops are
``inline="always"``, so each game's kernel compiles to the same code as a loop
written out in that game's module: its helpers inlined, no reference counting.
Numba's own cache would not notice an edit here (nor in ``rng.py``) in the
kernels that inline it; `envs.kernel_cache` keys the cache by the sources, so
such an edit compiles afresh and nothing needs deleting.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch, move):
    """Play ``actions[i]`` for the seat to act at table ``rows[i]``, for every i.

    ``move(st, t, action, rewards, done, final_scores, final_ranks, scratch)``
    plays one table's move (``rewards``, ``done`` and the finals are indexed by table);
    ``scratch`` is a mask row it may overwrite.
    """
    for i in range(rows.shape[0]):
        move(st, rows[i], actions[i], rewards, done, final_scores, final_ranks, scratch)


@njit(cache=True, inline="always")
def end_game(t, score, done, final_scores, final_ranks):
    """Table t's game is over: its final scores are ``score[t]``, ranked highest first (ties share a rank)."""
    done[t] = True
    n = score.shape[1]
    for s in range(n):
        final_scores[t, s] = score[t, s]
        rank = 1
        for o in range(n):
            rank += score[t, o] > score[t, s]
        final_ranks[t, s] = rank


@njit(cache=True, inline="always")
def hand_only(st, t, seat, v, i):
    """Nothing but the hand is private: the public part starts right after it."""
    return i


@njit(cache=True, inline="always")
def write_views(st, rows, seats, obs, mask, write_mask, kinds, private, public, legal):
    """Observation of ``seats[i]`` at table ``rows[i]`` into ``obs[i]``; with write_mask, the
    mask of the player to act there into ``mask[i]``.

    The seat's hand comes first (``kinds`` counts: the game's constant, so
    that the offsets after it compile to constants). Then
    ``private(st, t, seat, v, kinds)`` writes whatever else only that seat
    knows and returns where ``public(st, t, seat, v, i)`` writes what it sees
    of the table; ``legal(st, t, row)`` writes the mask of the seat to act.
    """
    for i in range(rows.shape[0]):
        t = rows[i]
        seat = seats[i]
        v = obs[i]
        for k in range(kinds):
            v[k] = st.hands[t, seat, k]
        public(st, t, seat, v, private(st, t, seat, v, kinds))
        if write_mask:
            legal(st, t, mask[i])


@njit(cache=True, inline="always")
def write_state(st, rows, out, kinds, hidden):
    """Global state of tables ``rows`` into ``out[i]``: every seat's hand (``kinds`` counts each), then ``hidden(st, t, v, i)``.

    ``hidden`` writes what no single seat sees (the draw pile and the like)
    from index ``i`` on, then the public view.
    """
    n = st.hands.shape[1]
    for i in range(rows.size):
        t, v = rows[i], out[i]
        for s in range(n):
            for k in range(kinds):
                v[s * kinds + k] = st.hands[t, s, k]
        hidden(st, t, v, n * kinds)


@njit(cache=True, inline="always")
def draw_counts(st, t, v, i):
    """How many of each kind are left in the draw pile, from index ``i``; returns the index after."""
    kinds = st.hands.shape[2]
    v[i : i + kinds] = 0
    for c in range(st.ndraw[t]):
        v[i + st.draw[t, c]] += 1
    return i + kinds


@njit(cache=True, inline="always")
def play_out(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks, scratch,
             obs, mask, who, tables, active, start, step_rows, write_views, events, policy, params):
    """Play table ``rows[i]`` from ``actions[i]`` on, every seat moved by a compiled ``policy``,
    to the horizon (the next score event with ``round_only``, else the game's end), adding
    every seat's rewards into ``values[i]``; the search's play-out loop of
    `envs.vector.VectorEnv.play_out`, with no Python between steps.

    ``step_rows`` and ``write_views`` are the game's kernels, ``events(st, t)`` its score-event
    count of one table, ``policy(obs, mask, n, params, out)`` the moves for a batch of views.
    The other arrays are scratch space sized for ``rows`` (``obs``, ``mask``: per row; the
    rest per table or per row as named). Returns the agent-steps played, or -1 when a play-out
    did not end in ``limit`` steps. ``done[t]`` is left set at the tables whose game ended.
    """
    n = values.shape[1]
    k = rows.shape[0]
    for i in range(k):
        active[i] = i
        tables[i] = rows[i]
        start[i] = events(st, rows[i])
        done[rows[i]] = False
    steps = 0
    for _ in range(limit):
        for i in range(k):
            for s in range(n):
                rewards[tables[i], s] = 0.0
        step_rows(st, tables[:k], actions[:k], rewards, done, final_scores, final_ranks, scratch)
        steps += k
        j = 0
        for i in range(k):
            p, t = active[i], tables[i]
            for s in range(n):
                values[p, s] += rewards[t, s]
            if done[t] or (round_only and events(st, t) != start[p]):
                continue
            active[j], tables[j] = p, t
            j += 1
        k = j
        if k == 0:
            return steps
        for i in range(k):
            who[i] = st.cur[tables[i]]
        write_views(st, tables[:k], who[:k], obs[:k], mask[:k], True)
        policy(obs[:k], mask[:k], n, params, actions[:k])
    return -1


@njit(cache=True, inline="always")
def play_games(st, rows, values, moves, limit, rewards, done, final_scores, final_ranks, scratch,
               obs, mask, who, tables, active, actions, step_rows, write_views, policy, params):
    """Play tables ``rows`` from where they stand to their games' ends, every move chosen by a
    compiled ``policy``: a tournament's batch without Python between steps.

    ``policy(obs, mask, rows, seats, params, out)`` chooses the moves for a batch of views;
    ``rows[i]`` is the index into ``rows`` of the view's table (what per-row streams and
    lineups are kept by) and ``seats[i]`` the seat to act there. It returns -1, or the index
    of a view whose move it could not choose. Every seat's rewards are added into
    ``values[i]`` (float64, each step's float32 rewards as `step` returns them) and the
    moves made counted in ``moves[i]``; ``done[t]`` is left set at every table, and its
    final scores and ranks in ``final_scores[t]``, ``final_ranks[t]``. The other arrays
    are scratch space sized for ``rows``. Returns the agent-steps played; -1 when a game did
    not end in ``limit`` moves; -2 - i when the policy failed at the table ``rows[i]``.
    """
    n = values.shape[1]
    k = rows.shape[0]
    for i in range(k):
        active[i] = i
        tables[i] = rows[i]
        who[i] = st.cur[rows[i]]
        done[rows[i]] = False
    write_views(st, tables[:k], who[:k], obs[:k], mask[:k], True)
    steps = 0
    for _ in range(limit):
        bad = policy(obs[:k], mask[:k], active[:k], who[:k], params, actions[:k])
        if bad >= 0:
            return -2 - active[bad]
        for i in range(k):
            for s in range(n):
                rewards[tables[i], s] = 0.0
        step_rows(st, tables[:k], actions[:k], rewards, done, final_scores, final_ranks, scratch)
        steps += k
        j = 0
        for i in range(k):
            p, t = active[i], tables[i]
            moves[p] += 1
            for s in range(n):
                values[p, s] += rewards[t, s]
            if done[t]:
                continue
            active[j], tables[j] = p, t
            j += 1
        k = j
        if k == 0:
            return steps
        for i in range(k):
            who[i] = st.cur[tables[i]]
        write_views(st, tables[:k], who[:k], obs[:k], mask[:k], True)
    return -1
