"""The one PettingZoo AEC adapter: any `envs.engine.Engine` becomes an environment.

Rules live only in the engine. This module owns what every env shares:
agents and spaces, masks, the AEC bookkeeping (rewards, cumulative rewards,
terminations, the None-step of terminated agents), infos, rendering and the
checks on bad input.

`env()` and `raw_env` differ only in what happens on a masked-out action:

* ``raw_env`` raises ``ValueError`` (a bug in the caller, not a game event);
* ``env()`` follows PettingZoo classic's ``TerminateIllegalWrapper``: the game
  ends for everyone, the offender gets reward -1, the others 0, and every
  ``infos[agent]["illegal_move"]`` holds the offender's seat.

Infos are built for replay buffers: every agent's ``infos`` dict has the same
keys at every step from ``reset`` on, and every value is an int or a
fixed-length tuple of ints (one entry per seat, absolute seat order; tuples
so that infos compare with ``==`` and replay buffers turn them into arrays):

* ``eliminated`` 0/1, ``illegal_move`` (offender's seat, -1 = none),
  ``scored`` (1 when this step ended a round/hand), ``scores`` and
  ``score_changes`` (running scores; raw changes at this step), and
  ``final_ranks`` / ``final_scores`` (all 0 until the game ends normally);
* the game's own event facts, `Engine.info_defaults` (seats as indices, -1 =
  none; codes as ints), at their "absent" values on steps without an event.

``env.last_event`` keeps the readable version for logs and people: the facts
of the last step's event with agent names and code names, ``score_changes`` /
``scores`` as {agent: int}, and at the end ``final_ranks`` / ``final_scores``
(or ``illegal_move`` with the offender's name); None after a step that scored
nothing.

A player eliminated before the end (Neu) stays in ``agents``, is never
selected, has an all-zero mask and reward 0 from then on; every agent is
terminated together when the game ends (PettingZoo classic's convention).

``env.action_space(agent).sample()`` draws a uniformly random *legal* move
when the agent is to act (its mask), and any action otherwise; an explicit
``sample(mask)`` is gymnasium's. So random play through the spaces alone, as
PettingZoo's own tests do, plays real games instead of ending them at the first
masked-out sample. Each agent has its own space object; they compare equal.

Options every env takes besides the rules:

* ``max_cycles`` (default None: no limit): every seat makes at most this many
  decisions; when the seat to act has made them all, every agent is truncated
  (PettingZoo's "cycle": one turn of every agent). The parallel env counts
  ``step()`` calls instead, one decision each (`envs.parallel`).
* ``minimal_infos`` (default False): ``infos[agent]`` is an empty dict at every
  step, for wrappers that copy every key on every step; the facts stay readable
  in ``env.last_event``.
* ``render_layout`` (default "landscape", 832 x 448): the shape of the
  ``rgb_array`` picture; "portrait" (448 x 832) is drawn for phone screens
  (`envs.picture`).

Both check call order (``reset`` first) and the action's type and range with
plain ``if`` tests instead of PettingZoo's three wrapper layers, which cost
about 40 us a step; ``tests/test_api_contract.py`` checks that the guarantees hold.
"""

from __future__ import annotations

import copy
import sys
from typing import Any, Callable

import numpy as np
from gymnasium import spaces
import warnings
from pettingzoo import AECEnv

from envs.engine import Engine, zero_sum_rewards

RENDER_MODES = ("human", "ansi", "rgb_array")


class LegalMoveSpace(spaces.Discrete):
    """A `Discrete` action space whose ``sample()`` without a mask draws one of the legal moves
    that ``legal()`` gives (any action when there are none); with a mask it is gymnasium's.

    It pickles as a plain ``Discrete(n)``: a saved space (a model's file) is a description,
    not a view of a live game; the envs link their own copies again when unpickled.
    """

    def __init__(self, n: int, legal: Callable[[], np.ndarray]) -> None:
        super().__init__(n)
        self.legal = legal

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None:
            legal = self.legal()
            if legal is not None and legal.any():
                return super().sample(mask=legal.astype(np.int8, copy=False))
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n),))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


class CardGameEnv(AECEnv):
    """Generic AEC environment around a rules engine (set `engine_cls` in a subclass)."""

    engine_cls: type[Engine] = Engine
    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "name": "card_game", "is_parallelizable": False, "render_fps": 4}
    illegal_move = "raise"  # env() switches this to "penalise"

    def __init__(self, num_players: int | None = None, render_mode: str | None = None, max_cycles: int | None = None,
                 minimal_infos: bool = False, render_layout: str = "landscape", **rule_options: Any):
        from envs.picture import check_layout

        super().__init__()
        self.render_layout = check_layout(render_layout)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
        if max_cycles is not None and (isinstance(max_cycles, bool) or not isinstance(max_cycles, (int, np.integer)) or max_cycles < 1):
            raise ValueError(f"max_cycles must be a positive integer or None, got {max_cycles!r}")
        if not isinstance(minimal_infos, (bool, np.bool_)):
            raise ValueError(f"minimal_infos must be True or False, got {minimal_infos!r}")
        self.render_mode = render_mode
        self.max_cycles = None if max_cycles is None else int(max_cycles)
        self.minimal_infos = bool(minimal_infos)
        self.game = self.engine_cls(num_players, **rule_options)
        n = self.game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        game = self.game
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(game.obs_low, game.obs_high, (game.obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8),
            }
        )
        # The same object comes back on every call; every agent's spaces compare equal.
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self._link_action_spaces()
        self.state_space = spaces.Box(game.state_low, game.state_high, (game.state_size,), np.float32)
        self._info_defaults = game.info_defaults()
        # The "absent" value of each event fact, as infos hold it.
        self._absent = {k: tuple(map(int, v)) if isinstance(v, (list, tuple)) else int(v)
                        for k, v in self._info_defaults.items()}
        self._zeros = (0,) * n
        self._event: Any = None  # what last_event reads: None, an event to format, or a readable dict
        self._no_moves = np.zeros(game.num_actions, np.int8)
        self._rng: np.random.Generator | None = None
        self._has_reset = False

    # -- spaces ------------------------------------------------------------
    def _link_action_spaces(self) -> None:
        n = self.game.num_actions
        self.action_spaces = {a: LegalMoveSpace(n, self._sampling_mask(a)) for a in self.possible_agents}

    def _sampling_mask(self, agent: str) -> Callable[[], np.ndarray | None]:
        return lambda: self.action_mask(agent) if self._has_reset else None

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link_action_spaces()  # they pickle as plain Discrete spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self._known(agent)]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self._known(agent)]

    def _known(self, agent: Any) -> str:
        if not isinstance(agent, str) or agent not in self._seat:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        return agent

    # -- reset -------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if sys._getframe(1).f_globals.get("__name__") == "pufferlib.emulation":
            # PufferLib's PettingZooPufferEnv unpacks reset() as the parallel API's (observations, infos);
            # the AEC reset() returns None, which would fail there with "cannot unpack non-iterable NoneType".
            name = self.metadata["name"]
            raise TypeError(f"PufferLib's PettingZooPufferEnv takes the parallel env: pass envs.{name}.parallel_env(), not {name}.env()")
        deal = None
        if options is not None:
            if not isinstance(options, dict):
                raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
            unknown = sorted(map(str, set(options) - {"deal"}))
            if unknown:
                # PettingZoo's api_test passes made-up options and expects them
                # to be accepted, so unknown keys warn instead of raising.
                warnings.warn(f"ignoring unknown reset option(s) {unknown}; the only reset option is 'deal'", stacklevel=2)
            deal = options.get("deal")
        rng = self._rng
        if seed is not None or rng is None:
            # reset() without a seed keeps drawing from the same stream, so a
            # seeded env gives a reproducible sequence of games.
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
                raise ValueError(f"seed must be an integer or None, got {seed!r}")
            rng = np.random.default_rng(seed)
        if deal is None:
            self.game.reset(rng)
        else:
            self._reset_with_deal(rng, deal)
        self._rng = rng
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._event = None
        self._decisions = [0] * self.game.num_players  # per seat, for max_cycles
        self._cut = False  # truncated by max_cycles
        self.infos = self._infos_for({}, self._zeros, 0)
        self._rewards_dirty = False
        self._infos_dirty = False
        self._has_reset = True
        self._select_next()

    def _reset_with_deal(self, rng: np.random.Generator, deal: Any) -> None:
        """Reset the engine with a stacked deal; if the deal is refused, the env is left exactly as it was.

        The engine finds a bad deal only while dealing, after it has started to
        change its state (and to draw from the rng), so the old state is kept
        and put back. The rng is shared with the engine by reference: it is
        kept out of the copy and its position is restored instead.
        """
        game = self.game
        old_rng = self._rng
        memo = {} if old_rng is None else {id(old_rng): old_rng}
        saved = copy.deepcopy(game.__getstate__(), memo)  # the engine's own pickling state
        position = None if rng is not old_rng else rng.bit_generator.state
        try:
            game.reset(rng, deal)
        except BaseException:
            game.__dict__.clear()
            if hasattr(game, "__setstate__"):
                game.__setstate__(saved)
            else:
                game.__dict__.update(saved)
            if position is not None:
                rng.bit_generator.state = position
            raise

    # -- observation -------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._has_reset:
            raise RuntimeError("call reset() before observe()")
        game = self.game
        seat = self._seat.get(agent) if type(agent) is str else None
        if seat is None:
            seat = self._seat[self._known(agent)]
        # Only the agent PettingZoo will step next may move: while a terminated
        # agent takes its None-step, the engine's next player must wait.
        if agent == self.agent_selection and seat == game.current_player and not game.game_over and not self._cut:
            mask = game.legal_mask().copy()
        else:
            mask = self._no_moves.copy()
        return {"observation": game.observe(seat), "action_mask": mask}

    def keep_history(self, on: bool = True) -> None:
        """From the next ``reset()`` on, keep every move as each seat saw it, so that
        `information_state` carries the seat's information-set key (``"key"``,
        `envs.engine.Engine.information_key`); off by default, as it costs a few µs a step. The
        runners turn it on for a table where an agent has an ``inform`` hook."""
        self.game.keep_history(on)

    def information_state(self, agent: str) -> dict:
        """Everything `agent`'s seat knows, as a plain dict (`envs.belief`): what a search agent's
        ``inform(info_state)`` hook is given right before each ``act``."""
        if not self._has_reset:
            raise RuntimeError("call reset() before information_state()")
        return self.game.information_state(self._seat[self._known(agent)])

    def action_mask(self, agent: str) -> np.ndarray:
        """The agent's action mask as in its observation (all zeros unless it is to act)."""
        if not self._has_reset:
            raise RuntimeError("call reset() before action_mask()")
        game = self.game
        seat = self._seat.get(agent) if type(agent) is str else None
        if seat is None:
            seat = self._seat[self._known(agent)]  # an unknown agent raises, as in observe()
        if agent == self.agent_selection and seat == game.current_player and not game.game_over and not self._cut:
            return game.legal_mask().copy()
        return self._no_moves.copy()

    def last(self, observe: bool = True):
        # AECEnv.last without its assert: this runs once per agent step.
        if not self._has_reset:
            raise RuntimeError("call reset() before last()")
        agent = self.agent_selection
        try:
            return (
                self.observe(agent) if observe else None,
                self._cumulative_rewards[agent],
                self.terminations[agent],
                self.truncations[agent],
                self.infos[agent],
            )
        except KeyError:
            self._known(agent)
            raise ValueError(
                f"agent_selection {agent!r} has left the game; agents still in it are {self.agents} "
                "(after the last None-step every agent is done: call reset() to play again)"
            ) from None

    def state(self) -> np.ndarray:
        if not self._has_reset:
            raise RuntimeError("call reset() before state()")
        return self.game.state()

    # -- step --------------------------------------------------------------
    def step(self, action: Any) -> None:
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the game is over and every agent is done; call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._dead_step(action)
            return
        game = self.game
        # Fast path for a plain in-range int; everything else goes through the full check.
        a = action if type(action) is int and 0 <= action < game.num_actions else self._check_action(action)
        if not game.legal_mask()[a]:
            if self.illegal_move == "raise":
                # Checked before anything changes: a refused action leaves the env as it was.
                raise ValueError(
                    f"illegal move {a} ({game.action_name(a, game.current_player)!r}) for {agent}; "
                    f"legal: {self.legal_action_names()}"
                )
            self._penalise_illegal(agent)
            return
        if self._rewards_dirty:
            for k in self.rewards:
                self.rewards[k] = 0.0
            self._rewards_dirty = False
        self._cumulative_rewards[agent] = 0.0
        event = game.step(a)
        if event is None:
            if self._infos_dirty:
                # The first quiet step after an event: fresh infos with nothing to report.
                self.infos = self._infos_for({}, self._zeros, 0)
                self._infos_dirty = False
                self._event = None
            # Nothing was scored, so nobody was eliminated and nobody waits on a None step.
            self.agent_selection = self.possible_agents[game.current_player]
        else:
            self._score(event)
            if game.game_over:
                self._finish()
            self._select_next()
        if self.max_cycles is not None:
            self._count_decision(agent)
        if self.render_mode == "human":
            self.render()

    def _count_decision(self, agent: str) -> None:
        """max_cycles: truncate every agent once the seat to act has made all its decisions."""
        self._decisions[self._seat[agent]] += 1
        game = self.game
        if not game.game_over and self._decisions[game.current_player] >= self.max_cycles:
            self.truncate()

    def truncate(self) -> None:
        """Cut the game short: every agent is truncated and steps with None, as at the end."""
        self._cut = True
        for k in self.agents:
            self.truncations[k] = True
        self._select_next()

    def _check_action(self, action: Any) -> int:
        n = self.game.num_actions
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = int(action)
            else:
                raise TypeError(f"action must be an integer in [0, {n}), got {action!r} ({type(action).__name__})")
        if not 0 <= action < n:
            raise ValueError(f"action {action} is outside the action space [0, {n})")
        return int(action)

    def _infos_for(self, details: dict, changes: tuple[int, ...], scored: int, illegal: int = -1,
                   final: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> dict[str, dict[str, Any]]:
        """Every agent's infos dict; all share one layout, only ``eliminated`` differs."""
        if self.minimal_infos:
            return {a: {} for a in self.agents}
        game = self.game
        zeros = self._zeros
        base = {
            "eliminated": 0,
            "illegal_move": illegal,
            "scored": scored,
            "scores": tuple(game.scores),
            "score_changes": changes,
            "final_ranks": final[0] if final else zeros,
            "final_scores": final[1] if final else zeros,
        }
        if details:
            for k, default in self._info_defaults.items():
                v = details.get(k, default)
                base[k] = tuple(map(int, v)) if isinstance(default, (list, tuple)) else int(v)
        else:
            base.update(self._absent)
        out, seat = game.out, self._seat
        infos = {}
        for a in self.agents:
            info = base.copy()  # one dict per agent, so that changing one changes no other
            if out[seat[a]]:
                info["eliminated"] = 1
            infos[a] = info
        return infos

    @property
    def last_event(self) -> dict[str, Any] | None:
        """The last step's event, readable: agent names for seats, names for codes, {agent: int}
        for per-seat values; with ``final_ranks`` / ``final_scores`` at the end; None when
        the last step scored nothing. For logs and people; agents read ``infos``."""
        event = self._event
        if event is None or isinstance(event, dict):
            return event
        details, deltas, scores, final = event
        agents, game = self.possible_agents, self.game
        readable: dict[str, Any] = {}
        for k, v in details.items():
            if k in game.INFO_SEATS:
                readable[k] = agents[v] if v >= 0 else None
            elif k in game.INFO_CODES:
                readable[k] = game.INFO_CODES[k][v]
            elif isinstance(v, (list, tuple, np.ndarray)):
                readable[k] = dict(zip(agents, map(int, v)))
            else:
                readable[k] = v
        readable["score_changes"] = dict(zip(agents, deltas))
        readable["scores"] = dict(zip(agents, scores))
        if final:
            readable["final_ranks"] = dict(zip(agents, final[0]))
            readable["final_scores"] = dict(zip(agents, final[1]))
        self._event = readable  # built once, on demand: most steps nobody reads it
        return readable

    def _score(self, event) -> None:
        rewards = zero_sum_rewards(event)
        seat = self._seat
        changes = tuple(map(int, event.deltas))
        final = None
        if self.game.game_over:
            final = (tuple(map(int, self.game.ranks())), tuple(map(int, self.game.scores)))
        for k in self.agents:
            r = rewards[seat[k]]
            self.rewards[k] = r
            self._cumulative_rewards[k] += r
        self.infos = self._infos_for(event.details, changes, 1, final=final)
        self._event = (event.details, changes, tuple(map(int, self.game.scores)), final)
        self._rewards_dirty = True
        self._infos_dirty = True

    def _finish(self) -> None:
        for k in self.agents:
            self.terminations[k] = True

    def _penalise_illegal(self, agent: str) -> None:
        # PettingZoo classic's TerminateIllegalWrapper convention.
        warnings.warn(f"{agent} made an illegal move; the game ends and {agent} gets -1.", stacklevel=3)
        self._cumulative_rewards[agent] = 0.0
        offender = self._seat[agent]
        for k in self.agents:
            r = -1.0 if k == agent else 0.0
            self.rewards[k] = r
            self._cumulative_rewards[k] += r
            self.terminations[k] = True
        self.infos = self._infos_for({}, self._zeros, 0, illegal=offender)
        self._event = {"illegal_move": agent}
        self._rewards_dirty = True
        self._infos_dirty = True
        self.game.game_over = True
        self._select_next()

    def _dead_step(self, action: Any) -> None:
        if action is not None:
            raise ValueError(f"{self.agent_selection} is terminated: the only valid action is None")
        agent = self.agent_selection
        for d in (self.terminations, self.truncations, self.rewards, self._cumulative_rewards, self.infos):
            del d[agent]
        self.agents.remove(agent)
        for k in self.rewards:
            self.rewards[k] = 0.0
        self._select_next()

    def _select_next(self) -> None:
        # Terminated and truncated agents step (with None) before play goes on, the PettingZoo way.
        for k in self.agents:
            if self.terminations[k] or self.truncations[k]:
                self.agent_selection = k
                return
        if self.agents:
            self.agent_selection = self.possible_agents[self.game.current_player]

    # -- names, rendering ----------------------------------------------------
    def seat_of(self, agent: str) -> int:
        """The seat (0 .. num_players - 1) of an agent; ValueError for an unknown one."""
        return self._seat[self._known(agent)]

    def _seat_of(self, agent: str | None) -> int:
        if agent is None:
            return self.game.current_player
        return self._seat[self._known(agent)]

    def action_name(self, action: int, agent: str | None = None) -> str:
        """Readable name of an action for `agent` (default: the agent to act)."""
        a = self._check_action(action)
        return self.game.action_name(a, self._seat_of(agent))

    def explain_action(self, action: int) -> str:
        """What a legal move of the agent to act does now, in the game's words ("adds 9 to the running
        total: 40 becomes 49"), told from what that agent may know. ValueError for a move not legal now."""
        a = self._check_action(action)
        if not self.game.legal_mask()[a]:
            raise ValueError(f"action {a} ({self.game.action_name(a, self.game.current_player)}) is not legal now")
        return self.game.explain_action(a, self.game.current_player)

    def action_from_name(self, name: str, agent: str | None = None) -> int:
        """Inverse of `action_name`."""
        return self.game.action_from_name(name, self._seat_of(agent))

    def legal_action_names(self) -> list[str]:
        seat = self.game.current_player
        return [self.game.action_name(int(a), seat) for a in np.flatnonzero(self.game.legal_mask())]

    def render(self) -> str | np.ndarray | None:
        """The table as the spectator sees it: text ("ansi"), printed ("human") or a picture ("rgb_array")."""
        return rendered(self.render_mode, self._has_reset, self.game.render, f"{self.metadata['name']}: the table (spectator)",
                        engine=self.game, layout=self.render_layout)

    def close(self) -> None:
        pass


def rendered(render_mode: str | None, has_reset: bool, text: Callable[[], str], title: str = "",
             engine: Any = None, viewer: int | None = None, layout: str = "landscape") -> str | np.ndarray | None:
    """What ``render()`` gives in `render_mode`: the text for "ansi", printed for "human", a
    picture (an RGB uint8 array) for "rgb_array": `engine`'s table as `viewer` sees it (None: the
    spectator; `envs.picture.table`), or the text's picture where no engine is given."""
    if render_mode is None:
        warnings.warn("render() called with render_mode=None; pass render_mode='ansi', 'human' or 'rgb_array'", stacklevel=3)
        return None
    if not has_reset:
        raise RuntimeError("call reset() before render()")
    if render_mode == "human":
        print(text())
        return None
    if render_mode == "rgb_array":
        from envs.picture import picture, table

        return table(engine, viewer, title, layout) if engine is not None else picture(text(), title, layout)
    return text()


def make_env_api(engine_cls: type[Engine], module: str):
    """Build the `raw_env` class and `env()` function of a `<game>_v0` shim.

    `module` is the shim's ``__name__``, so that envs pickle and copy by reference.
    The shim's own docstring is the game's page; `raw_env` and `env` point to it in one
    line each, so that ``help(module)`` shows the page once.
    """
    name = f"{engine_cls.game_name}_v0"
    page = f"the page is the docstring of {module} (help({module}))"
    raw = type(
        "raw_env",
        (CardGameEnv,),
        {
            "engine_cls": engine_cls,
            "metadata": {"render_modes": list(RENDER_MODES), "name": name, "is_parallelizable": False, "render_fps": 4},
            "__doc__": f"The {name} AEC env; a masked-out action raises ValueError; {page}.",
            "__module__": module,
            "__qualname__": "raw_env",
        },
    )

    def env(num_players: int | None = None, render_mode: str | None = None, **options: Any) -> CardGameEnv:
        e = raw(num_players=num_players, render_mode=render_mode, **options)
        e.illegal_move = "penalise"
        return e

    env.__doc__ = f"The {name} AEC env; a masked-out action ends the game, the offender gets -1; {page}."
    env.__module__ = module

    def parallel_env(num_players: int | None = None, render_mode: str | None = None, **options: Any):
        from envs.parallel import ParallelCardGameEnv

        return ParallelCardGameEnv(env(num_players=num_players, render_mode=render_mode, **options))

    parallel_env.__doc__ = (f"The {name} env in PettingZoo's parallel API (`envs.parallel`): one decision per step, "
                            f"infos of numbers with the acting seat; {page}.")
    parallel_env.__module__ = module
    return raw, env, parallel_env
