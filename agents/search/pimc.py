"""`pimc`: determinized Monte-Carlo search (perfect-information Monte-Carlo).

At a decision with more than one legal move, `PIMCAgent` draws full game states ("worlds")
from its seat's information state (`envs.belief.sample_world`) and has its evaluator
(`agents.search.evaluators`) play legal moves in them to the horizon with the rollout policy
in every seat. Every move played in a world is played with the same chance stream and
rollout seeds (common random numbers), so two moves are compared pairwise, world by world.
A forced move costs nothing. It is deterministic for a seed (with a world budget), and its
move depends only on its seat's information state (tested by redealing the hidden cards).

How it chooses (``choice``):

* ``safe`` (the default): the rollout policy's own move stands unless another move is
  clearly better on the same worlds. Every move ``m`` is compared with the policy's move by
  its paired differences ``d = value(m) - value(own)``, world by world. Successive halving
  picks one challenger: in rounds on new worlds (up to two), only the better half of the
  other moves by mean paired difference go on (the policy's move is always played beside
  them), so the budget goes to the moves still in doubt, and the best of those left is the
  challenger. A confirmation
  round on fresh worlds then plays the challenger against the policy's move, and the agent
  deviates only when the one-sided lower bound ``mean(d) - z * sd(d) / sqrt(n)`` on those
  worlds is above 0 (the halving's worlds are not used for it: the challenger won there
  partly by luck). Half the budget picks, half confirms; in all about ``worlds x moves``
  play-outs, what ``max`` spends (at least two worlds a round).
* ``max``: every move on the same ``worlds`` worlds, and the move with the best total; ties go
  to the policy's move. Among many moves, noise alone makes the best total a lucky one more
  often than a better move (the winner's curse): docs/search.md.

Budgets: ``worlds`` (default 8) is reproducible. ``ms`` draws worlds in chunks and starts
another chunk only while the last one's CPU time (this thread's) still fits in that many
milliseconds for the decision (each round gets its share of what is left, and plays at least
one chunk, so a budget below a few play-outs' length per round is overrun); what it finds
depends on the machine and its load, so a run with ``ms`` is not reproducible. With ``ms``
alone the worlds are bounded by `MAX_WORLDS`; with both, whichever ends first.

After `act`, ``option_values(observation)`` gives each legal move's estimated value for the
seat (NaN for illegal moves) and ``action_probs(observation)`` a distribution over the
actions (all on the chosen move, or ``softmax(values / temperature)``).

Options (spec ``pimc:worlds=8,choice=safe,z=1.645,belief=uniform,rollout=heuristic,horizon=round,evaluator=batched``,
or ``pimc:ms=20``):

* ``worlds``: the world budget (per game: Neu and Deadfall 256, Not For Me and Ma's Jong 32;
  see above);
* ``ms``: a CPU-time budget per decision in milliseconds (default: none; not reproducible);
* ``choice``: ``safe`` (default) or ``max``; ``z``: the safe rule's bound (default 1.645,
  a one-sided 95% normal bound; in Neu 1.0). A game's defaults (`GAME_DEFAULTS`) are where
  more worlds (and in Neu a bolder bound) beat the heuristic by more at a few ms a decision (Neu:
  6 CPU ms, Deadfall: 7, Not For Me and Ma's Jong: 10);
* ``rollout``: the policy every seat plays in the play-outs, ``heuristic`` (default),
  ``random``, ``ppo`` (the shipped network, greedy) or ``ppo:PATH`` (a checkpoint; what
  `train.expert_iteration` uses); in Python, any agent class. The batched evaluator needs one
  with ``act_batch``;
* ``horizon``: ``round`` (to the next score event, default) or ``game``;
* ``evaluator``: ``batched`` (play-outs on the batched engine, default) or ``readable``
  (on the readable engines, the reference). Both give the same values, so the same moves;
* ``belief``: ``uniform``, the only one (every hidden card equally likely anywhere it could
  be, `envs.belief.sample_world`). With the batched evaluator the worlds are drawn straight
  into batch rows (`BatchedEvaluator.evaluate_sampled`, `VectorEnv.sample_rows`): the same
  worlds, seeds and moves as drawing engines first (``sample_in_rows``), a few µs a world.

`PIMCCheat` (spec ``pimc_cheat``) is an upper bound, not a fair player: runners hand it
the real game through ``cheat_inform(engine)`` (a copy), and its worlds are that true state
(every hand and the draw pile's order) with fresh chance streams. With ``pile=shuffled`` its
worlds keep every hand but shuffle the draw pile (in the games that keep one as ``draw``):
what a sampler that knew the other hands exactly could give pimc, so the gap between it and
``pimc`` bounds what a better sampler is worth. It never enters a leaderboard or compare by default.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import numpy as np

from agents.base import Agent
from agents.search.evaluators import make_evaluator, rollout_policy
from agents.search.options import MAX_WORLDS, PIMC, check_option, parse_search_options
import envs
from envs.belief import sample_world
from envs.engine import shuffled

DEFAULTS = PIMC  # the spec options and their defaults (agents.search.options)
DEFAULT_WORLDS = 8
DEFAULT_Z = 1.645
# Where more worlds (and in Neu a bolder bound) do better against the heuristic within 20 ms a
# decision (chosen on validation deals, seeds 920000, 990000 and 1010000; measured on fresh ones:
# docs/results.md), the game's own defaults.
GAME_DEFAULTS = {"neu": {"worlds": 256, "z": 1.0}, "deadfall": {"worlds": 256}, "not_for_me": {"worlds": 32},
                 "not_your_mas_jong": {"worlds": 32}}
MIN_ROUND_WORLDS = 2  # a round's paired differences need two worlds for a spread
MAX_HALVINGS = 2  # each round is a play-out's length of batched steps, whatever its width: few, wide rounds
MS_CHUNK_PLAYOUTS = 32  # with an ms budget, play-outs evaluated between two looks at the clock

__all__ = ["DEFAULTS", "MAX_WORLDS", "PIMCAgent", "PIMCCheat", "parse_search_options", "SearchAgent"]


class SearchAgent(Agent):
    """What pimc and ismcts share: the inform contract, the checks before a search, and the
    last decision's values for `option_values` and `action_probs`."""

    name = "search"

    def reset(self) -> None:
        self._info: dict | None = None
        self._last: tuple | None = None

    def inform(self, info_state: dict) -> None:
        """Called by every runner right before `act`, with ``engine.information_state(seat)``."""
        self._info = info_state

    def _play_outs(self, game: str, num_players: int, rollout: str, horizon: str, evaluator: str) -> None:
        """The play-out settings every search kind takes: policy, horizon and evaluator (checked)."""
        self.horizon, self.rollout = check_option(self.name, "horizon", horizon), rollout
        self.evaluator = make_evaluator(check_option(self.name, "evaluator", evaluator), game, num_players, rollout, horizon)

    def _checked_info(self, observation: dict) -> dict:
        info = getattr(self, "_info", None)
        if info is None or not np.array_equal(np.asarray(info["observation"], np.float32), observation["observation"]):
            raise ValueError(f"{self.name}: act() needs inform(info_state) with this seat's information state first "
                             "(the tournament, compare, the single-agent env and the web page call it; "
                             "env.unwrapped.information_state(agent) gives it)")
        return info

    def act(self, observation: dict) -> int:
        legal = self.legal_actions(observation)
        values = np.full(np.asarray(observation["action_mask"]).size, np.nan)
        if legal.size == 1:
            move = int(legal[0])
        else:
            info = self._checked_info(observation)
            move = self.search(info, observation, legal, values)
        self._last = (np.array(observation["observation"], copy=True), np.array(observation["action_mask"], copy=True),
                      move, values)
        return move

    def search(self, info: dict, observation: dict, legal: np.ndarray, values: np.ndarray) -> int:
        """The move at a decision with a choice; fills `values` (one per action) with estimates."""
        raise NotImplementedError

    def _decision(self, observation: dict) -> tuple:
        last = getattr(self, "_last", None)
        if last is None or not (np.array_equal(last[0], observation["observation"])
                                and np.array_equal(last[1], observation["action_mask"])):
            self.act(observation)  # not yet decided here: decide now (inform first)
            last = self._last
        return last

    def option_values(self, observation: dict) -> np.ndarray:
        """The last decision's estimated value of each action for this seat, float64 [num_actions]:
        the seat's mean play-out reward to the horizon; NaN for an illegal move, a move the search
        did not value, and every move of a forced decision (no search ran). Asked about an
        observation it has not decided, the agent decides it first (as `act`, after `inform`)."""
        return self._decision(observation)[3].copy()

    def action_probs(self, observation: dict, temperature: float = 0.0) -> np.ndarray:
        """A distribution over the actions, float64 [num_actions]: all on the move `act` chose
        (``temperature=0``), or ``softmax(option_values / temperature)`` over the valued legal moves."""
        _, _, move, values = self._decision(observation)
        probs = np.zeros(values.size)
        valued = np.isfinite(values)
        if temperature <= 0 or not valued.any():
            probs[move] = 1.0
            return probs
        z = values[valued] / temperature
        p = np.exp(z - z.max())
        probs[valued] = p / p.sum()
        return probs


class PIMCAgent(SearchAgent):
    """Determinized Monte-Carlo search over worlds drawn from the information state."""

    name = "pimc"

    def __init__(self, game: str, num_players: int, seed: int | None = None, worlds: int | None = None,
                 ms: float | None = None, choice: str = "safe", z: float | None = None, rollout: str = "heuristic",
                 horizon: str = "round", evaluator: str = "batched", belief: str = "uniform") -> None:
        kind = self.name
        worlds, ms = check_option(kind, "worlds", worlds), check_option(kind, "ms", ms)
        tuned = GAME_DEFAULTS.get(game, {})
        self.worlds = worlds if worlds is not None else (MAX_WORLDS if ms is not None else tuned.get("worlds", DEFAULT_WORLDS))
        z = check_option(kind, "z", z)
        self.ms, self.choice, self.z = ms, check_option(kind, "choice", choice), tuned.get("z", DEFAULT_Z) if z is None else z
        # The policy's own move is the safe rule's default and max's tie-break; the evaluator keeps
        # its env from decision to decision.
        self._play_outs(game, num_players, rollout, horizon, evaluator)
        self.policy = rollout_policy(rollout, game, num_players)
        self.belief = check_option(kind, "belief", belief)
        super().__init__(game, num_players, seed)
        self.reset()
        # Worlds go straight into batch rows when the evaluator can draw them there
        # (the same worlds from the same draws as draw_worlds, without building engines).
        self.sample_in_rows = type(self).draw_worlds is PIMCAgent.draw_worlds
        self.searched = self.deviated = 0  # decisions searched, and those where it left the policy's move

    @property
    def steps(self) -> int:
        """Play-out agent-steps taken in all (for speed figures)."""
        return self.evaluator.steps

    def draw_worlds(self, info: dict, count: int) -> list:
        return [sample_world(info, self.rng) for _ in range(count)]

    def _play(self, info: dict, seat: int, moves: np.ndarray, count: int) -> np.ndarray:
        """`count` new worlds, every one of `moves` played in each: the seat's values [count, moves]."""
        if self.sample_in_rows and hasattr(self.evaluator, "evaluate_sampled"):
            # the same worlds and seeds, drawn straight into the evaluator's rows
            return self.evaluator.evaluate_sampled(info, seat, moves, count, self.rng)[:, :, seat]
        worlds = self.draw_worlds(info, count)
        seeds = self.rng.integers(2**62, size=count)
        return self.evaluator.evaluate(worlds, seat, moves, seeds)[:, :, seat]

    def search(self, info: dict, observation: dict, legal: np.ndarray, values: np.ndarray) -> int:
        start = time.thread_time()
        deadline = math.inf if self.ms is None else start + self.ms / 1000
        own = int(self.policy.act(observation))
        pick = self._max if self.choice == "max" else self._safe
        move = int(legal[pick(info, info["seat"], legal, int(np.flatnonzero(legal == own)[0]), deadline, values)])
        self.searched, self.deviated = self.searched + 1, self.deviated + (move != own)
        return move

    def _chunks(self, worlds: int, moves: int, deadline: float):
        """World counts to evaluate in turn: all at once without an ms budget (one draw, so the
        moves are reproducible); else chunks of about `MS_CHUNK_PLAYOUTS` play-outs, the first
        always, another only while the last one's time still fits before `deadline`."""
        if deadline == math.inf:
            yield worlds
            return
        step, done, took = max(MIN_ROUND_WORLDS, -(-MS_CHUNK_PLAYOUTS // moves)), 0, 0.0
        while done < worlds and (done == 0 or time.thread_time() + took < deadline):
            k = min(step, worlds - done)
            began = time.thread_time()
            yield k
            done, took = done + k, time.thread_time() - began

    def _max(self, info: dict, seat: int, legal: np.ndarray, own: int, deadline: float, values: np.ndarray) -> int:
        got = [self._play(info, seat, legal, k) for k in self._chunks(self.worlds, legal.size, deadline)]
        means = np.concatenate(got).mean(axis=0)
        values[legal] = means
        return max(range(legal.size), key=lambda i: (means[i], i == own))

    def _safe(self, info: dict, seat: int, legal: np.ndarray, own: int, deadline: float, values: np.ndarray) -> int:
        """Successive halving over the other moves, each compared with the policy's move on the
        same worlds, down to one; that one replaces the policy's move only when its lower bound
        on fresh worlds (a confirmation round) is above 0."""
        M = legal.size
        budget = self.worlds * M  # play-outs, what choice=max spends
        halvings = min(math.ceil(math.log2(M - 1)), MAX_HALVINGS) if M > 2 else 0
        n, total = np.zeros(M), np.zeros(M)  # paired differences with own, per move, on every world
        own_total = own_n = spent = 0.0
        start = time.thread_time()
        # Half the budget (and the time) picks the challenger, the other half confirms it.
        picked_by = budget // 2 if halvings else 0
        picked_at = start + (deadline - start) / 2 if halvings else start

        def best_first(moves: np.ndarray) -> np.ndarray:  # by mean paired difference, ties: the lower action
            return moves[np.lexsort((moves, -np.divide(total[moves], n[moves], out=np.zeros(moves.size), where=n[moves] > 0)))]

        def play(moves: np.ndarray, worlds: int, until: float) -> np.ndarray:
            """`worlds` new worlds (fewer if `until` passes) for `moves`: the paired differences [worlds, moves]."""
            nonlocal own_total, own_n, spent
            at = int(np.flatnonzero(moves == own)[0])
            d = []
            for count in self._chunks(worlds, moves.size, until):
                v = self._play(info, seat, legal[moves], count)
                d.append(v - v[:, at:at + 1])
                own_total, own_n, spent = own_total + v[:, at].sum(), own_n + count, spent + count * moves.size
            d = np.concatenate(d)
            n[moves] += d.shape[0]
            total[moves] += d.sum(axis=0)
            return d

        alive = np.arange(M)
        for r in range(halvings):
            k = alive.size
            until = picked_at
            if deadline != math.inf:  # each round its share of the time left for picking
                now = time.thread_time()
                until = now + max(picked_at - now, 0) / (halvings - r)
            play(alive, max(MIN_ROUND_WORLDS, int(picked_by - spent) // (k * (halvings - r))), until)
            others = alive[alive != own]  # the better half of the other moves go on
            alive = np.sort(np.append(best_first(others)[:math.ceil(others.size / 2)], own))
        challenger = int(best_first(alive[alive != own])[0])  # the best of what is left
        alive = np.sort(np.array([own, challenger]))
        d = play(alive, max(MIN_ROUND_WORLDS, int(budget - spent) // 2), deadline)[:, int(np.flatnonzero(alive == challenger)[0])]
        values[legal] = np.where(n > 0, own_total / own_n + np.divide(total, n, out=np.zeros(M), where=n > 0), np.nan)
        # The confirmation's worlds alone: the halving's chose this move for its luck there too.
        low = d.mean() - self.z * d.std(ddof=1) / math.sqrt(d.size)
        return challenger if low > 0 else own


class PIMCCheat(PIMCAgent):
    """An upper bound: the same search on the true state (every hand seen), fresh chance streams
    (the real one would also show the reshuffles and deals to come). Runners hand it a copy of
    the real engine through ``cheat_inform``; never a fair player."""

    name = "pimc_cheat"

    def __init__(self, game: str, num_players: int, seed: int | None = None, pile: str = "known", **options: Any) -> None:
        super().__init__(game, num_players, seed, **options)
        self.pile = check_option(self.name, "pile", pile)
        if self.pile == "shuffled" and "draw" not in envs.engine_class(game).STATE_FIELDS:
            raise ValueError(f"pimc_cheat: pile=shuffled needs a draw pile, and {game} keeps none as `draw`")

    def reset(self) -> None:
        super().reset()
        self._engine = None

    def cheat_inform(self, engine: Any) -> None:
        self._engine = copy.deepcopy(engine)

    def draw_worlds(self, info: dict, count: int) -> list:
        if getattr(self, "_engine", None) is None:
            raise ValueError("pimc_cheat: act() needs cheat_inform(engine) first (the tournament's play-one-game path "
                             "calls it, for cardzoo's own upper bounds only)")
        worlds = [copy.deepcopy(self._engine) for _ in range(count)]
        for world in worlds:
            if self.pile == "shuffled":  # every hand seen, the pile's order not: what a perfect sampler could know
                world.draw = shuffled(sorted(world.draw), self.rng)
                world.refresh()
            world.rng = np.random.default_rng(int(self.rng.integers(2**63)))
        return worlds
