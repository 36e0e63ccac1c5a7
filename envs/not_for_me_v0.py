"""Not For Me (ノットフォーミー) — a climbing / shedding game where "pass" means giving cards away.

Rules: [docs/RULES.md §1](../RULES.md#1-not-for-me-not_for_me). Engine: `envs/not_for_me.py`.

    from envs import not_for_me_v0
    env = not_for_me_v0.env(num_players=4)     # 2..5 players, default 4

| Import             | `from envs import not_for_me_v0`                         |
|--------------------|----------------------------------------------------------|
| Actions            | Discrete(36·C + 6·num_players + 6), C = copies per number |
|                    | (2p: 270, 3p: 312, 4p: 390, 5p: 396)                     |
| Parallel API       | `parallel_env()` (see `envs.parallel`)                   |
| Manual control     | `python -m experiments.play --game not_for_me`           |
| Agents             | `player_0 … player_{n-1}`                                |
| Observation shape  | (47 + 6·num_players,) float32, plus an int8 mask         |
| State shape        | (48 + 13·num_players,)                                   |

Cards: the numbers 1–6, C of each (C = 10 with 4–5 players, 8 with 3, 7 with
2), and 5 wilds. Each round deals 8 cards to every player, turns 3 cards face
up as the *supply*, and the rest is the face-down draw pile. On a turn a player
plays a group of equal numbers onto the field (same count: higher number; more
cards: lower number), or, when the field is not empty, says **For You** and
offers all their cards of one number, face down, to another player. That
player — who sees how many cards and who offers, never the number — answers
**Accept** (the cards are theirs) or **Not For Me** (the cards go back and the
giver draws as many cards, one at a time, from the supply or the pile). The
first player with an empty hand goes out; everyone else takes
(hand marks of their number cards) × (1 + wilds held) penalty points.

A For You is a real multi-agent exchange: after the giver's action the
*target* agent acts (phase "answer"), and after a refusal the *giver* acts once
per card owed (phase "draw"). `agent_selection` always names who decides.

## Card notation (stacked deals, rendering)
"1" … "6" (or the integers 1–6) for number cards, "W" or "wild" for a wild.
Card kinds are indexed 0–5 = numbers 1–6, 6 = wild.

## Action space
With n players and C copies per number (table above). "Seat r" is r seats
clockwise from the actor.

| index                        | name                            | legal when                                           |
|------------------------------|---------------------------------|------------------------------------------------------|
| ((v−1)·C + m−1)·6 + w        | `play m of v` / `play m of v + w wild(s)` | phase play; m ≥ 1 cards of number v (1–6) and w ≥ 0 wilds held; field empty, or k = m+w equal to the field count with v above the field number, or k above the field count with v below the field number; w = 0 if the play empties the hand |
| 36·C + k−1  (k = 1…5)        | `play k wild(s)`                | phase play; k wilds held, counted as k 7s: field empty, or field count k with field number below 7; never the whole hand |
| 36·C + 5 + (v−1)·(n−1) + r−1 | `for you vs to player_j`        | phase play; field not empty; a card of number v held; gives *all* of them to seat r (r = 1…n−1) |
| 36·C + 5 + 6·(n−1)           | `accept`                        | phase answer (the target of a For You)               |
| … + 1                        | `not for me`                    | phase answer                                         |
| … + 2 … + 4                  | `draw supply 0` … `draw supply 2` | phase draw; that supply slot holds a card            |
| … + 5                        | `draw pile`                     | phase draw; the draw pile is not empty               |
| … + 6                        | `pass`                          | phase play; no legal play and no number card to offer (the plain pass) |

`envs.not_for_me.ActionLayout.for_players(n)` computes these indices.
Action names depend on the acting seat ("for you 4s to player_2");
`env.unwrapped.action_name(a)` and `env.unwrapped.action_from_name(name)`
translate for the agent to act; `env.unwrapped.explain_action(a)` says what a legal move does now.

## Observation (seat-relative: "seat r" is r seats clockwise from the observer)
| index              | meaning                                                              |
|--------------------|----------------------------------------------------------------------|
| 0 … 5              | own hand: count of each number 1–6                                   |
| 6                  | own hand: wilds                                                      |
| 7                  | field: card count (0 = empty field)                                  |
| 8                  | field: number (1–6, 7 for wilds only, 0 = empty)                     |
| 9                  | passes (For You or plain) since the field's play                     |
| 10 … 30            | supply slots 0, 1, 2: one-hot of 7 kinds each (1–6, wild); all 0 = empty slot |
| 31                 | draw pile size                                                       |
| 32                 | round number (1-based)                                               |
| 33                 | number of rounds in the game                                         |
| 34 … 36            | phase one-hot: play, answer a For You, draw after Not For Me         |
| 37                 | size of the pending For You offer (0 = none)                         |
| 38                 | number of the pending offer (1–6) — only in the giver's own observation, else 0 |
| 39                 | cards still owed in the draw phase                                   |
| 40 … 46            | cards played this round: count per number 1–6, then wilds            |
| 47 + 6r … 52 + 6r  | seat r: hand size, total penalty, made the field's play (0/1), made the For You offer now waiting for an answer (0/1; 0 in every other phase, the draws after a Not For Me included), is that offer's target (0/1), is to act (0/1) |

Nothing else: no other hand, no draw-pile order, and no number inside a face-down
offer the observer did not make (a hand size excludes cards on offer).
`envs.not_for_me` exports these offsets (`OBS_*`, `SEAT_*`).
`state()` is the global view for centralised critics: every hand (7 counts per
seat, absolute seat order), the draw pile's counts, the pending offer's number
(0 = none), then indices 7… of the observation as seen from `player_0`.

`observation_space(agent)["observation"]` is a Box with per-index bounds
(`env.unwrapped.game.obs_low` / `obs_high`; `state_space` likewise) that hold
in every reachable state; every range includes 0. For
libraries that need a Box observation, `envs.box_obs(env)` gives the float32
vector with the mask in `infos[agent]["action_mask"]` (see `docs/interop.md`).

## Rewards
Score = −penalty. At the end of each round every player gets its score change
minus the mean change, so rewards sum to zero. A round cut at
`max_round_steps` reports `round_truncated` = 1 in `infos` (zero changes,
zero rewards). The event and, at the end, the final ranks go in `infos` (below).

## Infos
The keys and value types every cardzoo env shares, and the readable
`env.unwrapped.last_event`, are described in `help(envs.adapter)`. What they
hold in Not For Me, and Not For Me's own event facts:

| key             | value                                                          |
|-----------------|----------------------------------------------------------------|
| `scored`        | 1 on the step that ends a round, else 0                            |
| `scores`        | running scores per seat (−penalty)                              |
| `final_ranks`   | rank per seat at the end of the game (1 = lowest total penalty, ties share); all 0 before    |
| `round`         | the round that ended (1-based); 0 = no event                   |
| `went_out`      | seat that emptied its hand; −1 = none (or a truncated round)   |
| `round_penalties` | penalty points per seat taken in that round                  |
| `round_truncated` | 1 if the round hit `max_round_steps` with nobody out (no penalties) |

## Rule options
| option            | default              | meaning                                                  |
|-------------------|----------------------|----------------------------------------------------------|
| `hand_marks`      | (1, 1, 1, 1, 1, 1)   | hand marks of one card of 1 … 6 (penalty per card), each 0 … 10 |
| `rounds`          | number of players    | rounds in a game, 1 … 100                                |
| `max_round_steps` | 2000                 | agent steps (plays, offers, answers, draws, passes) after which a round ends with no penalties, 1 … 100,000 |
| `rules`           | `"standard"`         | `"standard"`: RULES.md §1. `"small"`: the small preset (RULES.md "Not For Me, small preset"): two players only, one round (`rounds` fixed at 1), the numbers 1–3 twice each and one wild (7 cards), hands of 2, one supply card, a draw pile of 2; small enough to solve exactly (`python -m experiments.solve --game not_for_me`). The observation layout and action space are those of the standard two-player game. |

## Decisions from RULES.md [D]
* Seats: "clockwise" is increasing seat index.
* 2–5 players (5 play with the full deck, like 4).
* A play made only of wilds counts as that many 7s (a single wild is a 7).
* You cannot go out on a wild: a play that empties the hand holds no wild.
* For You only when the field is not empty; wilds can never be given.
* After Not For Me, when the supply and the draw pile are both empty, nothing
  more is drawn (the draw phase ends early).
* An accepted For You that empties the giver's hand ends the round: the giver goes out.
* Plain pass only with no legal play and no number card to offer (e.g. a hand
  of wilds only). A leader who cannot play passes the lead with the field still empty.
* Round 1 starts with `player_0`. A later round starts with the player with
  the most penalty points in the round just played; ties go to the tied player
  nearest clockwise after the player who went out.
* `hand_marks` default: one mark per card for every number.
* `max_round_steps` (default 2,000): the round ends with no penalties; `infos`
  says `round_truncated`.

Choices of this implementation, where RULES.md is silent:
* On a non-empty field For You is always allowed, whether or not a play is
  legal: it replaces the pass, and RULES.md sets no other condition.
* A truncated round counts as one of the `rounds`; the next round is started by
  the seat after the truncated round's start player.
* The tie-break counts the player who went out (0 points) among the tied only
  when nobody scored; it then comes last, so the next seat clockwise starts.
* Cards on offer are out of the giver's hand (and hand size) until answered.
* A supply card taken is replaced in the same slot; a slot the empty draw
  pile cannot refill stays empty.

## Stacked deals
`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "supply": [a, b, c], "draw_pile": [...]}})`
fixes the first round: eight cards per seat, the three face-up supply cards
(slots 0, 1, 2; optional) and the top of the draw pile, top first (optional).
Cards the deal does not name are shuffled (with `seed`) under the named ones;
an unnamed supply comes from them. A deal that does not fit the deck for that
player count (too many copies, wrong hand or supply sizes, unknown cards or
keys) raises ValueError saying what is wrong. Later rounds are dealt from the seeded RNG.

## Bad input
As in every cardzoo env (`help(envs.adapter)`): a masked-out action raises
ValueError in `raw_env` and ends an `env()` game with −1 for the offender.
Bad rule options raise ValueError naming the expected values.

## Version history
* v0: first release.
"""

from envs.adapter import make_env_api
from envs.not_for_me import NotForMe

raw_env, env, parallel_env = make_env_api(NotForMe, __name__)
