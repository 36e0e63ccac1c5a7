"""One seat of a card game as a single-agent `gymnasium.Env`; the other seats are played by opponents.

    import envs
    bots = [my_bot_1, my_bot_2, my_policy]          # objects with act(observation), or callables
    env = envs.make_single_agent("neu", num_players=4, seat=0, opponents=bots)
    obs, info = env.reset(seed=0)
    while True:
        legal = info["action_mask"].nonzero()[0]
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        if terminated or truncated:
            break

Opponents named by agent specs ("heuristic", "ppo:PATH", "bots.py:Greedy")
are built in `agents`, which may import both floors:
``agents.make_single_agent("neu", opponents="heuristic")`` gives the same env,
and so does ``gymnasium.make("cardzoo/Neu-v0", opponents="heuristic")``.
With sb3-contrib, no wrapper is needed: ``MaskablePPO("MlpPolicy", env).learn(10_000)``
reads the mask from ``env.action_masks()``.

| what               | value                                                            |
|--------------------|------------------------------------------------------------------|
| observation        | the seat's float32 vector, a `Box` with the game's bounds        |
| action             | `Discrete(num_actions)`, the game's action space                 |
| legal actions      | `env.action_masks()` (bool) and `info["action_mask"]` (int8)     |
| reward             | everything the seat receives from its move until its next        |
|                    | decision or the end (the sum of its AEC rewards over that span)  |
| terminated         | at the game's end; in Neu also when the seat is eliminated       |
| truncated          | never: no game has a move limit                                  |
| info               | the seat's AEC `infos` at that point, plus `action_mask` (only   |
|                    | `action_mask` with ``minimal_infos=True``)                       |
| render()           | the seat's own view of the table (`Engine.view`), never a hidden |
|                    | hand                                                             |

Masks: once the episode is over no move is played any more, so the mask of
the terminal step is all ones (any action is as good as another) rather than
all zeros: a masked policy that samples for the step a vectorised env spends
on resetting (gymnasium's default ``AutoresetMode.NEXT_STEP``) never samples
from an empty mask. For training, ``AutoresetMode.SAME_STEP`` is the one to
use: the terminal step already returns the next episode's first observation
and mask (the last ones go in ``info["final_obs"]`` / ``info["final_info"]``),
so every mask a policy sees belongs to a real decision.

Opponents (``opponents=``): one for every other seat, or a list with one per
other seat in seat order; each an object with ``act(observation) -> int``
(such as an `agents.Agent`) or a callable ``observation -> action``. An object
given once plays every seat it is given for. An opponent sees what its seat
sees in the AEC env: the dict ``{"observation": float32 vector, "action_mask":
int8 vector}``; its move is checked against the env's own mask, not that copy.
An opponent with ``inform(info_state)`` (a search agent) gets its seat's information
state as part of each move (`envs.belief.informed`); no opponent is ever handed the real
game here, so an upper bound such as ``pimc_cheat`` plays only in the tournament.

An opponent that fails (raises, ``SystemExit`` and ``os._exit`` included,
returns anything but a legal integer action, or takes longer than
``move_timeout`` seconds when one is given) raises `OpponentError` naming its
seat and class; the env then refuses ``step()`` until the next ``reset()``. The
time limit holds against ``except Exception`` but stops short of a long call
into C and of code that swallows every ``BaseException``; see
`envs.move_guard` for what an in-process limit can and cannot do.

Seeding: ``reset(seed=s)`` deals the same game as ``envs.make(game).reset(seed=s)``
and reseeds every opponent with a seed derived from ``s`` (objects with a
``seed(int)`` method, as `agents.Agent` has), so the same seed and the same
actions replay the same game. ``reset()`` without a seed goes on drawing from
the streams of the last seeded reset.

A masked-out action follows PettingZoo classic's convention (the env's
``env()``): the game ends, the seat gets -1 and ``info["illegal_move"] = 1``,
without a warning. ``action_space.sample()`` draws a legal move of the seat
(any action once the episode is over); ``sample(mask)`` is gymnasium's.
Rewards the seat receives before its first decision (a round can end before
it acts) are added to its first step's reward, so that the returns of an
episode add up to the seat's AEC return.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import gymnasium

import envs
from envs.adapter import LegalMoveSpace, rendered
from envs.belief import informed
from envs.move_guard import check_action, check_move_timeout, failure, guarded_act


class OpponentError(RuntimeError):
    """An opponent failed its move; `seat`, `opponent` (its class or function name) and
    `problem` say which and how. The env refuses ``step()`` until the next ``reset()``."""

    def __init__(self, seat: int, opponent: str, problem: str) -> None:
        super().__init__(f"opponent at seat {seat} (player_{seat}, {opponent}) {problem}; call reset() to play again")
        self.seat, self.opponent, self.problem = seat, opponent, problem


def opponent_seeds(seed: int, num_players: int, seat: int) -> dict[int, int]:
    """The seed each opponent seat gets from ``reset(seed=seed)``; the learner's seat has none."""
    children = np.random.SeedSequence(seed).spawn(num_players)
    return {s: int(children[s].generate_state(1, np.uint64)[0]) for s in range(num_players) if s != seat}


def opponent_name(opponent: Any) -> str:
    """How an error names an opponent: its class, or a plain function's name."""
    if callable(getattr(opponent, "act", None)) or not hasattr(opponent, "__name__"):
        return type(opponent).__name__
    return opponent.__name__


def seat_opponents(num_players: int, seat: int, opponents: Any) -> dict[int, Any]:
    """{seat: object with act() or callable} for every other seat, from one opponent or a list of them."""
    others = [s for s in range(num_players) if s != seat]
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != len(others):
            raise ValueError(
                f"opponents: a list needs one opponent per other seat ({len(others)} for seats {others}), got {len(opponents)}"
            )
        given = list(opponents)
    else:
        given = [opponents] * len(others)
    for s, o in zip(others, given):
        if isinstance(o, str):
            raise ValueError(
                f"opponent for seat {s} is the spec {o!r}; envs take agent objects or callables: build it with "
                f"agents.make_single_agent(game, opponents={o!r}) or agents.make_agent({o!r}, game, num_players)"
            )
        if not (callable(getattr(o, "act", None)) or callable(o)):
            raise ValueError(
                f"opponent for seat {s} must be an object with act(observation) or a callable observation -> action; got {o!r}"
            )
    return dict(zip(others, given))


class SingleAgentEnv(gymnasium.Env):
    """One seat of a cardzoo game against fixed opponents; see the module docstring."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, game: str, num_players: int | None = 4, seat: int = 0, *, opponents: Any,
                 render_mode: str | None = None, move_timeout: float | None = None, minimal_infos: bool = False,
                 **rule_options: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if "max_cycles" in rule_options:  # the AEC env's option: the seat's episode ends only with its game
            raise ValueError("max_cycles is not an option of the single-agent env; wrap it in gymnasium's TimeLimit instead")
        # The AEC env never renders: its table shows every hand; render() shows the seat's view.
        self.aec = envs.make_raw(game, num_players=num_players, minimal_infos=minimal_infos, **rule_options)
        n = self.aec.game.num_players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ValueError(f"seat must be an integer from 0 to {n - 1} ({n} players), got {seat!r}")
        self.game_name = game
        self.num_players = n
        self.seat = int(seat)
        self.agent = self.aec.possible_agents[self.seat]
        self.render_mode = render_mode
        self.move_timeout = check_move_timeout(move_timeout)
        self.opponents = seat_opponents(n, self.seat, opponents)
        # An opponent told its information state gets its information-set key: the engine keeps its history.
        self.aec.keep_history(any(callable(getattr(o, "inform", None)) for o in self.opponents.values()))
        # By agent name, the key the AEC env selects by; a callable stands in for act().
        self._act: dict[str, tuple[int, Callable[[dict], Any]]] = {
            self.aec.possible_agents[s]: (s, o.act if callable(getattr(o, "act", None)) else o) for s, o in self.opponents.items()
        }
        space = self.aec.observation_space(self.agent)
        self.observation_space = space["observation"]
        self.action_space = LegalMoveSpace(self.aec.game.num_actions, self.action_masks)
        self._mask = np.zeros(self.aec.game.num_actions, np.int8)
        self._over_mask = np.ones(self.aec.game.num_actions, np.int8)
        self._pending = 0.0
        self._done = True
        self._failed: OpponentError | None = None
        self._has_reset = False
        self._seeded = False

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.action_space = LegalMoveSpace(self.action_space.n, self.action_masks)  # it pickles as a plain Discrete

    # -- gymnasium API ---------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # Until this reset has finished, the env is an episode that is over.
        self._done, self._failed, self._pending = True, None, 0.0
        super().reset(seed=seed)
        if seed is None and not self._seeded:
            # gymnasium seeded np_random from entropy; derive everything from one draw of it.
            seed = int(self.np_random.integers(2**63))
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
                raise ValueError(f"seed must be an integer or None, got {seed!r}")
            self._seeded = True
            self.aec.reset(seed=int(seed), options=options)
            seeds = opponent_seeds(int(seed), self.num_players, self.seat)
            done: set[int] = set()
            for s, opp in self.opponents.items():
                if id(opp) not in done and callable(getattr(opp, "seed", None)):
                    self._opponent_call(s, opp.seed, seeds[s])  # a shared object takes the lowest such seat's seed
                    done.add(id(opp))
        else:
            self.aec.reset(options=options)
        self._has_reset = True
        done = set()
        for s, opp in self.opponents.items():
            if id(opp) not in done and callable(getattr(opp, "reset", None)):
                self._opponent_call(s, opp.reset)
                done.add(id(opp))
        self._done = False
        self._pending = self._advance()
        if self._done:
            raise RuntimeError(f"{self.agent} had no decision before the game ended")
        out = self._observe()
        if self.render_mode == "human":
            self.render()
        return out

    def step(self, action: Any):
        if self._done:
            if self._failed is not None:
                raise RuntimeError(f"the episode stopped: {self._failed}")
            raise RuntimeError("the episode is over; call reset() to play again")
        n = self.action_space.n
        a = action if type(action) is int else _as_action(action, n)
        if not 0 <= a < n:
            raise ValueError(f"action {a} is outside the action space [0, {n})")
        aec = self.aec
        reward = self._pending
        self._pending = 0.0
        if not self._mask[a]:
            # No warning: the reward and info say it, and checkers and exploring learners
            # (gymnasium's check_env steps with an action sampled before its reset) make such moves on purpose.
            self._done = True
            obs, info = self._observe()
            info["illegal_move"] = 1
            return obs, reward - 1.0, True, False, info
        aec.step(a)
        reward += aec.rewards.get(self.agent, 0.0)
        if not self._is_over():
            reward += self._advance()
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), self._done, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the seat now (sb3-contrib's convention), as bool; all True once the
        episode is over (see "Masks" in the module docstring)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The seat's own view of the table (`Engine.view`): text for "ansi", printed for "human",
        its picture for "rgb_array" (`envs.picture`)."""
        return rendered(self.render_mode, self._has_reset, lambda: self.aec.game.view(self.seat),
                        f"{self.game_name}: {self.agent}'s view", engine=self.aec.game, viewer=self.seat,
                        layout=self.aec.render_layout)

    def close(self) -> None:
        self.aec.close()

    # -- play the other seats ----------------------------------------------
    def _is_over(self) -> bool:
        # `out` covers Neu's eliminations whether or not the AEC env has selected the seat yet.
        game = self.aec.game
        over = game.game_over or game.out[self.seat]
        if over:
            self._done = True
        return over

    def _advance(self) -> float:
        """Play the other seats until the learner must decide or its game is over; its rewards meanwhile."""
        aec, me, act = self.aec, self.agent, self._act
        terminations, rewards = aec.terminations, aec.rewards
        reward = 0.0
        while True:
            agent = aec.agent_selection
            if agent == me:
                if terminations[me]:
                    self._done = True
                return reward
            if terminations[agent]:
                aec.step(None)
            else:
                aec.step(self._opponent_move(agent, *act[agent]))
            reward += rewards.get(me, 0.0)
            if self._is_over():
                return reward

    def _opponent_move(self, agent: str, seat: int, policy: Callable[[dict], Any]) -> int:
        """The opponent's move, checked; on a failure the episode stops and OpponentError names it."""
        problem = cause = None
        observation = self.aec.observe(agent)
        mask = observation["action_mask"].copy()  # the env's mask: the opponent may edit its copy
        try:
            # A search agent's information state comes with the move, under the same guard (envs.belief).
            action = guarded_act(informed(self.opponents[seat], self.aec.game, seat, policy), observation, self.move_timeout)
        except KeyboardInterrupt:
            self._done = True  # the game is mid-turn: only reset() may go on
            raise
        except BaseException as e:  # SystemExit and the guard's exceptions too: the opponent failed, not the env
            problem, cause = failure(e, self.move_timeout), e
        else:
            if type(action) is int and 0 <= action < len(mask) and mask[action]:
                return action
            problem = check_action(action, mask)
        if problem is None:
            return int(action)
        self._done = True
        self._failed = OpponentError(seat, opponent_name(self.opponents[seat]), problem)
        raise self._failed from cause

    def _opponent_call(self, seat: int, method: Callable, *args: Any) -> None:
        """An opponent's seed() or reset(); a failure is named as a failed move is."""
        try:
            method(*args)
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            self._failed = OpponentError(seat, opponent_name(self.opponents[seat]), failure(e, None))
            raise self._failed from e

    def _observe(self):
        aec = self.aec
        view = aec.observe(self.agent)
        self._mask = view["action_mask"] if not self._done else self._over_mask.copy()
        info = dict(aec.infos.get(self.agent, {}))
        info["action_mask"] = self._mask.copy()
        return view["observation"], info


def _as_action(action: Any, n: int) -> int:
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"action must be an integer in [0, {n}), got {action!r} ({type(action).__name__})")
    return int(action)


def make_single_agent(game: str, num_players: int | None = 4, seat: int = 0, *, opponents: Any,
                      render_mode: str | None = None, move_timeout: float | None = None,
                      minimal_infos: bool = False, **rule_options: Any) -> SingleAgentEnv:
    """`envs.make_single_agent("neu", num_players=4, seat=0, opponents=bots, **rule_options)`.

    A `gymnasium.Env` in which the agent plays ``seat`` and ``opponents`` (agent
    objects or callables) play every other seat; see `envs.single_agent`. To name
    opponents by spec ("heuristic", "ppo:PATH", "bots.py:Greedy"), use
    `agents.make_single_agent`.
    """
    return SingleAgentEnv(game, num_players=num_players, seat=seat, opponents=opponents,
                          render_mode=render_mode, move_timeout=move_timeout, minimal_infos=minimal_infos, **rule_options)
