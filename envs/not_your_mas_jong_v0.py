"""Not Your Ma's Jong — draw, discard and steal to build three sets and a pair.

Rules: [docs/RULES.md §4](../RULES.md#4-not-your-mas-jong-not_your_mas_jong).
Engine: `envs/not_your_mas_jong.py`.

    from envs import not_your_mas_jong_v0
    env = not_your_mas_jong_v0.env(num_players=4)     # 3 or 4 players, default 4 (two: rules="small")

| Import             | `from envs import not_your_mas_jong_v0`                    |
|--------------------|------------------------------------------------------------|
| Actions            | Discrete(31)                                               |
| Parallel API       | `parallel_env()` (see `envs.parallel`)                     |
| Manual control     | `python -m experiments.play --game not_your_mas_jong`      |
| Agents             | `player_0 … player_{n-1}`                                  |
| Observation shape  | (53 + 54·num_players,) float32, plus an int8 mask          |
| State shape        | (53 + 81·num_players,)                                     |

75 cards: five suits (Red, Blue, Green, Seasons, Emotions), ranks 1–5, three
copies each. Each player starts with 10 tokens. The Ma (dealer) gets 11 cards,
the others 10, and the Ma discards first; then, in seat order, each player
draws one card and discards one. A *set* is three identical cards or three
consecutive ranks of one suit (no wrap-around); a *pair* is two identical
cards. Three sets and a pair (11 cards, locked sets included) win the round.
A discard can be stolen to win, or to complete a set with two cards from the
hand: the set is laid face up and locked, the stealer discards, and play goes
on after the stealer, skipping the players in between. The winner is paid
tokens; the Ma passes to the next seat each round.

## Card notation (stacked deals, rendering)
Card types are indexed 0–24 as 5·suit + (rank − 1):
| index   | cards                                                     |
|---------|-----------------------------------------------------------|
| 0 – 4   | `Red 1` … `Red 5` (also `R1` … `R5`)                      |
| 5 – 9   | `Blue 1` … `Blue 5` (also `B1` …)                         |
| 10 – 14 | `Green 1` … `Green 5` (also `G1` …)                       |
| 15 – 19 | `Spring`, `Summer`, `Autumn`, `Winter`, `Solstice`        |
| 20 – 24 | `Love`, `Joy`, `Anger`, `Sorrow`, `Fear`                  |
Names are case-insensitive; `Seasons 2` / `Emotions 4` name a card by rank.

## Action space
| index   | name                           | legal when                                          |
|---------|--------------------------------|-----------------------------------------------------|
| 0 … 24  | `discard <card>`               | discard phase, and the card type is in the hand     |
| 25      | `pass`                         | steal decision (always offered then)                |
| 26      | `steal win`                    | steal decision, and the discard completes the hand  |
| 27      | `steal identical`              | steal decision, and the hand holds two of the card  |
| 28      | `steal as lowest`              | rank ≤ 3 and the hand holds rank+1 and rank+2       |
| 29      | `steal as middle`              | 2 ≤ rank ≤ 4 and the hand holds rank−1 and rank+1   |
| 30      | `steal as highest`             | rank ≥ 3 and the hand holds rank−2 and rank−1       |
(28–30: same suit as the discard.) Names do not depend on the seat;
`env.unwrapped.action_name(a)` / `action_from_name("discard Red 3")` translate, and
`env.unwrapped.explain_action(a)` says what a legal move does now.

## Turn order and steal decisions
In the *discard phase* the player to act discards. Then the other players
decide on that card one at a time, in seat order after the discarder (the
*steal phase*). Who is asked is the rule option `steal_phase`:

* `"every_player"` (default): every other player decides on every discard.
  A player with no legal steal gets a mask with only `pass`. The order of
  decisions is the same whatever the hands hold, so it tells nothing.
* `"eligible"`: only players holding a legal steal on the card are asked, and
  a discard nobody can use costs no agent steps. Faster, but it leaks: any
  program that watches `agent_selection` (or who acts next) learns which seats
  can steal that card, i.e. that they hold two of it or its sequence
  neighbours, or that it would complete their hand.

Cost of `"every_player"`, measured over whole games with every seat random
(100 games) or heuristic (30 games): medians of steps per game, and the median
rate of 3 runs, on 2 CPU cores shared with other test and training processes
(load average 15–18, so the rates are rough; two such runs differed by up to
a factor of 2):

| players, play | agent steps per game, eligible → every_player | steps/s, eligible → every_player | games/s |
|---------------|-----------------------------------------------|----------------------------------|---------|
| 4, random     | 446 → 1,302 (×2.9)                            | 13,100 → 20,100                  | 29 → 15 |
| 4, heuristic  | 214 → 544 (×2.5)                              | 3,830 → 6,520                    | 18 → 12 |
| 3, random     | 532 → 1,311 (×2.5)                            | 12,700 → 13,200                  | 24 → 10 |
| 3, heuristic  | 186 → 394 (×2.1)                              | 1,910 → 4,860                    | 10 → 12 (noise) |

The added steps are pass-only decisions, cheap for the engine and for agents
(the heuristic answers a forced move at once), so a whole game takes up to
about 2.5 times as long, while there are 2–3 times as many agent steps.

Decisions are hidden: no observation shows another player's decision. When
all have answered, the claims are resolved: a claim by a player whom the card
completes is a win by steal and beats every set claim; among equal claims the
player nearest after the discarder gets the card. With no claims, the next
player draws; a complete hand right after drawing wins at once.

## Observation (seat-relative: "seat r" is r seats after the observer)
| index                  | meaning                                                          |
|------------------------|------------------------------------------------------------------|
| 0 … 24                 | own concealed hand: count of each card type                      |
| 25 … 49                | discard waiting for steal decisions: one-hot (all 0 otherwise)   |
| 50                     | phase: 0 = discard, 1 = steal decision                           |
| 51                     | round number (1-based; extra rounds continue the count)          |
| 52                     | cards left in the draw pile                                      |
| 53 + 54r + 0 … 24      | seat r: its discard pile, count per card type                    |
| 53 + 54r + 25 … 49     | seat r: cards in its locked sets, count per card type            |
| 53 + 54r + 50          | seat r: tokens                                                   |
| 53 + 54r + 51          | seat r: concealed cards held                                     |
| 53 + 54r + 52          | seat r: is the Ma (0/1)                                          |
| 53 + 54r + 53          | seat r: made the discard waiting for steal decisions (0/1)       |
Nothing else: no other hand, no draw-pile order, no other player's steal
decision. The offsets are exported by the engine module (`OBS_*`, `SEAT_*`).
`state()` is the global view for centralised critics: every concealed hand
(25 counts per seat, absolute order), the draw pile's counts, the block above
from 25 on as seen by `player_0`, each seat's pending steal decision on the
current discard (action − 25, −1 when none), and the seat to act (one-hot).

`observation_space(agent)["observation"]` is a Box with per-index bounds
(`env.unwrapped.game.obs_low` / `obs_high`; `state_space` likewise) that hold
in every reachable state; every range includes 0. For
libraries that need a Box observation, `envs.box_obs(env)` gives the float32
vector with the mask in `infos[agent]["action_mask"]` (see `docs/interop.md`).

## Rewards
Score = tokens. At each payment every player gets its token change minus the
mean change, so rewards sum to zero. Payments (the winner is paid):
| winner | won by | Ma pays | every other player pays |
|--------|--------|---------|-------------------------|
| Ma     | steal  | —       | 2 each                  |
| Ma     | draw   | —       | 4 each                  |
| not Ma | steal  | 2       | 1                       |
| not Ma | draw   | 4       | 2                       |
A round that ends on an empty draw pile gives an event with zero changes.
When a step ends a round and the next Ma wins on the deal, both rounds come
as one event (the second under the `then_*` keys). The event and, at the end,
the final ranks go in `infos` (below).

## Infos
The keys and value types every cardzoo env shares, and the readable
`env.unwrapped.last_event`, are described in `help(envs.adapter)`. What they
hold in Ma's Jong, and Ma's Jong's own event facts:

| key             | value                                                          |
|-----------------|----------------------------------------------------------------|
| `scored`        | 1 on the step that ends a round (a win or an empty draw pile), else 0                            |
| `scores`        | running scores per seat (tokens)                              |
| `final_ranks`   | rank per seat at the end of the game (1 = most tokens, ties share); all 0 before    |
| `round`         | the round that ended (1-based); 0 = no event                   |
| `result`        | 0 none, 1 win by draw, 2 win by steal, 3 exhausted (empty draw pile) |
| `winner`        | winning seat; −1 = none                                        |
| `ma`            | seat of that round's Ma; −1 = no event                         |
| `then_round`, `then_result`, `then_winner`, `then_ma` | the next round, when the same step also ends it (its Ma wins on the deal); absent values otherwise |

## Rule options
| option        | default          | meaning                                                          |
|---------------|------------------|------------------------------------------------------------------|
| `steal_phase` | `"every_player"` | who decides on each discard: every other player, or (`"eligible"`) only those holding a legal steal — see "Turn order and steal decisions" |
| `rules`       | `"standard"`     | `"standard"`: RULES.md §4. `"small"`: the small preset (RULES.md "Not Your Ma's Jong, small preset"): two players only (`num_players` may be left out), one round with no tie-break, Red 1–3 three times each and Red 4 twice (11 cards), hands of 4 (the Ma 5), a winning hand of one set and a pair, a draw pile of 2, and a deal that gives the Ma a complete hand dealt again; small enough to solve exactly (`python -m experiments.solve --game not_your_mas_jong`). The observation layout (for two seats) and the actions are the game's. |
RULES.md fixes 10 tokens each, the hand sizes and the round limits.

## Decisions from RULES.md [D]
* Seats: "right" / the next player is the next seat index.
* The Seasons cards are Spring, Summer, Autumn, Winter, Solstice and the
  Emotions cards Love, Joy, Anger, Sorrow, Fear (ranks 1–5 in that order).
* Sequences are allowed in every suit, Seasons and Emotions included; no
  wrap-around.
* `player_0` is the Ma of round 1; the Ma passes to the next seat each round.
* A player whose hand is complete right after drawing wins at once; so does
  a Ma dealt a complete hand, as a win by draw. (`reset()` cannot report it:
  the payment is made at once and its event comes with the first `step()`.)
* A steal that completes the stealer's hand is a win by steal, whichever way
  it is claimed.
* Steal decisions are taken in seat order after the discarder (by every
  other player, or by those who can steal: `steal_phase`), without seeing
  the others'; a winning steal beats a set steal; among equal claims
  the player nearest after the discarder gets the card. Mistaken steals are
  masked out, so the mistaken-call penalty never arises.
* An empty draw pile when a player must draw ends the round with no winner
  and no payment (the round still counts towards the limit).
* A player who cannot pay in full pays what they have.
* The game ends when a player has no tokens, or after 8 rounds (4 players) /
  9 rounds (3 players); however it ended, tied leaders then play extra rounds,
  all players seated, until the tie breaks, at most 3, after which the tie
  stands. A player with no tokens plays the extra rounds too and pays what it
  has, nothing. Observation index 51 keeps counting rounds through them.

## Stacked deals
`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "draw_pile": [...]}})`
fixes the first round: one hand per seat (`player_0` is the Ma and gets 11
cards, the others 10) and the top of the draw pile, top first. Cards the deal
does not name are shuffled (with `seed`) under the named ones. A deal that
does not fit the 75-card deck, has a hand of the wrong size or names an
unknown card raises ValueError saying so. Later rounds are dealt from the
seeded RNG.

## Bad input
As in every cardzoo env (`help(envs.adapter)`): a masked-out action raises
ValueError in `raw_env` and ends an `env()` game with −1 for the offender.

## Version history
* v0: first release.
"""

from envs.adapter import make_env_api
from envs.not_your_mas_jong import NotYourMasJong

raw_env, env, parallel_env = make_env_api(NotYourMasJong, __name__)
