"""Exact solving of a small preset: the game tree from the engine, CFR+ and exact best responses.

`build_tree` walks every path of the game from every first deal the engine lists (``deals()``),
asking the engine for the legal moves, the next seat and the rewards at each step: no rule is
written here. Chance inside the game comes from the engine too: a move that makes a seat draw
is expanded into a chance node with one branch per outcome and its exact probability
(`Engine.step_outcomes`); a move that meets a chance event the engine cannot list (a new
round dealt from the stream) is refused. Each decision belongs to an information set
(`Engine.information_key`: the seat's own observations and actions, and every other move as it
saw it, in order). The tree is then a set of flat arrays, level by level, and CFR+ (alternating
updates, linear averaging) and the best responses run on them with numpy.

Values are the env's rewards (`envs.engine.zero_sum_rewards`), summed over a game, one per seat.
``nash_conv(tree, policy)`` is the sum over seats of what each gains by a best response against
the others' part of `policy` (with two players, zero-sum, the sum of the two best-response
values): 0 exactly at a Nash equilibrium. It stays exact for any number of players; CFR+ then
still runs, but with more than two players its average carries no equilibrium guarantee.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np

from envs.engine import zero_sum_rewards


CHANCE = -1  # node_player of a chance node; also its column (the last) in `reach`


@dataclass
class Tree:
    """A zero-sum game tree as arrays. Nodes are decisions (and chance nodes, whose player is
    `CHANCE`); edges are moves (and chance outcomes, with their probability)."""

    num_actions: int
    num_players: int
    node_player: np.ndarray  # [N] seat to act, or CHANCE
    node_info: np.ndarray  # [N] information set
    node_chance: np.ndarray  # [N] probability of the deal (roots), else 0
    node_depth: np.ndarray  # [N]
    edge_parent: np.ndarray  # [E]
    edge_action: np.ndarray  # [E]
    edge_child: np.ndarray  # [E] node, or -1 when the game ends
    edge_reward: np.ndarray  # [E, players] float64 reward to each seat on this move
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
    """The whole game tree of `engine` (zero-sum rewards, any number of players) from each of its
    first deals (``engine.deals()``, or `deals`, a list of (probability, stacked deal)). `progress`,
    if given, is called with the number of deals once, then with no argument after each deal."""
    n_players = engine.num_players
    none = (0.0,) * n_players
    deals = engine.deals() if deals is None else deals
    A = engine.num_actions
    np_, ni, nc, nd = [], [], [], []
    ep, ea, ec, er, eq, ed = [], [], [], [], [], []
    infos: dict[bytes, int] = {}
    i_player, i_legal, i_depth, i_obs = [], [], [], []

    def edge(parent: int, action: int, reward: tuple, prob: float, draws: tuple = ()) -> int:
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
                e = edge(n, int(a), zero_sum_rewards(event) if event is not None else none, 0.0)
                if not child.game_over:
                    ec[e] = node(child, depth + 1, list(o), 0.0)
                continue
            # The move meets chance: its edge leads to a chance node, one branch per outcome.
            e = edge(n, int(a), none, 0.0)
            c = ec[e] = new_node(CHANCE, 0, 0.0, depth + 1)
            for prob, child, event, draws in branches:  # action 0: a chance edge indexes no policy
                b = edge(c, 0, zero_sum_rewards(event) if event is not None else none, prob, draws)
                if not child.game_over:
                    ec[b] = node(child, depth + 2, list(o), 0.0)
        return n

    if progress is not None:
        progress(len(deals))
    for p, deal in deals:
        eng = copy.deepcopy(engine)
        eng.keep_history()  # the information-set keys (Engine.information_key)
        eng.reset(np.random.default_rng(rng_seed), deal=deal)
        node(eng, 0, [0] * n_players, p)
        if progress is not None:
            progress()
    arr = np.asarray
    return Tree(A, n_players, arr(np_, np.int64), arr(ni, np.int64), arr(nc, np.float64), arr(nd, np.int64),
                arr(ep, np.int64), arr(ea, np.int64), arr(ec, np.int64),
                np.array(er, np.float64).reshape(-1, n_players), arr(eq, np.float64),
                arr(i_player, np.int64), np.array(i_legal, bool).reshape(-1, A), arr(i_depth, np.int64),
                list(infos), i_obs, ed)


def uniform(tree: Tree) -> np.ndarray:
    """The uniform policy over legal moves, [I, A]."""
    legal = tree.info_legal.astype(np.float64)
    return legal / legal.sum(1, keepdims=True)


def reach(tree: Tree, policy: np.ndarray) -> np.ndarray:
    """[N, players + 1]: each node's reach probability through each seat's moves, and (last) chance's."""
    r = np.zeros((len(tree.node_player), tree.num_players + 1))
    roots = tree.node_depth == 0
    r[roots, :-1] = 1.0
    r[:, -1] = tree.node_chance
    weights = tree.edge_weights(policy)
    for edges in tree.levels():
        kids = tree.edge_child[edges]
        go = kids >= 0
        edges, kids = edges[go], kids[go]
        parents = tree.edge_parent[edges]
        p = weights[edges]
        rr = r[parents].copy()
        who = tree.node_player[parents]  # CHANCE = -1: a chance outcome multiplies chance's part
        rr[np.arange(len(edges)), who] *= p
        r[kids] = rr
    return r


def others(r: np.ndarray, seat: int) -> np.ndarray:
    """[N]: the part of each node's reach (`reach`) that is not `seat`'s own: the other seats' and chance's."""
    return np.prod(np.delete(r, seat, axis=1), axis=1)


def values(tree: Tree, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each seat's expected reward from each node ([N, players]) and after each move ([E, players])
    under `policy`."""
    v = np.zeros((len(tree.node_player), tree.num_players))
    q = np.zeros((len(tree.edge_parent), tree.num_players))
    weights = tree.edge_weights(policy)
    for edges in reversed(tree.levels()):
        kids = tree.edge_child[edges]
        q[edges] = tree.edge_reward[edges] + np.where((kids >= 0)[:, None], v[np.maximum(kids, 0)], 0.0)
        parents = tree.edge_parent[edges]
        np.add.at(v, parents, weights[edges, None] * q[edges])
    return v, q


def game_values(tree: Tree, policy: np.ndarray) -> np.ndarray:
    """Each seat's expected reward when every seat follows `policy`, [players]."""
    v, _ = values(tree, policy)
    return tree.node_chance @ v


def game_value(tree: Tree, policy: np.ndarray, seat: int = 0) -> float:
    """`seat`'s expected reward when every seat follows `policy`."""
    return float(game_values(tree, policy)[seat])


def _by_info(tree: Tree, weights: np.ndarray) -> np.ndarray:
    """Sum per-edge weights into [I, A] by the parent's information set and the move (a chance
    node's edges belong to no information set and count nowhere)."""
    flat = tree.node_info[tree.edge_parent] * tree.num_actions + tree.edge_action
    weights = np.where(tree.node_player[tree.edge_parent] == CHANCE, 0.0, weights)
    return np.bincount(flat, weights, minlength=tree.num_infos * tree.num_actions).reshape(tree.num_infos, -1)


def best_response(tree: Tree, policy: np.ndarray, seat: int) -> tuple[float, np.ndarray]:
    """The exact best response of `seat` to the other seats' part of `policy`, by backward
    induction over `seat`'s information sets, deepest (most earlier own decisions) first: a set's
    move values depend only on later decisions of its own seat, already chosen. Returns the
    best response's value for `seat` and the policy with `seat`'s part replaced by it."""
    pol = policy.copy()
    weight = others(reach(tree, policy), seat)
    mine = tree.info_player == seat
    for depth in range(int(tree.info_own_depth[mine].max(initial=0)), -1, -1):
        _, q = values(tree, pol)
        cf = _by_info(tree, weight[tree.edge_parent] * q[:, seat])
        at = np.flatnonzero(mine & (tree.info_own_depth == depth))
        best = np.argmax(np.where(tree.info_legal[at], cf[at], -np.inf), axis=1)
        pol[at] = 0.0
        pol[at, best] = 1.0
    return game_value(tree, pol, seat), pol


def nash_conv(tree: Tree, policy: np.ndarray) -> tuple[float, list[float]]:
    """The sum over seats of each seat's best-response gain against `policy` (its best-response
    value minus its value under `policy`), and each seat's best-response value. With two players,
    zero-sum, the gains add up to the two best-response values."""
    br = [best_response(tree, policy, s)[0] for s in range(tree.num_players)]
    return float(sum(br) - np.sum(game_values(tree, policy))), br


def score_range(tree: Tree) -> float:
    """The widest spread of one seat's total reward over the game's outcomes (largest minus smallest)."""
    lo, hi = _extremes(tree)
    return float(np.max(hi - lo))


def _extremes(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    lo = np.full((len(tree.node_player), tree.num_players), np.inf)
    hi = np.full((len(tree.node_player), tree.num_players), -np.inf)
    for edges in reversed(tree.levels()):
        kids = (tree.edge_child[edges])[:, None]
        r = tree.edge_reward[edges]
        elo = r + np.where(kids >= 0, lo[np.maximum(kids[:, 0], 0)], 0.0)
        ehi = r + np.where(kids >= 0, hi[np.maximum(kids[:, 0], 0)], 0.0)
        np.minimum.at(lo, tree.edge_parent[edges], elo)
        np.maximum.at(hi, tree.edge_parent[edges], ehi)
    roots = tree.node_depth == 0
    return lo[roots].min(0), hi[roots].max(0)


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
        for seat in range(t.num_players):
            sigma = np.asarray(self.match(self.regrets, t.info_legal), np.float64)
            w = reach(t, sigma)
            v, q = values(t, sigma)
            parent = t.edge_parent
            acting = t.node_player[parent] == seat
            cf = others(w, seat)[parent] * (q[:, seat] - v[parent, seat])
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
