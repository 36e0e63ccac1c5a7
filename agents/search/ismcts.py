"""`ismcts`: single-observer information-set Monte-Carlo tree search (Cowling, Powley and
Whitehouse 2012), with max^n back-ups for more than two players.

One tree per decision, rooted at the searching seat's information state. Each iteration

1. draws one world from that information state (`envs.belief.sample_world`);
2. descends the tree in that world: a node is the action sequence from the root (the public
   history of moves as the tree sees it; the cards each seat drew are not part of it), and at
   every node only the moves legal *in this world* are considered. While every one of them
   has been tried, the player to act there picks by UCB on its own value (max^n)::

       mean_p(child) + c * scale * sqrt(ln(available(child)) / visits(child))

   where ``available`` counts the iterations in which the move was legal at that node (the
   availability count: a move legal in few worlds is not penalised for the worlds in which
   it was not), and ``scale`` is the spread of the returns seen so far in this search (so that
   ``c`` means the same in a game scored in chips and one scored in tokens);
3. expands one untried move (chosen at random), or stops at a score event (``horizon=round``)
   or the game's end (``horizon=game``) reached on the way down;
4. plays out from the new node with the rollout policy in every seat, and adds every seat's
   rewards (those collected on the way down, plus the play-out's) to each node on the path.

The play-outs of ``batch`` iterations are played together by the evaluator
(`agents.search.evaluators`, ``evaluate_pairs``: one row per leaf, on the batched engine by
default). An iteration's visits count as soon as it has come down (its value, once played
out, is added later), so the next iterations of the same batch see a visit worth 0 there (the
mean of a zero-sum reward) and spread out instead of all following one path.
The move is the root's most-visited legal move (ties: the higher mean value, then the lower
action). It is deterministic for a seed (with an iteration budget), and its move depends only
on its seat's information state.

Options (spec ``ismcts:iterations=24,c=0.7,batch=12,rollout=heuristic,horizon=round,evaluator=batched``,
or ``ismcts:ms=20``):

* ``iterations``: the iteration budget (default `DEFAULT_ITERATIONS`; reproducible);
* ``ms``: a CPU-time budget per decision in milliseconds: another batch starts only while
  the last one's CPU time (this thread's) still fits (default: none; not reproducible: what
  it finds depends on the machine and its load). With ``ms`` alone the iterations are
  bounded by `agents.search.options.MAX_ITERATIONS`;
* ``c``: the exploration constant (default 0.7); ``batch``: iterations per evaluator call;
* ``rollout``, ``horizon``, ``evaluator``: as for pimc.

After `act`, ``option_values(observation)`` is each root move's mean value for the seat (NaN
for an illegal or unvisited move) and ``action_probs(observation)`` as for pimc.
"""

from __future__ import annotations

import math
import time

import numpy as np

from agents.search.options import MAX_ITERATIONS, check_option
from agents.search.pimc import SearchAgent
from envs.belief import sample_world
from envs.engine import zero_sum_rewards

DEFAULT_ITERATIONS = 24


class Node:
    """One node of the tree: its children by action, its visits, how often it was available (legal
    when its parent was reached), and every seat's summed return through it."""

    __slots__ = ("children", "visits", "available", "total")

    def __init__(self, num_players: int) -> None:
        self.children: dict[int, Node] = {}
        self.visits, self.available = 0, 0
        self.total = np.zeros(num_players)


class ISMCTSAgent(SearchAgent):
    """Single-observer information-set MCTS with max^n back-ups (see the module docstring)."""

    name = "ismcts"

    def __init__(self, game: str, num_players: int, seed: int | None = None, iterations: int | None = None,
                 ms: float | None = None, c: float = 0.7, batch: int = 12, rollout: str = "heuristic",
                 horizon: str = "round", evaluator: str = "batched") -> None:
        kind = self.name
        iterations, ms = check_option(kind, "iterations", iterations), check_option(kind, "ms", ms)
        self.iterations = iterations if iterations is not None else (MAX_ITERATIONS if ms is not None else DEFAULT_ITERATIONS)
        self.ms, self.c, self.batch = ms, check_option(kind, "c", c), check_option(kind, "batch", batch)
        self._play_outs(game, num_players, rollout, horizon, evaluator)
        super().__init__(game, num_players, seed)
        self.reset()

    @property
    def steps(self) -> int:
        """Play-out agent-steps taken in all (for speed figures)."""
        return self.evaluator.steps

    def search(self, info: dict, observation: dict, legal: np.ndarray, values: np.ndarray) -> int:
        deadline = math.inf if self.ms is None else time.thread_time() + self.ms / 1000
        seat, n = info["seat"], self.num_players
        root = Node(n)
        low, high, done, took = math.inf, -math.inf, 0, 0.0
        while done < self.iterations and (done == 0 or time.thread_time() + took < deadline):
            began = time.thread_time()
            count = min(self.batch, self.iterations - done)
            scale = high - low if high > low else 1.0
            finished, leaves = [], []
            for _ in range(count):
                path, gained, leaf = self._descend(root, sample_world(info, self.rng), scale)
                (leaves if leaf is not None else finished).append((path, gained, leaf))
            if leaves:
                worlds, moves = [leaf[0] for _, _, leaf in leaves], [leaf[1] for _, _, leaf in leaves]
                played = self.evaluator.evaluate_pairs(worlds, moves, self.rng.integers(2**62, size=len(leaves)))
                finished += [(path, gained + v, None) for (path, gained, _), v in zip(leaves, played)]
            for path, returns, _ in finished:
                for node in path:  # the visits were counted on the way down
                    node.total += returns
                low, high = min(low, returns.min()), max(high, returns.max())
            done, took = done + count, time.thread_time() - began
        visited = [a for a in legal.tolist() if a in root.children and root.children[a].visits > 0]
        for a in visited:
            values[a] = root.children[a].total[seat] / root.children[a].visits
        return max(visited, key=lambda a: (root.children[a].visits, values[a], -a))

    def _descend(self, root: Node, world, scale: float) -> tuple[list, np.ndarray, tuple | None]:
        """One iteration's way down in `world` (changed in place): the path of nodes, the rewards
        collected on it, and the leaf to play out (the world and the move just expanded), or
        None when the way down reached the horizon."""
        node, path, gained = root, [root], np.zeros(self.num_players)
        while True:
            legal = np.flatnonzero(world.legal_mask()).tolist()
            children = node.children
            untried = [a for a in legal if a not in children]
            if untried:
                a = untried[int(self.rng.integers(len(untried)))] if len(untried) > 1 else untried[0]
                children[a] = Node(self.num_players)
            for b in legal:
                if b in children:
                    children[b].available += 1
            if untried:
                path.append(children[a])
                self._visit(path)
                return path, gained, (world, a)
            p, explore = world.current_player, self.c * scale
            a = max(legal, key=lambda b: children[b].total[p] / children[b].visits
                    + explore * math.sqrt(math.log(children[b].available) / children[b].visits))
            node = children[a]
            path.append(node)
            event = world.step(a)
            if event is not None:
                gained += np.float32(zero_sum_rewards(event))
            if world.game_over or (event is not None and self.horizon == "round"):
                self._visit(path)
                return path, gained, None

    @staticmethod
    def _visit(path: list) -> None:
        """Count the visits at once, before the play-out's value is known: the next descents of the
        same batch see a visit worth 0 (a zero-sum reward's mean) there and spread to other moves."""
        for node in path:
            node.visits += 1


__all__ = ["DEFAULT_ITERATIONS", "ISMCTSAgent", "MAX_ITERATIONS", "Node"]
