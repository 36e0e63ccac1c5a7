"""`pimc`: determinized Monte-Carlo search (perfect-information Monte-Carlo).

At a decision with more than one legal move, `PIMCAgent` draws ``worlds`` full game states
from its seat's information state (`envs.belief.sample_world`), has its evaluator
(`agents.search.evaluators`) play every legal move in every world to the horizon with the
rollout policy in every seat (common random numbers: the same worlds, chance streams and
rollout seeds for every move) and takes the move with the best total of its own values;
ties go to the rollout policy's own move. A forced move costs nothing. It is deterministic
for a seed, and its move depends only on its seat's information state (tested by redealing
the hidden cards).

Options (spec ``pimc:worlds=8,rollout=heuristic,horizon=round,evaluator=batched``):

* ``worlds``: sampled worlds per decision (default 8);
* ``rollout``: the policy every seat plays in the play-outs, ``heuristic`` (default) or
  ``random`` (in Python, any agent class; the batched evaluator needs one with ``act_batch``);
* ``horizon``: ``round`` (to the next score event, default) or ``game``;
* ``evaluator``: ``batched`` (play-outs on the batched engine, default) or ``readable``
  (on the readable engines, the reference). Both give the same values, so the same moves.

`PIMCCheat` (spec ``pimc_cheat``) is an upper bound, not a fair player: runners hand it
the real game through ``cheat_inform(engine)`` (a copy), and its worlds are that true state
(every hand and the draw pile's order) with fresh chance streams. It never enters a leaderboard or compare by default.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from agents.base import Agent
from agents.search.evaluators import EVALUATORS, make_evaluator, rollout_policy
from agents.search.rollout import HORIZONS
from envs.belief import sample_world

DEFAULTS = {"worlds": 8, "rollout": "heuristic", "horizon": "round", "evaluator": "batched"}
MAX_WORLDS = 4096  # worlds a decision may sample: each is a whole game held in memory


def parse_search_options(text: str, kind: str = "pimc") -> dict:
    """``"worlds=64,horizon=game"`` -> options (with defaults); ValueError names a bad one."""
    options = dict(DEFAULTS)
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in DEFAULTS:
            raise ValueError(f"{kind}: bad option {part!r}; valid options: {', '.join(f'{k}=' for k in DEFAULTS)}")
        if key == "worlds":
            # ASCII digits only: "٣" is not a second spelling (and label) of 3.
            if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_WORLDS:
                raise ValueError(f"{kind}: worlds must be a whole number from 1 to {MAX_WORLDS}, got {value!r}")
            options[key] = int(value)
        elif key == "horizon" and value not in HORIZONS:
            raise ValueError(f"{kind}: horizon must be one of {', '.join(HORIZONS)}, got {value!r}")
        elif key == "evaluator" and value not in EVALUATORS:
            raise ValueError(f"{kind}: evaluator must be one of {', '.join(EVALUATORS)}, got {value!r}")
        else:
            options[key] = value
    return options


class PIMCAgent(Agent):
    """Determinized Monte-Carlo search over worlds drawn from the information state."""

    name = "pimc"

    def __init__(self, game: str, num_players: int, seed: int | None = None, worlds: int = 8,
                 rollout: str = "heuristic", horizon: str = "round", evaluator: str = "batched") -> None:
        if horizon not in HORIZONS:
            raise ValueError(f"pimc: horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}")
        if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or not 1 <= worlds <= MAX_WORLDS:
            raise ValueError(f"pimc: worlds must be a whole number from 1 to {MAX_WORLDS}, got {worlds!r}")
        if evaluator not in EVALUATORS:
            raise ValueError(f"pimc: evaluator must be one of {', '.join(EVALUATORS)}, got {evaluator!r}")
        self.worlds, self.horizon, self.rollout = int(worlds), horizon, rollout
        # The policy's own move breaks ties; the evaluator keeps its env from decision to decision.
        self.policy = rollout_policy(rollout, game, num_players)
        self.evaluator = make_evaluator(evaluator, game, num_players, rollout, horizon)
        self._info: dict | None = None
        super().__init__(game, num_players, seed)

    @property
    def steps(self) -> int:
        """Play-out agent-steps taken in all (for speed figures)."""
        return self.evaluator.steps

    def reset(self) -> None:
        self._info = None

    def inform(self, info_state: dict) -> None:
        """Called by every runner right before `act`, with ``engine.information_state(seat)``."""
        self._info = info_state

    def draw_worlds(self, info: dict) -> list:
        return [sample_world(info, self.rng) for _ in range(self.worlds)]

    def act(self, observation: dict) -> int:
        legal = self.legal_actions(observation)
        if legal.size == 1:
            return int(legal[0])
        info = self._info
        if info is None or not np.array_equal(np.asarray(info["observation"], np.float32), observation["observation"]):
            raise ValueError(f"{self.name}: act() needs inform(info_state) with this seat's information state first "
                             "(the tournament, compare, the single-agent env and the web page call it; "
                             "env.unwrapped.information_state(agent) gives it)")
        seat = info["seat"]
        own = int(self.policy.act(observation))
        worlds = self.draw_worlds(info)
        seeds = self.rng.integers(2**62, size=len(worlds))
        totals = self.evaluator.evaluate(worlds, seat, legal, seeds)[:, :, seat].sum(axis=0)
        best = max(range(legal.size), key=lambda i: (totals[i], legal[i] == own))
        return int(legal[best])


class PIMCCheat(PIMCAgent):
    """An upper bound: the same search on the true state (every hand seen), fresh chance streams
    (the real one would also show the reshuffles and deals to come). Runners hand it a copy of
    the real engine through ``cheat_inform``; never a fair player."""

    name = "pimc_cheat"

    def reset(self) -> None:
        super().reset()
        self._engine = None

    def cheat_inform(self, engine: Any) -> None:
        self._engine = copy.deepcopy(engine)

    def draw_worlds(self, info: dict) -> list:
        if getattr(self, "_engine", None) is None:
            raise ValueError("pimc_cheat: act() needs cheat_inform(engine) first (the tournament's play-one-game path "
                             "calls it, for cardzoo's own upper bounds only)")
        worlds = [copy.deepcopy(self._engine) for _ in range(self.worlds)]
        for world in worlds:
            world.rng = np.random.default_rng(int(self.rng.integers(2**63)))
        return worlds
