"""A cardzoo agent as an OpenSpiel policy, for OpenSpiel's algorithms on cardzoo's games.

    import pyspiel, envs.openspiel
    from agents.openspiel import AgentPolicy
    from agents.spec import make_from_spec
    from open_spiel.python.algorithms import exploitability
    game = pyspiel.load_game("cardzoo_neu", {"players": 2, "rules": "small"})
    exploitability.nash_conv(game, AgentPolicy(game, make_from_spec("heuristic", "neu")))

The agent is asked at each state as `experiments.solve` asks it (`agents.base.move_probabilities`):
``probs_at`` with the engine's information-set key (a solved ``cfr:PATH`` policy),
``action_probs``, uniform for random, or a deterministic ``act``. Its answers depend only on
the seat's information, so this is a policy in OpenSpiel's sense.
"""

from __future__ import annotations

import numpy as np
from open_spiel.python import policy

from agents.base import move_probabilities


class AgentPolicy(policy.Policy):
    """OpenSpiel's `policy.Policy` for one cardzoo agent playing every seat of a cardzoo game."""

    def __init__(self, game, agent) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.agent = agent

    def action_probabilities(self, state, player_id=None):
        seat = state.current_player() if player_id is None else player_id
        engine = state.engine
        mask = np.asarray(engine.legal_mask())
        p = move_probabilities(self.agent, engine.information_key(seat), engine.observe(seat), mask)
        return {int(a): float(p[a]) for a in np.flatnonzero(mask)}
