"""Exercise 3: a Neu agent that beats random.

Write `act` for four-player Neu (docs/RULES.md, section 3: keep the running total at or
under 101). The check plays your agent in one seat against three random agents on duplicate
deals and passes when the 95% confidence interval of your mean chip difference against
random lies above 0.

What you can read (see `envs.info("neu", 4)`): `observation["action_mask"]` has a 1 for
every legal action; `envs.info("neu", 4).action_names[a]` names action a ("play 7",
"pass", "shot player_2", ...); `observation["observation"][facts.obs_layout["total"]]` is
the running total, and `facts.obs_layout["hand"]` your cards.

Check your work:  python -m experiments.exercises check 3 --file THIS_FILE
"""

import numpy as np

import envs

FACTS = envs.info("neu", num_players=4)


class NeuAgent:
    def act(self, observation: dict) -> int:
        raise NotImplementedError("exercise 3: write act()")
