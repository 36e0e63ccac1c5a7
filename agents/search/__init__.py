"""Search agents: determinized Monte-Carlo over worlds drawn from the seat's information state.

A search agent never holds the real game. Every runner hands it the seat's information
state (`envs.belief`) through the optional ``inform(info_state)`` hook (agents/base.py)
right before each ``act``; it draws worlds from that with `envs.belief.sample_world` and
asks an evaluator for every seat's value of each move in each world:

* `agents.search.evaluators`: ``evaluate(worlds, seat, first_moves, seeds) -> [W, M, players]``;
  `BatchedEvaluator` (the default) plays out on the batched engine (`VectorEnv.load_rows`,
  the compiled heuristics or any ``act_batch`` policy), `ReadableEvaluator` on the readable
  engines (`agents.search.rollout`, the reference; both give the same values);
* `agents.search.pimc`: `pimc` on top (its safe move choice by default), and `pimc_cheat`;
* `agents.search.ismcts`: `ismcts`, information-set MCTS with max^n back-ups;
* `agents.search.options`: the spec options of each kind, checked in one place.

Every search agent offers ``option_values(observation)`` and ``action_probs(observation)``
after `act`: the values its search found for each move, and a distribution over the moves.

docs/search.md describes the agents and their options; `pimc_cheat` (an upper bound that
sees every hand) is never a default anywhere.
"""

from agents.search.evaluators import BatchedEvaluator, ReadableEvaluator, evaluate, make_evaluator
from agents.search.ismcts import ISMCTSAgent
from agents.search.options import OPTION_KEYS, SEARCH_OPTIONS, parse_search_options
from agents.search.pimc import PIMCAgent, PIMCCheat

__all__ = ["BatchedEvaluator", "ISMCTSAgent", "OPTION_KEYS", "PIMCAgent", "PIMCCheat", "ReadableEvaluator",
           "SEARCH_OPTIONS", "evaluate", "make_evaluator", "make_search_agent", "parse_search_options"]


def make_search_agent(text: str, game: str, num_players: int, seed: int | None = None):
    """A search agent from its spec, ``"pimc"``, ``"pimc_cheat"`` or ``"ismcts"`` with ``:option=value,...``."""
    kind, _, rest = text.partition(":")
    cls = {"pimc": PIMCAgent, "pimc_cheat": PIMCCheat, "ismcts": ISMCTSAgent}[kind]
    return cls(game, num_players, seed, **parse_search_options(rest, kind))
