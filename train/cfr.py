"""Exact solving of a small two-player preset: the game tree from the engine, CFR+ and exact best responses.

`build_tree` walks every path of the game from every first deal the engine lists (``deals()``),
asking the engine for the legal moves, the next seat and the rewards at each step: no rule is
written here. Chance inside the game comes from the engine too: a move that makes a seat draw
is expanded into a chance node with one branch per outcome and its exact probability
(`Engine.step_outcomes`); a move that meets a chance event the engine cannot list (a new
round dealt from the stream) is refused. Each decision belongs to an information set
(`Engine.information_key`: the seat's own observations and actions, and every other move as it
saw it, in order). The tree is then a set of flat arrays, level by level, and CFR+ (alternating
updates, linear averaging) and the best responses run on them with numpy.

Values are the env's rewards (`envs.engine.zero_sum_rewards`), summed over a game, for seat 0;
seat 1 gets minus that. ``nash_conv(tree, policy)`` is the sum of both seats' best-response
values against `policy`: 0 at an equilibrium.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np

from envs.engine import zero_sum_rewards


CHANCE = 2  # node_player of a chance node


@dataclass
class Tree:
    """A two-player zero-sum game tree as arrays. Nodes are decisions (and chance nodes, whose
    player is `CHANCE`); edges are moves (and chance outcomes, with their probability)."""

    num_actions: int
    node_player: np.ndarray  # [N] seat to act, or CHANCE
    node_info: np.ndarray  # [N] information set
    node_chance: np.ndarray  # [N] probability of the deal (roots), else 0
    node_depth: np.ndarray  # [N]
    edge_parent: np.ndarray  # [E]
    edge_action: np.ndarray  # [E]
    edge_child: np.ndarray  # [E] node, or -1 when the game ends
    edge_reward: np.ndarray  # [E] float64 reward to seat 0 on this move
    edge_prob: np.ndarray  # [E] a chance outcome's probability; 0 on a decision's edges
    info_player: np.ndarray  # [I]
    info_legal: np.ndarray  # [I, A] bool
    info_own_depth: np.ndarray  # [I] how many earlier decisions the seat made
    info_keys: list  # [I] bytes
    info_obs: list  # [I] (observation, mask) of the information set, to ask agents
    edge_draws: list  # [E] a chance edge's outcomes (the cards drawn, for `Engine.take_chance`); () on a decision's

    @property
    def num_infos(self) -> int:
        return len(self.info_keys)

    def edge_weights(self, policy: np.ndarray) -> np.ndarray:
        """[E]: each edge's probability under `policy` (a chance outcome's own probability)."""
        parents = self.edge_parent
        chance = self.node_player[parents] == CHANCE
        return np.where(chance, self.edge_prob, policy[self.node_info[parents], self.edge_action])

    def levels(self):
        """Edge indices grouped by their parent's depth, shallow first (computed once)."""
        if not hasattr(self, "_levels"):
            d = self.node_depth[self.edge_parent]
            order = np.argsort(d, kind="stable")
            cuts = np.searchsorted(d[order], np.arange(d.max() + 2))
            self._levels = [order[a:b] for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        return self._levels


def build_tree(engine, deals=None, rng_seed: int = 0, progress=None) -> Tree:
    """The whole game tree of `engine` (two players, zero-sum rewards) from each of its first
    deals (``engine.deals()``, or `deals`, a list of (probability, stacked deal)). `progress`,
    if given, is called with the number of deals once, then with no argument after each deal."""
    if engine.num_players != 2:
        raise ValueError(f"{engine.game_name}: exact solving needs two players, got {engine.num_players}")
    deals = engine.deals() if deals is None else deals
    A = engine.num_actions
    np_, ni, nc, nd = [], [], [], []
    ep, ea, ec, er, eq, ed = [], [], [], [], [], []
    infos: dict[bytes, int] = {}
    i_player, i_legal, i_depth, i_obs = [], [], [], []

    def edge(parent: int, action: int, reward: float, prob: float, draws: tuple = ()) -> int:
        ep.append(parent), ea.append(action), ec.append(-1), er.append(reward), eq.append(prob), ed.append(draws)
        return len(ep) - 1

    def new_node(player: int, info: int, chance: float, depth: int) -> int:
        np_.append(player), ni.append(info), nc.append(chance), nd.append(depth)
        return len(np_) - 1

    def node(eng, depth, own, chance):
        seat = eng.current_player
        obs, mask = eng.observe(seat), eng.legal_mask().copy()
        key = eng.information_key(seat)
        i = infos.get(key)
        if i is None:
            i = infos[key] = len(i_player)
            i_player.append(seat), i_legal.append(mask > 0), i_depth.append(own[seat]), i_obs.append((obs, mask))
        elif i_player[i] != seat or not np.array_equal(i_legal[i], mask > 0):
            raise AssertionError(f"{eng.game_name}: one information set with two seats or two sets of legal moves")
        n = new_node(seat, i, chance, depth)
        o = list(own)
        for a in np.flatnonzero(mask):
            o[seat] = own[seat] + 1
            branches = eng.step_outcomes(int(a))  # ValueError: chance the engine cannot list
            if len(branches) == 1 and not branches[0][3]:  # no chance met: a plain move
                _, child, event, _ = branches[0]
                e = edge(n, int(a), zero_sum_rewards(event)[0] if event is not None else 0.0, 0.0)
                if not child.game_over:
                    ec[e] = node(child, depth + 1, list(o), 0.0)
                continue
            # The move meets chance: its edge leads to a chance node, one branch per outcome.
            e = edge(n, int(a), 0.0, 0.0)
            c = ec[e] = new_node(CHANCE, 0, 0.0, depth + 1)
            for prob, child, event, draws in branches:  # action 0: a chance edge indexes no policy
                b = edge(c, 0, zero_sum_rewards(event)[0] if event is not None else 0.0, prob, draws)
                if not child.game_over:
                    ec[b] = node(child, depth + 2, list(o), 0.0)
        return n

    if progress is not None:
        progress(len(deals))
    for p, deal in deals:
        eng = copy.deepcopy(engine)
        eng.keep_history()  # the information-set keys (Engine.information_key)
        eng.reset(np.random.default_rng(rng_seed), deal=deal)
        node(eng, 0, [0, 0], p)
        if progress is not None:
            progress()
    arr = np.asarray
    return Tree(A, arr(np_, np.int64), arr(ni, np.int64), arr(nc, np.float64), arr(nd, np.int64),
                arr(ep, np.int64), arr(ea, np.int64), arr(ec, np.int64), arr(er, np.float64), arr(eq, np.float64),
                arr(i_player, np.int64), np.array(i_legal, bool).reshape(-1, A), arr(i_depth, np.int64),
                list(infos), i_obs, ed)


def uniform(tree: Tree) -> np.ndarray:
    """The uniform policy over legal moves, [I, A]."""
    legal = tree.info_legal.astype(np.float64)
    return legal / legal.sum(1, keepdims=True)


def reach(tree: Tree, policy: np.ndarray) -> np.ndarray:
    """[N, 3]: each node's reach probability through seat 0's moves, seat 1's moves, and chance."""
    r = np.zeros((len(tree.node_player), 3))
    roots = tree.node_depth == 0
    r[roots, :2] = 1.0
    r[:, 2] = tree.node_chance
    weights = tree.edge_weights(policy)
    for edges in tree.levels():
        kids = tree.edge_child[edges]
        go = kids >= 0
        edges, kids = edges[go], kids[go]
        parents = tree.edge_parent[edges]
        p = weights[edges]
        rr = r[parents].copy()
        who = tree.node_player[parents]  # CHANCE = 2: a chance outcome multiplies chance's part
        rr[np.arange(len(edges)), who] *= p
        r[kids] = rr
    return r


def values(tree: Tree, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Seat 0's expected reward from each node ([N]) and after each move ([E]) under `policy`."""
    v = np.zeros(len(tree.node_player))
    q = np.zeros(len(tree.edge_parent))
    weights = tree.edge_weights(policy)
    for edges in reversed(tree.levels()):
        kids = tree.edge_child[edges]
        q[edges] = tree.edge_reward[edges] + np.where(kids >= 0, v[np.maximum(kids, 0)], 0.0)
        parents = tree.edge_parent[edges]
        np.add.at(v, parents, weights[edges] * q[edges])
    return v, q


def game_value(tree: Tree, policy: np.ndarray) -> float:
    """Seat 0's expected reward when both seats follow `policy`."""
    v, _ = values(tree, policy)
    return float(np.sum(tree.node_chance * v))


def _by_info(tree: Tree, weights: np.ndarray) -> np.ndarray:
    """Sum per-edge weights into [I, A] by the parent's information set and the move (a chance
    node's edges belong to no information set and count nowhere)."""
    flat = tree.node_info[tree.edge_parent] * tree.num_actions + tree.edge_action
    weights = np.where(tree.node_player[tree.edge_parent] == CHANCE, 0.0, weights)
    return np.bincount(flat, weights, minlength=tree.num_infos * tree.num_actions).reshape(tree.num_infos, -1)


def best_response(tree: Tree, policy: np.ndarray, seat: int) -> tuple[float, np.ndarray]:
    """The exact best response of `seat` to the other seat's part of `policy`, by backward
    induction over `seat`'s information sets, deepest (most earlier own decisions) first: a set's
    move values depend only on later decisions of its own seat, already chosen. Returns the
    best response's value for `seat` and the policy with `seat`'s part replaced by it."""
    sign = 1.0 if seat == 0 else -1.0
    pol = policy.copy()
    w = reach(tree, policy)
    weight = w[:, 1 - seat] * w[:, 2]  # the other seat's and chance's part of the reach
    mine = tree.info_player == seat
    for depth in range(int(tree.info_own_depth[mine].max(initial=0)), -1, -1):
        _, q = values(tree, pol)
        cf = _by_info(tree, weight[tree.edge_parent] * sign * q)
        at = np.flatnonzero(mine & (tree.info_own_depth == depth))
        best = np.argmax(np.where(tree.info_legal[at], cf[at], -np.inf), axis=1)
        pol[at] = 0.0
        pol[at, best] = 1.0
    return sign * game_value(tree, pol), pol


def nash_conv(tree: Tree, policy: np.ndarray) -> tuple[float, list[float]]:
    """Sum of the two seats' best-response values against `policy`, and each of them."""
    br = [best_response(tree, policy, s)[0] for s in (0, 1)]
    return br[0] + br[1], br


def score_range(tree: Tree) -> float:
    """Largest minus smallest total reward of seat 0 over the game's outcomes."""
    lo, hi = _extremes(tree)
    return hi - lo


def _extremes(tree: Tree) -> tuple[float, float]:
    lo = np.full(len(tree.node_player), np.inf)
    hi = np.full(len(tree.node_player), -np.inf)
    for edges in reversed(tree.levels()):
        kids = tree.edge_child[edges]
        r = tree.edge_reward[edges]
        elo = r + np.where(kids >= 0, lo[np.maximum(kids, 0)], 0.0)
        ehi = r + np.where(kids >= 0, hi[np.maximum(kids, 0)], 0.0)
        np.minimum.at(lo, tree.edge_parent[edges], elo)
        np.maximum.at(hi, tree.edge_parent[edges], ehi)
    roots = tree.node_depth == 0
    return float(lo[roots].min()), float(hi[roots].max())


def regret_matching(regrets: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Each action's positive regret over their sum; uniform over legal moves where none is positive."""
    pos = np.where(legal, np.maximum(regrets, 0.0), 0.0)
    total = pos.sum(1, keepdims=True)
    uni = legal / legal.sum(1, keepdims=True)
    return np.where(total > 0, pos / np.where(total > 0, total, 1.0), uni)


class CFRPlus:
    """CFR+ with alternating updates and linearly weighted averages (Tammelin 2014)."""

    def __init__(self, tree: Tree, match=regret_matching) -> None:
        self.tree = tree
        self.match = match  # regrets, legal -> policy (an exercise swaps in its own)
        self.regrets = np.zeros((tree.num_infos, tree.num_actions))
        self.avg = np.zeros_like(self.regrets)
        self.iterations = 0

    def iterate(self) -> None:
        t = self.tree
        self.iterations += 1
        for seat in (0, 1):
            sigma = np.asarray(self.match(self.regrets, t.info_legal), np.float64)
            w = reach(t, sigma)
            v, q = values(t, sigma)
            sign = 1.0 if seat == 0 else -1.0
            parent = t.edge_parent
            acting = t.node_player[parent] == seat
            cf = w[parent, 1 - seat] * w[parent, 2] * sign * (q - v[parent])
            mine = (t.info_player == seat)[:, None]
            self.regrets = np.where(mine, np.maximum(self.regrets + _by_info(t, np.where(acting, cf, 0.0)), 0.0),
                                    self.regrets)
            own = w[parent, seat] * sigma[t.node_info[parent], t.edge_action]
            self.avg += self.iterations * _by_info(t, np.where(acting, own, 0.0))

    def average_policy(self) -> np.ndarray:
        total = self.avg.sum(1, keepdims=True)
        uni = uniform(self.tree)
        return np.where(total > 0, self.avg / np.where(total > 0, total, 1.0), uni)

    def run(self, seconds: float, target: float | None = None, check_every: int = 50, log=None) -> list:
        """Iterate until `seconds` pass or NashConv reaches `target`; returns the curve
        [(iterations, seconds, NashConv), ...] measured every `check_every` iterations."""
        start, curve = time.perf_counter(), []
        while True:
            for _ in range(check_every):
                self.iterate()
            nc, _ = nash_conv(self.tree, self.average_policy())
            curve.append((self.iterations, time.perf_counter() - start, nc))
            if log:
                log(f"  {self.iterations} iterations, {curve[-1][1]:.1f} s: NashConv {nc:.3g}")
            if (target is not None and nc <= target) or time.perf_counter() - start > seconds:
                return curve
