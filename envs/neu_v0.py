"""Neu (ノイ) — keep the running total at or under 101.

Rules: [docs/RULES.md §3](../RULES.md#3-neu-neu). Engine: `envs/neu.py`.

    from envs import neu_v0
    env = neu_v0.env(num_players=4)     # 2..7 players, default 4

| Import             | `from envs import neu_v0`                          |
|--------------------|----------------------------------------------------|
| Actions            | Discrete(16 + num_players)                         |
| Parallel API       | `parallel_env()` (see `envs.parallel`)             |
| Manual control     | `python -m experiments.play --game neu`            |
| Agents             | `player_0 … player_{n-1}`                          |
| Observation shape  | (41 + 5·num_players,) float32, plus an int8 mask   |
| State shape        | (18·num_players + 41 + 5·num_players,)             |

Each player holds 3 cards. On a turn a player plays one card, the running
total changes, and they draw one. A player who must play and has no legal
card loses the round and pays a chip; at 0 chips they are out: they stay in
`agents` with an all-zero mask and reward 0, are never selected again, and
are terminated with everyone else when the game ends (PettingZoo classic's
convention). The last player with chips wins.

## Card notation (stacked deals, rendering)
"1" … "9", "10", "50", "-10", "-1", "101", "pass", "turn", "shot", "double"
(also P / T / S / D). Integers are read as number cards. Card kinds are
indexed in that order: 0–8 = 1–9, 9 = 10, 10 = 50, 11 = −10, 12 = −1,
13 = 101, 14 = pass, 15 = turn, 16 = shot, 17 = double.

## What each card does
| card            | effect                                                                 |
|-----------------|------------------------------------------------------------------------|
| 1 … 9, 10, 50   | adds its value to the total; legal only if the total stays ≤ 101       |
| −10, −1         | subtracts 10 or 1 (the total may go below 0); always legal             |
| 101             | sets the total to 101, whatever it was; always legal                   |
| Pass            | leaves the total unchanged; the next player in the direction of play   |
|                 | plays                                                                  |
| Turn            | leaves the total unchanged and reverses the direction of play; the     |
|                 | next player in the new direction plays                                 |
| Shot            | leaves the total unchanged; the player names any other player still in |
|                 | the game, who plays next; play goes on from them in the same direction |
| Double          | leaves the total unchanged; the next player must play two cards, one   |
|                 | after the other, drawing after each                                    |

After every card the player draws one. The first of two plays owed after a Double may not be a Double.
If it is a Pass, Turn or Shot, the whole obligation moves on: the player who
now plays next owes two plays, and the current player's turn ends. Otherwise
the second play may be any legal card, a Double included (the next player
then owes two), and a Pass, Turn or Shot as the second play just has its
usual effect. A player who must play and holds no legal card (every number
would take the total over 101, or only a Double is held on the first of two
plays) loses the round.

## Action space
| index          | name                   | legal when                                        |
|----------------|------------------------|---------------------------------------------------|
| 0 … 8          | `play 1` … `play 9`    | held, and total + value ≤ 101                     |
| 9              | `play 10`              | held, and total + 10 ≤ 101                        |
| 10             | `play 50`              | held, and total + 50 ≤ 101                        |
| 11             | `play -10`             | held (the total may go below 0)                   |
| 12             | `play -1`              | held                                              |
| 13             | `play 101`             | held (total becomes 101)                          |
| 14             | `pass`                 | held                                              |
| 15             | `turn`                 | held                                              |
| 16             | `double`               | held, and not the first of two plays              |
| 17 … 15 + n    | `shot player_k`        | Shot held, and the player named is still in the   |
|                |                        | game; index 17 + (r−1) names the player r seats   |
|                |                        | clockwise from the actor                          |

Action names depend on the acting seat ("shot player_2");
`env.unwrapped.action_name(a)` and `env.unwrapped.action_from_name("shot player_2")`
translate for the agent to act; `env.unwrapped.explain_action(a)` says what a legal move does
now ("adds 9 to the running total: 40 becomes 49 ...").

## Observation (seat-relative: "seat r" is r seats clockwise from the observer)
| index                  | meaning                                                  |
|------------------------|----------------------------------------------------------|
| 0 … 17                 | own hand: count of each card kind                        |
| 18 … 35                | played pile since the last reshuffle: count per kind     |
| 36                     | running total                                            |
| 37                     | direction: +1 clockwise, −1 counter-clockwise            |
| 38                     | plays owed by the player to act (2 after a Double)       |
| 39                     | draw pile size                                           |
| 40                     | round number (1-based)                                   |
| 41 + 5r … 45 + 5r      | seat r: chips, still in game (0/1), hand size,           |
|                        | is the player to act (0/1), is the dealer (0/1)          |

Nothing else: no other hand, no draw-pile order. `state()` is the global
view for centralised critics: every hand (18 counts per seat, absolute seat
order), the draw pile's counts, then the public block above as seen from
`player_0`.

`observation_space(agent)["observation"]` is a Box with per-index bounds
(`env.unwrapped.game.obs_low` / `obs_high`; `state_space` likewise) that hold
in every reachable state (the running total is shown clipped at −200, far
below any real game); every range includes 0. For libraries that need a Box observation, `envs.box_obs(env)` gives the float32
vector with the mask in `infos[agent]["action_mask"]` (see `docs/interop.md`).

## Rewards
Score = chips. When a player loses a round (−1 chip), every player still in
the game at that moment gets its chip change minus the mean change:
the loser −(m−1)/m, each other +1/m (m players in); players already out get
0. The event and, at the end, the final ranks go in `infos` (below).

## Infos
The keys and value types every cardzoo env shares, and the readable
`env.unwrapped.last_event`, are described in `help(envs.adapter)`. What they
hold in Neu, and Neu's own event facts:

| key             | value                                                          |
|-----------------|----------------------------------------------------------------|
| `eliminated`    | 1 if this agent is out of the game, else 0; an eliminated player stays in `agents` until the end|
| `scored`        | 1 on the step that ends a round (someone loses a chip), else 0                            |
| `scores`        | running scores per seat (chips)                              |
| `final_ranks`   | rank per seat at the end of the game (1 = winner; players who went out rank by when they went out); all 0 before    |
| `round_loser`   | seat that lost the round and paid a chip; −1 = no event        |
| `round`         | the round that ended (1-based); 0 = no event                   |
| `total`         | the total the loser could not play on; 0 = no event            |

## Rule options
| option  | default      | meaning |
|---------|--------------|---------|
| `rules` | `"standard"` | `"standard"`: RULES.md §3 (3 chips each, 3-card hands, the 58-card deck). `"small"`: the small preset (RULES.md "Neu, small preset"): two players only, 1 chip each (one round decides), 2-card hands, a 7-card deck (50 50 10 −10 101 Pass Double) used once (no reshuffle: with the pile empty nobody draws); small enough to solve exactly (`python -m experiments.solve --game neu`). The observation layout and action space are those of the standard game. |

## Decisions from RULES.md [D]
* Seats: "clockwise" is increasing seat index.
* Round 1: `player_0` deals and plays first.
* When the draw pile is empty, the played cards except the last are
  shuffled into a new pile; with nothing to shuffle, no card is drawn.
* The total may go below 0.
* A Pass, Turn or Shot as the *second* of two plays just has its normal effect.
* Rewards are zero-sum per scoring event (see Rewards).
* A player eliminated before the end stays in `agents` until the game ends:
  never selected, all-zero mask, reward 0; every agent is terminated
  together at the end (PettingZoo classic's convention).
* The loser deals the next round and plays first; if the loser is out, the
  next player still in (clockwise) does.

## Stacked deals
`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "draw_pile": [...]}})`
fixes the first round: three cards per seat, and the top of the draw pile,
top first. Cards the deal does not name are shuffled (with `seed`) under the
named ones. A deal that does not fit the 58-card deck raises ValueError.
Later rounds are dealt from the seeded RNG.

## Bad input
As in every cardzoo env (`help(envs.adapter)`): a masked-out action raises
ValueError in `raw_env` and ends an `env()` game with −1 for the offender.

## Version history
* v0: first release.
"""

from envs.adapter import make_env_api
from envs.neu import Neu

raw_env, env, parallel_env = make_env_api(Neu, __name__)
