"""Luck-adjusted scores: AIVAT-style corrections at the chance events of a finished game.

After a game (never while an agent chooses a move) its recorded moves are replayed from the
deal's seed, with the full state in view. At every move that meets chance (the first deal,
a card drawn from the pile, a reshuffle or a new hand dealt from the engine's stream) the
seat's correction grows by

    V(state after the outcome chance dealt) - E over outcomes [V(state after that outcome)]

and the adjusted score is the score minus the summed correction. The expectation is taken
with the same action from the state just before the move. Every term has expectation zero
given everything before it, whatever V is: the adjusted mean is unbiased, and a V close to the
final score takes most of the luck out.

Two ways to take the expectation:

* `batched_corrections` (what tournaments use): every game of a run replayed side by side on
  the batched engine. Before each move the table's state is kept; a move that drew from the
  pile or the stream met chance, and then copies of the kept state (`strata`: one per card
  kind the pile holds, the first card drawn set to that kind and weighted by its share of the
  pile, everything else no seat can see redealt: `VectorEnv.shuffle_unseen`) take the same
  move. The first card drawn is so averaged over exactly, later draws and deals of the same
  move by one sample per copy. `sampled_corrections` is the same on the readable engine, one
  game at a time: the reference, equal to the batched numbers.
* `corrections`: on the readable engine, every way the move can turn out enumerated
  (`Engine.step_outcomes`: each draw's kinds, each with count / pile size), and sampled where
  the move meets a deal (`Engine.shuffle_unseen`). Exact, and 100-300 times slower.

V is `LinearValue`: the final score when the game is over, otherwise a ridge fit of a seat's
final score on its observation, fitted on heuristic games over seeds no tournament uses
(``python -m experiments.tournament.luck --game neu --players 4`` writes
``values/<game>-<n>p.npz`` beside this file). A game without a fitted file uses V = the
current score, which is still unbiased.
"""

from __future__ import annotations

import argparse
import functools
import os
import pickle
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import envs

VALUES = Path(__file__).with_name("values")
FIT_SEED = 7_000_000_000  # fitting deals: far from every tournament's deal seeds
SAMPLES = 4  # sampled outcomes per chance event that has no pile to enumerate


def _clone(engine):
    return pickle.loads(pickle.dumps(engine, pickle.HIGHEST_PROTOCOL))


class LinearValue:
    """V[seat] = observe(seat) · w + b + the seat's score; the final score once the game is over."""

    def __init__(self, w: np.ndarray | None = None, b: float = 0.0):
        self.w, self.b = w, float(b)

    def __call__(self, engine) -> np.ndarray:
        scores = np.asarray(engine.scores, dtype=float)
        if engine.game_over or self.w is None:
            return scores
        obs = np.stack([engine.observe(s) for s in range(engine.num_players)])
        return obs @ self.w + self.b + scores

    @classmethod
    @functools.lru_cache(maxsize=None)  # read once per process; every game of a run uses it
    def load(cls, game: str, num_players: int) -> "LinearValue":
        """The fitted V of `game` at `num_players`, checked (`check_value_file`); V = the score without one."""
        path = VALUES / f"{game}-{num_players}p.npz"
        if not path.exists():
            return cls()
        w, b = check_value_file(path, envs.info(game, num_players).obs_size)
        return cls(w, b)


MAX_WEIGHT = 1e6  # |w| and |b| of a sane fit are below 10**3 (scores are at most hundreds)


def check_value_file(path, obs_size: int) -> tuple[np.ndarray, float]:
    """The weights of a value file, refused in one line when the file is not a whole .npz with a
    float ``w`` of the observation's size and a float ``b``, all finite and below `MAX_WEIGHT`."""
    from agents.npzfile import read_npz

    z = read_npz(path, {"w": ("f", (obs_size,)), "b": ("f", ())}, 64 * obs_size + 4096, "value file")
    w, b = z["w"].astype(np.float64), float(z["b"])
    if not (np.isfinite(w).all() and np.isfinite(b) and np.abs(w).max(initial=0) < MAX_WEIGHT and abs(b) < MAX_WEIGHT):
        raise ValueError(f"value file {path}: its weights must be finite and below {MAX_WEIGHT:g} in size; "
                         f"refit it with python -m experiments.tournament.luck")
    return w, b


def lineup_input(known: Sequence[str], seated: Sequence[str]) -> np.ndarray:
    """Who sits where, as a learned value reads it: per seat, a one-hot over the ``known`` agents."""
    out = np.zeros((len(seated), len(known)), np.float32)
    for s, name in enumerate(seated):
        out[s, list(known).index(name)] = 1.0
    return out.reshape(-1)


class NetValue:
    """V[seat] = the seat's score + a small network's guess of what that score gains by the game's
    end, from the full state (`Engine.state()`: every hand, the pile) and who sits where (per seat,
    a one-hot over the agents it was fitted on). It is fitted on batched games of those agents
    (`experiments.tournament.value_fit`) and runs row by row on the compiled actor's kernel
    (`agents.actor_kernels.actor_logits`), so a game's correction does not depend on its batch.
    It is for scoring only: no agent ever sees it. `value_for` uses it only for a lineup of the
    agents it knows, with the game's default rules."""

    def __init__(self, table: np.ndarray, dims: np.ndarray, agents: Sequence[str], num_players: int):
        self.table, self.dims, self.agents, self.num_players = table, dims, tuple(agents), num_players

    def knows(self, agents) -> bool:
        return set(agents) <= set(self.agents)

    def lineup(self, seated: Sequence[str]) -> np.ndarray:
        """The network's lineup input for agents ``seated[s]`` in seat s (`lineup_input`)."""
        return lineup_input(self.agents, seated)

    def rows(self, state: np.ndarray, lineups: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """V of games in their full states ``state[i]`` with lineups ``lineups[i]`` (`lineup`) and scores ``scores[i]``."""
        from agents.actor_kernels import actor_logits

        x = np.concatenate([state, lineups], axis=1).astype(np.float32)
        out = np.empty((len(x), int(self.dims[3])), np.float32)
        actor_logits(x, self.table, self.dims, out)
        return np.asarray(scores, np.float64) + out

    def seated(self, agents: Sequence[str]) -> Callable:
        """V of a readable engine with ``agents[s]`` in seat s (what `corrections` and `sampled_corrections` take)."""
        lineup = self.lineup(agents)[None]

        def value(engine) -> np.ndarray:
            scores = np.asarray(engine.scores, dtype=float)
            return scores if engine.game_over else self.rows(engine.state()[None], lineup, scores[None])[0]
        return value

    @classmethod
    @functools.lru_cache(maxsize=None)
    def load(cls, game: str, num_players: int) -> "NetValue | None":
        """The learned V of `game` at `num_players` (``values/<game>-<n>p-net.npz``), checked
        (`check_net_file`); None without one."""
        path = VALUES / f"{game}-{num_players}p-net.npz"
        return cls(*check_net_file(path, game, num_players)) if path.exists() else None


NET_ARRAYS = {"mean": ("f", ("in",)), "std": ("f", ("in",)), "w1": ("f", ("in", "h")), "b1": ("f", ("h",)),
              "w2": ("f", ("h", "h")), "b2": ("f", ("h",)), "w3": ("f", ("h", "n")), "b3": ("f", ("n",)),
              "agents": ("U", (None,)), "game": ("U", ()), "players": ("i", ()), "command": ("U", ()),
              "held_out_r2": ("f", ())}


def check_net_file(path, game: str, num_players: int) -> tuple:
    """A learned value file as `NetValue` takes it (table, sizes, agents, players), refused in one
    line when it is not a whole .npz of the expected arrays (`agents.npzfile.read_npz`: a pickle is
    refused unread), is for another game or player count, or holds weights that are not finite or
    not below `MAX_WEIGHT`."""
    from agents.actor_kernels import layer_table
    from agents.npzfile import read_npz

    z = read_npz(path, NET_ARRAYS, 64 << 20, "value file")
    if str(z["game"]) != game or int(z["players"]) != num_players:
        raise ValueError(f"value file {path}: it is for {z['game']} at {int(z['players'])} players, not {game} at {num_players}")
    agents = [str(a) for a in z["agents"]]
    size = envs.info(game, num_players).state_size + num_players * len(agents)
    if z["mean"].shape[0] != size or z["w3"].shape[1] != num_players or len(set(agents)) != len(agents):
        raise ValueError(f"value file {path}: its network reads {z['mean'].shape[0]} inputs and gives {z['w3'].shape[1]} values, "
                         f"expected {size} (the state and a one-hot of {len(agents)} distinct agents per seat) and {num_players}")
    arrays = [z[k] for k in ("mean", "std", "w1", "b1", "w2", "b2", "w3", "b3")]
    if not all(np.isfinite(a).all() and np.abs(a).max(initial=0) < MAX_WEIGHT for a in arrays) or not (z["std"] > 0).all():
        raise ValueError(f"value file {path}: its weights must be finite and below {MAX_WEIGHT:g} in size, its std above 0; "
                         f"refit it with python -m experiments.tournament.value_fit")
    table, dims = layer_table(z["mean"], z["std"], arrays[2::2], arrays[3::2])
    return table, dims, agents, num_players


def value_for(game: str, num_players: int, agents=(), rule_options: dict | None = None) -> "NetValue | LinearValue":
    """The V a run's corrections use: the game's learned `NetValue` when it knows every agent of the
    run (``agents``: their names) and the rules are the default; otherwise the linear one. Chosen
    once per run, so every game of the run is corrected with the same V."""
    net = None if rule_options else NetValue.load(game, num_players)
    return net if net is not None and net.knows(agents) else LinearValue.load(game, num_players)


def expected_value(before, action: int, value: Callable, rng: np.random.Generator, samples: int = SAMPLES) -> np.ndarray:
    """E over chance outcomes of V after `action` from `before` (which is not changed): exactly,
    over every way the move can turn out (`Engine.step_outcomes`: each draw's kinds with their
    probabilities), or, for a move that meets a deal (a new round or hand from the stream),
    by `samples` fresh draws of everything no seat can see (`Engine.shuffle_unseen`)."""
    try:
        branches = before.step_outcomes(action)
    except ValueError:
        out = 0.0
        for _ in range(samples):
            cf = _clone(before)
            cf.shuffle_unseen(np.random.default_rng(rng.integers(2**63)))
            cf.step(action)
            out = out + value(cf) / samples
        return out
    return sum(p * value(after) for p, after, _, _ in branches)


def corrections(game: str, num_players: int, rule_options: dict | None, deal_seed: int, moves: Sequence[tuple[int, Any]],
                value: Callable | None = None, seed: int = 0, samples: int = SAMPLES) -> list[float]:
    """Per seat, the summed luck of one finished game (subtract it from the score)."""
    value = value or LinearValue.load(game, num_players)
    cls = envs.engine_class(game)
    rng = np.random.default_rng([seed, deal_seed & (2**63 - 1)])
    engine = cls(num_players, **(rule_options or {}))
    engine.reset(np.random.default_rng(deal_seed))
    fresh = 0.0
    for _ in range(samples):  # the first deal against fresh deals
        other = cls(num_players, **(rule_options or {}))
        other.reset(np.random.default_rng(rng.integers(2**63)))
        fresh = fresh + value(other) / samples
    luck = value(engine) - fresh
    log: list = []
    engine.record_chance(log)  # the engine says which moves met chance (Engine.chance_draw and kin)
    before = _clone(engine)
    for seat, action in moves:
        if engine.current_player != seat or engine.game_over:
            raise ValueError(f"{game}: the recorded move of seat {seat} does not fit the replay (seat {engine.current_player} to move)")
        seen = len(log)
        engine.step(int(action))
        if len(log) > seen:  # a chance event happened in this step
            luck = luck + value(engine) - expected_value(before, int(action), value, rng, samples)
        before.step(int(action))  # the state before the next move, in step with `engine`
    return [float(x) for x in luck]


def strata(counts: np.ndarray | None, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """The copies that stand for a move's chance outcomes, as (the kind of card each draws first,
    -1 for any; each copy's weight). With a draw pile (``counts[k]``: its cards of kind k), one
    copy per kind, weighted by its share of the pile, so the first card drawn is averaged over
    exactly; with an empty pile, a copy per kind all the same, and without a pile `samples`,
    each of equal weight (their draws come from the redealt stream)."""
    if counts is None or counts.sum() == 0:
        size = samples if counts is None else len(counts)
        return np.full(size, -1, np.int64), np.full(size, 1.0 / size)
    tops = np.where(counts > 0, np.arange(len(counts)), -1)
    return tops.astype(np.int64), counts / counts.sum()


def _kinds(engine) -> int | None:
    """How many kinds of card a draw pile of the game can hold (None: the game has no draw pile)."""
    return max(engine.deck) + 1 if hasattr(engine, "draw") else None


def sampled_corrections(game: str, num_players: int, rule_options: dict | None, deal_seed: int,
                        moves: Sequence[tuple[int, Any]], value: Callable | None = None, seed: int = 0,
                        samples: int = SAMPLES) -> list[float]:
    """`corrections` with the outcomes of every move stratified, on the readable engine: the
    reference of `batched_corrections`, which gives the same numbers. Before every move, copies
    of the state (`strata`) redeal what no seat can see (``shuffle_unseen(default_rng(s), top)``,
    each ``s`` from the game's generator), the card drawn first set per copy, and take the move;
    the seat's luck grows by V after the real move less the weighted mean of V after the
    copies' (0 for a move that meets no chance: the copies then agree). The first deal is
    compared with `samples` fresh deals."""
    value = value or LinearValue.load(game, num_players)
    cls = envs.engine_class(game)
    rng = np.random.default_rng([seed, deal_seed & (2**63 - 1)])
    engine = cls(num_players, **(rule_options or {}))
    engine.reset(np.random.default_rng(deal_seed))
    kinds = _kinds(engine)
    fresh = 0.0
    for s in rng.integers(2**63, size=samples):
        other = cls(num_players, **(rule_options or {}))
        other.reset(np.random.default_rng(s))
        fresh = fresh + value(other)
    luck = value(engine) - fresh / samples
    for seat, action in moves:
        if engine.current_player != seat or engine.game_over:
            raise ValueError(f"{game}: the recorded move of seat {seat} does not fit the replay (seat {engine.current_player} to move)")
        counts = None if kinds is None else np.bincount(np.asarray(engine.draw, np.int64), minlength=kinds)
        tops, weights = strata(counts, samples)
        expected = 0.0
        for s, top, w in zip(rng.integers(2**63, size=len(tops)), tops, weights):
            if w > 0:
                cf = _clone(engine)
                cf.shuffle_unseen(np.random.default_rng(s), None if top < 0 else int(top))
                cf.step(int(action))
                expected = expected + w * value(cf)
        engine.step(int(action))
        luck = luck + value(engine) - expected
    return [float(x) for x in luck]


def batch_values(value: "LinearValue | NetValue", venv, rows: np.ndarray, final: np.ndarray | None = None,
                 lineups: np.ndarray | None = None) -> np.ndarray:
    """`value` of tables ``rows`` of a batched env, every seat [len(rows), n]: a seat's score plus
    its fitted part, as `value` gives an engine (a `NetValue` also reads ``lineups[i]``, table
    ``rows[i]``'s lineup); a row whose game just ended takes its final scores from ``final`` (the
    rows of ``final`` that are NaN are games still going)."""
    n = venv.num_players
    out = venv.scores()[rows].astype(np.float64)
    if isinstance(value, NetValue):
        out = value.rows(venv.state(rows), lineups, out)
    elif value.w is not None:  # each row's products summed along the row: the same bits in any batch
        for s in range(n):
            out[:, s] += (venv.observe(s, rows) * value.w).sum(axis=1) + value.b
    if final is not None:
        ended = ~np.isnan(final[:, 0])
        out[ended] = final[ended]
    return out


def batched_corrections(game: str, num_players: int, rule_options: dict | None, records: Sequence[dict],
                        value: "LinearValue | NetValue | None" = None, seed: int = 0, samples: int = SAMPLES,
                        tick: Callable[[int], None] | None = None) -> list[list[float]]:
    """`sampled_corrections` of every record (its ``deal_seed`` and ``moves``) at once, on the
    batched engine: a table replays each game, and a table per copy (`strata`) takes its state
    before every move (``copy_rows``), redeals what no seat can see (``shuffle_unseen``, with the
    seeds `sampled_corrections` draws) and takes the same move. The games go move by move side
    by side, every table in one step call. ``tick(k)`` is called as k more games are done. A
    `NetValue` reads each record's ``agents`` (its lineup); without `value`, `value_for` chooses
    from the records' agents (a run that corrects in chunks chooses once, for all of them)."""
    n, G = num_players, len(records)
    if G == 0:
        return []
    if value is None:
        value = value_for(game, n, {a for r in records for a in r.get("agents", ())}, rule_options)
    moves = [list(r["moves"]) for r in records]
    probe = envs.engine_class(game)(n, **(rule_options or {}))
    probe.reset(np.random.default_rng(0))
    kinds = _kinds(probe)
    per_move = kinds or samples  # the copies of a move (`strata`), and the seeds drawn for them
    C = max(samples, per_move)  # tables per game beside its own
    # Every seed a game's generator gives, in the order `sampled_corrections` draws them: the
    # fresh deals, then `per_move` per move (one 64-bit draw each, so one call gives the same).
    seeds = [np.random.default_rng([seed, int(r["deal_seed"]) & (2**63 - 1)]).integers(
        2**63, size=samples + per_move * len(m)) for r, m in zip(records, moves)]
    venv = envs.vector_env(game, G * (C + 1), n, seed=0, **(rule_options or {}))
    copies = (G + np.arange(G * C, dtype=np.int64)).reshape(G, C)
    fresh = np.zeros((G, C), np.int64)
    fresh[:, :samples] = [s[:samples] for s in seeds]
    venv.reset(np.concatenate([np.array([int(r["deal_seed"]) for r in records], np.int64), fresh.reshape(-1)]))
    lineups = None  # per table: its game's lineup, which a NetValue reads
    if isinstance(value, NetValue):
        own = np.stack([value.lineup(r["agents"]) for r in records])
        lineups = np.concatenate([own, np.repeat(own, C, axis=0)])
    v = batch_values(value, venv, np.arange(G * (C + 1)), None, lineups)
    luck = v[:G] - v[G:].reshape(G, C, n)[:, :samples].mean(1)
    pile = getattr(venv._st, "draw", None)
    for t in range(max(map(len, moves))):
        on = np.array([g for g in range(G) if t < len(moves[g])], np.int64)
        seats = np.array([moves[g][t][0] for g in on], np.int64)
        actions = np.array([int(moves[g][t][1]) for g in on], np.int64)
        _, _, to_act = venv.views(on)
        if not np.array_equal(to_act, seats):
            g = int(on[np.flatnonzero(to_act != seats)[0]])
            raise ValueError(f"{game}: the recorded move {t} of deal {records[g].get('deal')} does not fit the replay")
        tops = np.full((on.size, C), -1, np.int64)
        weights = np.zeros((on.size, C))
        at = samples + per_move * t
        step_seeds = np.zeros((on.size, C), np.int64)
        step_seeds[:, :per_move] = [seeds[g][at:at + per_move] for g in on]
        if pile is None:
            weights[:, :per_move] = 1.0 / per_move
        else:  # `strata` of every table at once: its pile's count of each kind
            held = pile[on] == np.arange(kinds)[:, None, None]  # [kinds, tables, places]
            counts = (held & (np.arange(pile.shape[1]) < venv._st.ndraw[on][:, None])).sum(axis=2).T
            size = counts.sum(axis=1, keepdims=True)
            tops[:, :kinds] = np.where(counts > 0, np.arange(kinds), -1)
            weights[:, :kinds] = np.where(size > 0, counts / np.maximum(size, 1), 1.0 / kinds)
        # The real tables move first, each state kept in its first copy. Only a move that drew
        # from the pile or the stream met chance; the others' copies would agree with it (luck 0).
        venv.copy_rows(on, copies[on, 0])
        ndraw = None if pile is None else venv._st.ndraw[on].copy()
        stream = venv._st.rng[on].copy()
        _, _, _, _, done = venv.step(actions, rows=on)
        final = np.where(done[:, None], venv.final_scores[on], np.nan)
        met = (venv._st.rng[on] != stream).any(axis=1) | done
        if ndraw is not None:
            met |= venv._st.ndraw[on] != ndraw
        if met.any():
            chance = on[met]
            scratch = copies[chance].reshape(-1)
            if C > 1:
                venv.copy_rows(np.repeat(copies[chance, 0], C - 1), copies[chance, 1:].reshape(-1))
            venv.shuffle_unseen(scratch, step_seeds[met].reshape(-1), tops[met].reshape(-1))
            ended = venv.step(np.repeat(actions[met], C), rows=scratch)[4]
            both = np.concatenate([chance, scratch])
            v = batch_values(value, venv, both, np.concatenate([final[met], np.where(ended[:, None], venv.final_scores[scratch], np.nan)]),
                             None if lineups is None else lineups[both])
            m = chance.size
            luck[chance] += v[:m] - np.einsum("gc,gcs->gs", weights[met], v[m:].reshape(m, C, n))
        last = np.array([t == len(moves[g]) - 1 for g in on])
        if not np.array_equal(done, last):
            raise ValueError(f"{game}: a recorded game does not end where its moves end in the replay")
        if tick is not None and last.any():
            tick(int(last.sum()))
    return [[float(x) for x in row] for row in luck]


def adjusted_scores(rec: dict) -> list[float]:
    """A record's scores minus its luck (`corrections`, stored as ``rec["luck"]``); a correction
    that is not a finite number is an error, never a "nan" in a report."""
    out = [s - c for s, c in zip(rec["scores"], rec["luck"])]
    if not np.isfinite(out).all():
        raise RuntimeError(f"the luck correction of deal {rec.get('deal')} is not a finite number ({rec['luck']}); "
                           f"the value file is broken: refit it with python -m experiments.tournament.luck")
    return out


# -- fitting V -------------------------------------------------------------------
def fit(game: str, num_players: int, games: int = 300, ridge: float = 1.0, seed: int = FIT_SEED, agent: str = "heuristic") -> LinearValue:
    """Ridge fit of (final score - current score) on each seat's observation at every step of
    `games` games of `agent` in every seat, on deals from `seed` (none a tournament plays)."""
    from agents import make_agent

    cls = envs.engine_class(game)
    xs, ys = [], []
    for g in range(games):
        bots = [make_agent(agent, game, num_players, seed=seed + g * 8 + s) for s in range(num_players)]
        engine = cls(num_players)
        engine.reset(np.random.default_rng(seed + g))
        seen = []
        while not engine.game_over:
            seen.append((np.stack([engine.observe(s) for s in range(num_players)]), np.asarray(engine.scores, float)))
            p = engine.current_player
            engine.step(int(bots[p].act({"observation": engine.observe(p), "action_mask": engine.legal_mask()})))
        final = np.asarray(engine.scores, float)
        for obs, now in seen:
            xs.append(obs)
            ys.append(final - now)
    x = np.concatenate(xs)
    y = np.concatenate(ys)
    mean_x, mean_y = x.mean(0), y.mean()
    xc = x - mean_x
    w = np.linalg.solve(xc.T @ xc + ridge * len(x) * np.eye(x.shape[1]) / 1000, xc.T @ (y - mean_y))
    return LinearValue(w, mean_y - mean_x @ w)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m experiments.tournament.luck",
                                description="Fit the value V of the luck-adjusted estimator for one game and player count.")
    p.add_argument("--game", required=True, choices=envs.available_games())
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--games", type=int, default=300, help="heuristic games to fit on (default: 300)")
    a = p.parse_args(argv)
    if a.games < 1:
        p.error("--games must be at least 1")
    try:
        envs.info(a.game, a.players)
    except ValueError as e:
        p.error(str(e))
    v = fit(a.game, a.players, a.games)
    VALUES.mkdir(exist_ok=True)
    path = VALUES / f"{a.game}-{a.players}p.npz"
    aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # written aside, then renamed: never half a file
    try:
        with open(aside, "wb") as f:
            np.savez(f, w=v.w, b=np.float64(v.b))
        os.replace(aside, path)
    finally:
        aside.unlink(missing_ok=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
