"""Fit pimc's ``belief=tilted``: how the heuristic's hidden hands differ from a uniform redeal.

    python -m lab.belief_tilt --game neu
    python -m lab.belief_tilt --game not_your_mas_jong --players 4
    python -m lab.belief_tilt --game not_your_mas_jong --players 3

Heuristic self-play gives information states (every third decision with a choice, of any
seat) and, for each, the other seats' real hands. For each state, rows are drawn uniformly
(`VectorEnv.sample_rows`) and walked by the heuristic's own belief kernel
(`tilt_rows`) with the current weights; the weights are then moved by the log-ratio of the
real to the walked statistics, and the walk repeated (moment matching: iterative
proportional fitting, which a product tilt needs because the hands share one pool of cards).

* Neu: one log weight per card kind, for the cards in the other hands.
* Ma's Jong: a log weight per (cards left to draw // 5, hand distance), and ``beta`` per card
  type on a seat's discard pile that would bring its hand closer now (the factor for a card
  the seat let go that would have completed its hand, ``BELIEF_GAMMA``, is fixed: the
  heuristic never lets a win go).

A progress bar follows the self-play and each iteration. It prints the statistics per iteration and, at the end, the tables to paste into the
heuristic (`agents.heuristic.neu.NeuHeuristic.BELIEF_TILT`,
`agents.heuristic.not_your_mas_jong.NotYourMasJongHeuristic.BELIEF_TILT` and ``BELIEF_BETA``).
The deals are seeds ``--seed`` on, kept apart from the seeds the ladder reports on.
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

import envs
from experiments import cli

ROWS = 16  # uniform rows walked per information state
SWEEPS = 10  # the heuristics' BELIEF_SWEEPS
BUCKETS, DISTANCES, WIDTH = 9, 7, 5  # Ma's Jong: rows of the table, distances 0..6 (6: 6 or more), cards per row


def decisions(game: str, n: int, games: int, seed: int):
    """(engine, seat) at every third decision with a choice, of any seat, in heuristic self-play."""
    from agents.search.evaluators import rollout_policy

    policy = rollout_policy("heuristic", game, n)
    for g in tqdm(range(games), desc=f"{game} {n}p self-play", unit="game", leave=False):
        e = envs.engine_class(game)(n)
        e.reset(np.random.default_rng(seed + g))
        step = 0
        while not e.game_over:
            p, mask = e.current_player, e.legal_mask()
            step += 1
            if mask.sum() > 1 and step % 3 == 0:
                yield e, p
            e.step(policy.act({"observation": e.observe(p), "action_mask": mask}))


def fit_neu(n: int, games: int, seed: int, iterations: int) -> np.ndarray:
    from agents.heuristic.kernels.neu_belief import tilt_rows
    from envs.neu import NUM_KINDS

    data, real = [], np.zeros(NUM_KINDS)
    for e, p in decisions("neu", n, games, seed):
        data.append((e.information_state(p), p))
        real += np.sum([h for s, h in enumerate(e.hands) if s != p], axis=0)
    venv = envs.vector_env("neu", ROWS, n, seed=0)
    venv.reset()
    rows, rng, logw = np.arange(ROWS), np.random.default_rng(seed), np.zeros(NUM_KINDS)
    print(f"neu {n}p: {len(data)} information states from {games} games")
    for it in range(iterations + 1):
        walked = np.zeros(NUM_KINDS)
        for info, p in tqdm(data, desc=f"iteration {it}", unit="state", leave=False):
            venv.sample_rows(rows, info, rng)
            tilt_rows(venv._st, rows, p, logw, SWEEPS, int(rng.integers(2**31)))
            others = [s for s in range(n) if s != p]
            walked += venv._st.hands[rows][:, others].sum(axis=(0, 1)) / ROWS
        ratio = real / walked
        print(f"  iteration {it}: real / walked per kind, worst {np.abs(np.log(ratio)).max():.3f}: {np.round(ratio, 3).tolist()}")
        if it < iterations:
            logw = logw + np.log(ratio)
    return np.round(logw - logw.mean(), 3)


def fit_mas_jong(n: int, games: int, seed: int, iterations: int) -> tuple[np.ndarray, float]:
    from agents.heuristic.kernels.hand_distance import shanten, shanten_each, tables
    from agents.heuristic.kernels.mas_jong_belief import tilt_rows
    from agents.heuristic.not_your_mas_jong import NotYourMasJongHeuristic, passed_counts
    from envs.not_your_mas_jong import NUM_TYPES

    GAMMA = NotYourMasJongHeuristic.BELIEF_GAMMA  # fixed: the heuristic never lets a win go

    add, dist = tables()

    def features(hand, locked_sets, discards) -> tuple[int, int]:
        hand = np.asarray(hand, np.int64).copy()
        d = min(int(shanten(hand, locked_sets, add, dist)), DISTANCES - 1)
        after = np.zeros(NUM_TYPES, np.int64)
        shanten_each(hand, locked_sets, 1, add, dist, after)
        return d, sum(1 for k in range(NUM_TYPES) if discards[k] > 0 and 0 <= after[k] < d)

    data, real_d, real_m = [], np.zeros((BUCKETS, DISTANCES)), 0.0
    for e, p in decisions("not_your_mas_jong", n, games, seed):
        b = min(len(e.draw) // WIDTH, BUCKETS - 1)
        info = e.information_state(p)
        data.append((info, p, b, passed_counts(info)))
        for s in range(n):
            if s != p:
                piles = np.bincount(np.array(e.discard_piles[s], np.int64), minlength=NUM_TYPES)
                d, m = features(e.hands[s], len(e.locked_sets[s]), piles)
                real_d[b, d] += 1
                real_m += m
    hands_seen = real_d.sum()
    print(f"not_your_mas_jong {n}p: {len(data)} information states from {games} games")
    venv = envs.vector_env("not_your_mas_jong", ROWS, n, seed=0)
    venv.reset()
    rows, rng = np.arange(ROWS), np.random.default_rng(seed)
    logw, beta = np.zeros((BUCKETS, DISTANCES)), 0.0
    law = lambda counts: (counts + 0.01) / (counts + 0.01).sum(axis=1, keepdims=True)  # a distance never seen: ~0
    p_real = law(real_d)
    for it in range(iterations + 1):
        walked_d, walked_m = np.zeros((BUCKETS, DISTANCES)), 0.0
        for info, p, b, passed in tqdm(data, desc=f"iteration {it}", unit="state", leave=False):
            venv.sample_rows(rows, info, rng)
            tilt_rows(venv._st, rows, p, logw, beta, passed, GAMMA, WIDTH, add, dist, SWEEPS, int(rng.integers(2**31)))
            st = venv._st
            for r in rows:
                for s in range(n):
                    if s != p:
                        d, m = features(st.hands[r, s], int(st.locked[r, s].sum()) // 3, st.discards[r, s])
                        walked_d[b, d] += 1
                        walked_m += m
        p_walked = law(walked_d)
        gap = np.abs(p_real - p_walked).sum(axis=1)[real_d.sum(axis=1) > 0].max()
        m_real, m_walked = real_m / hands_seen, walked_m / walked_d.sum()
        print(f"  iteration {it}: largest L1 gap of the distance laws {gap:.3f}; discarded types that would help: "
              f"real {m_real:.4f} a hand, walked {m_walked:.4f}; beta {beta:+.3f}")
        if it < iterations:
            seen = real_d.sum(axis=1) > 0
            logw[seen] += np.log(p_real[seen] / p_walked[seen])
            logw = np.clip(logw - logw[:, 1:2], -12.0, 0.0)  # relative to one exchange from complete; never above it
            # Farther is never likelier: a distance no real hand reached (and the walk has not
            # visited) is held below the ones that were seen, not left at the start's 0.
            logw[:, 1:] = np.minimum.accumulate(logw[:, 1:], axis=1)
            beta += np.log(max(m_real, 1e-4) / max(m_walked, 1e-4))
    last = int(np.flatnonzero(real_d.sum(axis=1) > 0).max())
    logw[last + 1:] = logw[last]  # more cards left than any real state had: as the most
    return np.round(logw, 3), round(float(beta), 3)


def main(argv=None) -> dict:
    p = cli.ArgumentParser(prog="python -m lab.belief_tilt", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", required=True, choices=("neu", "not_your_mas_jong"), help="a game whose heuristic has a belief kernel")
    p.add_argument("--players", type=cli.count, default=4, help="player count")
    p.add_argument("--games", type=cli.count, default=None, help="self-play games (default: 300 for Neu, 60 for Ma's Jong)")
    p.add_argument("--iterations", type=cli.count_or_zero, default=5, help="fitting iterations")
    p.add_argument("--seed", type=cli.seed, default=500_000, help="first self-play game's seed")
    a = p.parse_args(argv)
    try:
        envs.info(a.game, a.players)
    except ValueError as e:
        p.error(str(e))
    if a.game == "neu":
        logw = fit_neu(a.players, a.games or 300, a.seed, a.iterations)
        print(f"BELIEF_TILT = np.array({logw.tolist()})")
        return {"logw": logw}
    logw, beta = fit_mas_jong(a.players, a.games or 60, a.seed, a.iterations)
    print(f"BELIEF_TILT[{a.players}] = np.array({logw.tolist()})\nBELIEF_BETA[{a.players}] = {beta}")
    return {"logw": logw, "beta": beta}


if __name__ == "__main__":
    main()
