"""Deadfall — a bluffing and counting game with a Pairs deck.

Rules: [docs/RULES.md §2](../RULES.md#2-deadfall-deadfall). Engine: `envs/deadfall.py`.

    from envs import deadfall_v0
    env = deadfall_v0.env(num_players=4)     # 2..7 players, default 4

| Import             | `from envs import deadfall_v0`                      |
|--------------------|-----------------------------------------------------|
| Actions            | Discrete(20)                                        |
| Parallel API       | `parallel_env()` (see `envs.parallel`)              |
| Manual control     | `python -m experiments.play --game deadfall`        |
| Agents             | `player_0 … player_{n-1}`                           |
| Observation shape  | (25 + 17·num_players,) float32, plus an int8 mask   |
| State shape        | (28·num_players + 15,)                              |

The deck has 55 cards: one 1, two 2s, …, ten 10s. Every hand, each player
antes 1 chip into the pot and is dealt 6 cards (7 with 2 players, 5 with 7);
the rest is set aside unseen. Door cards, placed face down and revealed
together, decide who starts. Then, clockwise from the starter, each player
either plays a card face up onto their own stack or calls **DEAD v** on a
value v shown by another player's top card, claiming that no hand at the
table (the caller's own included) holds a v. The call settles the hand: if
nobody holds a v the target pays the caller v chips and the caller takes the
pot, otherwise the caller pays the target v chips and the target takes the
pot. A game is `rounds` hands (default 10), fewer if a player cannot ante.

## Card notation (stacked deals, rendering)
A card is its rank: an integer 1 … 10 or a string "1" … "10".

## Hand structure
1. **Door layer 1.** Every player places one card face down, one at a time
   in seat order from `player_0`. Nobody's observation shows another
   player's face-down card until the whole layer is revealed; then the cards
   go onto the stacks and become the top cards. The single lowest card
   starts.
2. **Later layers** (when the lowest value is shared): every player with a
   card left adds one more, the same way. The lowest card of the new layer
   among *all* players starts; if that value is shared, the tied player with
   the lowest first door card starts; if still tied, another layer. Seed
   examples: 4456 then 3421 → the player of 6,1; 4456 then 3422 → the player
   of 5,2; 4456 then 2234 → a third layer.
3. **Play**, clockwise from the starter, until someone calls DEAD.

## Action space
| index    | name                     | legal when                                                   |
|----------|--------------------------|--------------------------------------------------------------|
| 0 … 9    | `play 1` … `play 10`     | the actor holds that rank. During the door phase this places |
|          |                          | the actor's face-down door card of the current layer.        |
| 10 … 19  | `DEAD 1` … `DEAD 10`     | play phase only, and some *other* player's top card shows    |
|          |                          | that rank. The target is the player showing it nearest to    |
|          |                          | the caller's right: seats i−1, i−2, … (mod n) from caller i. |

During the door phase only `play v` is offered. A player with an empty hand
(possible in the play phase) is offered only DEAD; DEAD is always available
in the play phase because every player has a door card on the table. A DEAD
call on a value the caller holds is legal (and always wrong).
`env.unwrapped.explain_action(a)` says what a legal move does now (who a DEAD call points at,
what it wins or costs).

## Observation (seat-relative: "seat r" is r seats clockwise from the observer)
| index                    | meaning                                                            |
|--------------------------|--------------------------------------------------------------------|
| 0 … 9                    | own hand: count of ranks 1 … 10                                    |
| 10 … 19                  | unseen copies of ranks 1 … 10: r − on the stacks − own hand −      |
|                          | own face-down door card (other hands, other face-down door cards,  |
|                          | set-aside cards)                                                   |
| 20                       | pot                                                                |
| 21                       | hand number (1-based)                                              |
| 22                       | phase: 0 door cards, 1 play                                        |
| 23                       | door layer (1-based; in the play phase, the number of layers used) |
| 24                       | own face-down door card of the current layer (rank, 0 if none)     |
| 25 + 17r + 0             | seat r: chips in front of the player                               |
| 25 + 17r + 1             | seat r: cards in hand                                              |
| 25 + 17r + 2             | seat r: top card (rank, 0 if none)                                 |
| 25 + 17r + 3             | seat r: first door card (rank, 0 if none)                          |
| 25 + 17r + 4             | seat r: is the player to act (0/1)                                 |
| 25 + 17r + 5             | seat r: started this hand (0/1; 0 for all during the door phase)   |
| 25 + 17r + 6             | seat r: has a face-down door card waiting this layer (0/1)         |
| 25 + 17r + 7 … + 16      | seat r: stack, count of ranks 1 … 10 (all played cards are public) |

Nothing else: no other hand, no other face-down door card, no set-aside
card. The layout constants are exported by `envs.deadfall` (`OBS_*`,
`SEAT_*`, `SEAT_BLOCK`). At the end of the game the last hand's table stays
on view with the pot at 0. `state()` is the global view for centralised
critics: every hand (10 counts per seat, absolute seat order), the set-aside
counts, every face-down door card (rank or 0, per seat), then indices 20 …
of `player_0`'s observation.

`observation_space(agent)["observation"]` is a Box with per-index bounds
(`env.unwrapped.game.obs_low` / `obs_high`; `state_space` likewise) that hold
in every reachable state; every range includes 0. For
libraries that need a Box observation, `envs.box_obs(env)` gives the float32
vector with the mask in `infos[agent]["action_mask"]` (see `docs/interop.md`).

## Rewards
Score = chips. Only a DEAD call changes scores: it settles the hand, and its
score event carries each player's net chip change **over the whole hand,
ante included** (−1 ante for everyone, then ±v for caller and target, plus
the pot for the winner of the call). These changes sum to zero, so each
player's reward is exactly its own chip change for the hand, and the
cumulative reward over a game equals the final chips minus
`starting_chips`. Antes are no separate event: until a hand is settled a
player's ante in the pot still counts in `env.unwrapped.game.scores` (chips
in front + 1), so `infos["scores"]` always equals the starting chips plus
the sum of `infos["score_changes"]`; the observation shows the chips
actually in front of each player and the pot. The call and, at the end, the
final ranks go in `infos` (below).

## Infos
The keys and value types every cardzoo env shares, and the readable
`env.unwrapped.last_event`, are described in `help(envs.adapter)`. What they
hold in Deadfall, and Deadfall's own event facts:

| key             | value                                                          |
|-----------------|----------------------------------------------------------------|
| `scored`        | 1 on the step that settles a hand (a DEAD call), else 0                            |
| `scores`        | running scores per seat (chips, a player's ante counted until the hand is settled)                              |
| `final_ranks`   | rank per seat at the end of the game (1 = most chips, ties share); all 0 before    |
| `caller`        | seat that called DEAD; −1 = no event                           |
| `target`        | seat whose top card was called; −1 = no event                  |
| `value`         | value called (1–10); 0 = no event                              |
| `call_right`    | 1 if no hand held the value (the caller wins), else 0          |
| `copies_in_hands` | how many of the value the revealed hands held                |
| `paid`          | chips actually paid between caller and target                  |
| `pot`           | chips in the pot taken by the winner of the call               |
| `hand`          | the hand that ended (1-based); 0 = no event                    |

## Rule options
| option           | default | meaning                                      |
|------------------|---------|----------------------------------------------|
| `starting_chips` | 50      | chips each player starts with (integer 1 … 100,000) |
| `rounds`         | 10      | hands in a game (integer 1 … 100,000)        |
| `rules`          | `"standard"` | `"standard"`: RULES.md §2. `"small"`: the small preset (RULES.md "Deadfall, small preset"): two players only, one hand (`rounds` fixed at 1), ranks 1–4 only (10 cards), 2-card hands, 6 cards set aside; small enough to solve exactly (`python -m experiments.solve --game deadfall`). The observation layout and action space are those of the standard game. |

## Decisions from RULES.md [D]
* Seats: "clockwise" / "to the right of the dealer" is increasing seat
  index; "the caller's right" is therefore seat i−1, then i−2, ….
* Door cards: each player picks in seat order from `player_0`, unseen by
  the others until the layer is revealed.
* A player with no card left adds nothing to a door layer and cannot be
  lowest in it; if no tied player can add a card, the tied player nearest
  clockwise from `player_0` — the lowest seat index among them, `player_0`
  itself included — starts.
* A player who cannot pay in full pays what they have.
* A game is `rounds` hands (default 10). Before each hand every player
  antes 1; if some player has no chip to ante, the game ends instead (that
  hand is not played). A player may ante their last chip and play the hand.
* Rewards are zero-sum per scoring event (see Rewards).

## Stacked deals
`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "set_aside": [...]}})`
fixes the first hand: one list per seat of exactly 6 cards (7 with 2
players, 5 with 7). `set_aside` is optional; if given it must list all
55 − n·h cards not dealt. A deal that names an unknown card, a wrong
number of hands or cards, or more copies of a rank than the deck holds
raises ValueError saying so. Later hands are dealt from the seeded RNG.

## Bad input
As in every cardzoo env (`help(envs.adapter)`): a masked-out action raises
ValueError in `raw_env` and ends an `env()` game with −1 for the offender.
Bad rule options raise ValueError naming the expected values.

## Version history
* v0: first release.
"""

from envs.adapter import make_env_api
from envs.deadfall import Deadfall

raw_env, env, parallel_env = make_env_api(Deadfall, __name__)
