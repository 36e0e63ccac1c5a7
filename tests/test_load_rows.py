"""`VectorEnv.load_rows`: readable engine states put into batched tables, then played on both ways.

Each case keeps 16 tables of a vector env paired with 16 readable engines. Every table is
first loaded with an engine played a random number of random legal moves from a random
seed. Then random legal moves go to both, and the seat to act, its observation and mask,
the rewards, the scores and the global state (at every step), every seat's observation
(after each load and every few steps), done and the final scores and ranks must agree, to
the end of each game. Along the way random groups of tables are loaded again: with other
tables' engines (swapped mid-game), with fresh random-prefix engines, with worlds drawn
by `envs.belief.sample_world` from an engine's information state, or with one engine for the
whole group (read once, its table copied). Every step also checks that ``score_events``
moves exactly when the engine's step has a score event, and half the steps move the tables
in two groups (``step(actions, rows=...)``). A table whose game ends
must start ``table_seed(row, k)``, the game it would have started anyway, and is paired
with a fresh engine from that seed. So every case loads 1,500 states or more (about 20,000
in all; `scaled` x40 under the ``large`` profile), and plays chance events after the load:
the engines' PCG64 streams are copied exactly, so later deals and reshuffles agree too.
Two states random play hardly reaches get their own test: a Neu draw pile that runs out
(the played pile is reshuffled in its order) and a Ma's Jong win on the deal (paid with the
first step).

The checks can fail: most loads must change the table's global state, and loaders broken
by hand were caught (Neu's without ``owed`` or with its played pile sorted, Not For Me's
without ``round_steps``, Ma's Jong's without ``final_round`` or the win on the deal, and
the stream left uncopied).
"""

from __future__ import annotations

import copy
import importlib
import random

import numpy as np
import pytest

pytest.importorskip("numba")

import envs  # noqa: E402
from envs.belief import sample_world  # noqa: E402
from envs.engine import zero_sum_rewards  # noqa: E402
from envs.vector import KERNELS  # noqa: E402
from tests.conftest import player_counts, scaled  # noqa: E402
from tests.helpers import random_move, same, stuck_neu_view  # noqa: E402

BATCHED = [g for g in envs.GAMES if g in KERNELS]
TABLES = 16
FEED = 60  # a fresh engine is the feeder moved on by fewer random moves than this


def load_counts(game: str) -> list[int]:
    """2 and 4 players, or the fewest the game allows (Ma's Jong: 3) and 4."""
    counts = player_counts(game)
    return sorted({max(2, counts.start), 4})


# Rule options besides the defaults: short games and truncated rounds (more game ends), the other
# steal phase, the small preset.
VARIANTS = [
    ("deadfall", 4, {"rounds": 3}),
    ("not_for_me", 2, {"rounds": 2, "max_round_steps": 30}),
    ("not_your_mas_jong", 4, {"steal_phase": "eligible"}),
    ("neu", 2, {"rules": "small"}),
    ("deadfall", 2, {"rules": "small"}),
    ("not_for_me", 2, {"rules": "small"}),
    ("not_your_mas_jong", 2, {"rules": "small"}),
]
CASES = [(g, n, {}) for g in BATCHED for n in load_counts(g)] + VARIANTS
# One round (hand) from one deal, never reshuffled: nothing after the load takes the stream (Not For
# Me's draws come from the loaded pile, in its order).
NO_LATER_CHANCE = [(g, 2, {"rules": "small"}) for g in ("neu", "deadfall", "not_for_me", "not_your_mas_jong")]
STEPS = scaled(2000)


class Loaded:
    """A vector env whose tables are loaded with readable engines, and those engines, kept in step."""

    def __init__(self, game: str, num_players: int, options: dict, seed: int, worlds: list | None = None):
        self.cls, self.n, self.options = envs.engine_class(game), num_players, options
        self.rnd = random.Random(seed)
        self.venv = envs.vector_env(game, TABLES, num_players, seed, **options)
        self.venv.reset()
        self.games = [1] * TABLES  # games started at each table
        self.loaded = [True] * TABLES  # does the table play a loaded game (not one of its own)?
        self.loads = self.changed = self.finished = self.chance = 0
        self.engines: list = [None] * TABLES
        self.feeder = None
        self.load(list(range(TABLES)), worlds or [self.fresh() for _ in range(TABLES)])

    def fresh(self):
        """An engine played a random number of random legal moves from a random seed: a copy of
        the feeder, an engine that plays game after game, moved on a few random moves first (so
        that the copies come from every stage of a game, however long the game)."""
        for _ in range(self.rnd.randrange(1, FEED)):
            if self.feeder is None or self.feeder.game_over:
                self.feeder = self.cls(self.n, **self.options)
                self.feeder.reset(np.random.default_rng(self.rnd.randrange(2**32)))
            else:
                self.feeder.step(random_move(self.feeder.legal_mask(), self.rnd))
        return self.fresh() if self.feeder.game_over else copy.deepcopy(self.feeder)

    def load(self, rows: list[int], worlds: list) -> None:
        before = self.venv.state()[rows]
        obs, mask, seat = self.venv.load_rows(rows, worlds)
        seen = set()
        for r, w in zip(rows, worlds):
            # An engine loaded into several tables: each table plays on from its own copy.
            self.engines[r], self.loaded[r] = (copy.deepcopy(w) if id(w) in seen else w), True
            seen.add(id(w))
        self.loads += len(rows)
        self.changed += int((self.venv.state()[rows] != before).any(axis=1).sum())
        self.check(obs, mask, seat, every_seat=True)
        for got, want in zip(self.venv.views(), (obs, mask, seat)):
            np.testing.assert_array_equal(got, want)

    def reload(self) -> None:
        """Load a random group of tables again: swapped engines, fresh ones, sampled worlds."""
        rnd = self.rnd
        rows = rnd.sample(range(TABLES), rnd.randint(1, TABLES))
        donors = rnd.sample(rows, len(rows))
        worlds = []
        if rnd.random() < 0.1:  # one engine for the whole group (as search loads a world per move)
            self.load(rows, [self.fresh()] * len(rows))
            return
        for d in donors:
            u = rnd.random()
            if u < 0.15:
                worlds.append(self.fresh())
            elif u < 0.45:
                e = self.engines[d]
                info = e.information_state(rnd.randrange(self.n))
                worlds.append(sample_world(info, np.random.default_rng(rnd.randrange(2**32))))
            else:
                worlds.append(self.engines[d])
        self.load(rows, worlds)

    def check(self, obs, mask, seat, every_seat: bool = False) -> None:
        venv, es = self.venv, self.engines
        same("seat", seat, np.array([e.current_player for e in es]))
        same("observation", obs, np.array([e.observe(e.current_player) for e in es]))
        same("mask", mask, np.array([e.legal_mask() for e in es]))
        same("state", venv.state(), np.array([e.state() for e in es]))
        same("scores", venv.scores(), np.array([e.scores for e in es]))
        if every_seat:
            for k in range(self.n):
                same(f"observation of seat {k}", venv.observe(k), np.array([e.observe(k) for e in es]))

    def step(self, every_seat: bool) -> None:
        venv, rnd = self.venv, self.rnd
        actions = np.array([random_move(e.legal_mask(), rnd) for e in self.engines])
        events = venv.score_events()
        if rnd.random() < 0.5:
            obs, mask, seat, rewards, done = venv.step(actions)
        else:  # in two groups of tables, in a random order: the tables of a step are independent
            order = np.array(rnd.sample(range(TABLES), TABLES))
            parts = [venv.step(actions[part], rows=part) for part in np.split(order, [rnd.randrange(TABLES + 1)])]
            obs, mask, seat, rewards, done = (np.empty_like(np.concatenate([p[k] for p in parts])) for k in range(5))
            for k, out in enumerate((obs, mask, seat, rewards, done)):
                out[order] = np.concatenate([p[k] for p in parts])
            for got, want in zip(venv.views(), (obs, mask, seat)):
                np.testing.assert_array_equal(got, want)
        scored = (venv.score_events() != events) | done
        want = np.zeros_like(rewards)
        for i, e in enumerate(self.engines):
            position = e.rng.bit_generator.state["state"]["state"]
            event = e.step(int(actions[i]))
            self.chance += self.loaded[i] and e.rng.bit_generator.state["state"]["state"] != position
            assert scored[i] == (event is not None), f"table {i}: score_events moved {scored[i]}, the engine's event {event}"
            if event is not None:
                want[i] = zero_sum_rewards(event)
            assert done[i] == e.game_over, f"table {i}: done {done[i]}, the engine's game_over {e.game_over}"
            if e.game_over:
                assert list(venv.final_scores[i]) == list(e.scores), i
                assert list(venv.final_ranks[i]) == list(e.ranks()), i
                self.finished += 1
                # The table goes on with the game it would have started anyway.
                self.engines[i] = self.cls(self.n, **self.options)
                self.engines[i].reset(np.random.default_rng(venv.table_seed(i, self.games[i])))
                self.games[i] += 1
                self.loaded[i] = False
        same("rewards", rewards, want)
        self.check(obs, mask, seat, every_seat)


@pytest.mark.parametrize("game, num_players, options", CASES, ids=lambda x: str(x).replace(" ", ""))
def test_loaded_tables_play_on_as_the_engines(game, num_players, options):
    run = Loaded(game, num_players, options, seed=7 * num_players + len(options))
    for step in range(STEPS):
        if run.rnd.random() < 0.1:
            run.reload()
        run.step(every_seat=step % 8 == 0)
    assert run.loads >= 1000
    assert run.changed >= 0.6 * run.loads  # most loads put another state there (the others: a table's own engine)
    assert run.finished >= 3  # whole loaded games were compared, and the tables that restarted after them
    if (game, num_players, options) not in NO_LATER_CHANCE:
        assert run.chance >= 20  # reshuffles or deals drawn in loaded games, after the load


def test_neu_reshuffles_a_loaded_played_pile_in_its_order():
    """Neu shuffles the played cards but the last, in play order, into a new draw pile when the
    pile runs out, which random play almost never reaches (rounds end first): worlds whose
    draw pile was moved onto the played pile card by card reshuffle soon after the load, and
    every table must draw what its engine draws."""
    cls, rnd = envs.engine_class("neu"), random.Random(2)
    worlds = []
    for seed in range(TABLES):
        e = cls(4)
        e.reset(np.random.default_rng(seed))
        for _ in range(rnd.randrange(4)):
            e.step(random_move(e.legal_mask(), rnd))
        while len(e.draw) > 1:
            card = e.draw.pop(0)  # from the bottom of the pile
            e.played.append(card)
            e.played_counts[card] += 1
        worlds.append(e)
    run = Loaded("neu", 4, {}, seed=5, worlds=worlds)
    reshuffled = set()
    for _ in range(12):
        run.step(every_seat=True)
        reshuffled |= {i for i, e in enumerate(run.engines) if run.loaded[i] and len(e.draw) > 10}
    assert len(reshuffled) >= TABLES // 2


def test_a_mas_jong_win_on_the_deal_is_paid_with_the_first_step_after_loading():
    """A Ma dealt a complete hand wins before anyone acts, and the engine pays it out with its
    first step (``_pending_event``); a world loaded before that step must pay the same."""
    game = "not_your_mas_jong"
    ref = envs.module(game)
    names = list(ref.raw_env.engine_cls.card_names.values())
    ma = ["Red 1"] * 3 + ["Red 2", "Red 3", "Red 4"] + ["Blue 1"] * 3 + ["Green 5"] * 2
    rest = sorted((names[k] for k in envs.engine_class(game).deck), key=names.index)
    for card in ma:
        rest.remove(card)
    hands = [ma] + [rest[10 * s : 10 * s + 10] for s in range(3)]
    worlds = []
    for seed in range(TABLES):
        e = envs.engine_class(game)(4)
        e.reset(np.random.default_rng(seed), deal={"hands": hands})
        assert e._pending_event is not None  # the win, still to be paid out
        worlds.append(e)
    run = Loaded(game, 4, {}, seed=1, worlds=worlds)
    assert (run.venv.scores() != 10).any()  # the tokens already moved
    run.step(every_seat=True)  # the rewards of the first step hold the win
    for _ in range(30):
        run.step(every_seat=False)


@pytest.mark.parametrize("game", BATCHED)
def test_another_bit_generator_agrees_up_to_the_next_chance_event(game):
    """A world on a stream that is not PCG64 cannot be copied: the table draws from a stream
    seeded by a copy of it, identical up to the engine's next draw; the engine's stream is
    left as it was."""
    n = load_counts(game)[-1]
    cls = envs.engine_class(game)
    rnd = random.Random(3)
    agreed = 0
    for seed in range(4):
        e = cls(n)
        e.reset(np.random.Generator(np.random.Philox(seed)))
        for _ in range(rnd.randrange(60)):
            e.step(random_move(e.legal_mask(), rnd))
            if e.game_over:
                break
        if e.game_over:
            continue
        position = str(e.rng.bit_generator.state)
        venv = envs.vector_env(game, 4, n, seed=seed)
        venv.reset()
        obs, mask, seat = venv.load_rows([2], [e])
        assert str(e.rng.bit_generator.state) == position
        while not e.game_over and str(e.rng.bit_generator.state) == position:
            assert seat[2] == e.current_player
            np.testing.assert_array_equal(obs[2], e.observe(e.current_player))
            np.testing.assert_array_equal(mask[2], e.legal_mask())
            np.testing.assert_array_equal(venv.state()[2], e.state())
            actions = np.array([random_move(m, rnd) for m in mask])
            e.step(int(actions[2]))
            obs, mask, seat, *_ = venv.step(actions)
            agreed += 1
    assert agreed >= 20


# Per game: a player count, and rule options other than the defaults at that count.
OTHER_RULES = {
    "neu": (2, {"rules": "small"}),
    "deadfall": (2, {"rounds": 3}),
    "not_for_me": (2, {"rounds": 1}),
    "not_your_mas_jong": (3, {"steal_phase": "eligible"}),
}


@pytest.mark.parametrize("game", BATCHED)
def test_bad_input_is_a_clear_error_and_changes_nothing(game):
    n, other_rules = OTHER_RULES[game]
    cls = envs.engine_class(game)
    venv = envs.vector_env(game, 4, n, seed=1)

    def world(**rules):
        e = cls(n, **rules)
        e.reset(np.random.default_rng(5))
        return e

    good = world()
    with pytest.raises(RuntimeError, match="reset"):
        venv.load_rows([0], [good])
    venv.reset()
    rnd = np.random.default_rng(0)
    for _ in range(5):  # away from the start, where loading `good` would change little
        venv.step(np.array([rnd.choice(np.flatnonzero(m)) for m in venv.views()[1]]))
    before = venv.state(), *venv.views(), venv._st.rng.copy()

    def refused(match, rows, worlds, error=ValueError):
        with pytest.raises(error, match=match) as e:
            venv.load_rows(rows, worlds)
        assert "\n" not in str(e.value)
        for got, want in zip((venv.state(), *venv.views(), venv._st.rng), before):
            np.testing.assert_array_equal(got, want)  # nothing moved

    refused("differ in length", [0, 1], [good])
    refused(r"in \[0, 4\)", [4], [good])
    refused(r"in \[0, 4\)", [-1], [good])
    refused(r"distinct; repeated: \[1\]", [1, 1], [good, world()])
    refused("table indices", [0.0], [good])
    refused("table indices", [[0]], [good])
    refused("sequence of engines", [0], good)
    other_game = next(g for g in BATCHED if g != game)
    refused("not a", [0], [envs.engine_class(other_game)(max(n, 3))])
    refused(f"has {n + 1} players", [0], [cls(n + 1)])
    refused("other rule options", [0, 1], [good, world(**other_rules)])
    refused("reset it first", [0], [cls(n)])
    over = world()
    play = random.Random(0)
    while not over.game_over:
        over.step(random_move(over.legal_mask(), play))
    refused("game is over", [2, 0], [good, over])
    no_stream = world()
    no_stream.rng = None
    refused("no random stream", [0], [no_stream])
    stuck = world()
    stuck.hands[stuck.current_player] = [0] * len(stuck.hands[0])
    stuck._mask = None
    if not stuck.legal_mask().any():  # (Not For Me always has a pass)
        refused(r"worlds\[1\]: the player to act has no legal move", [0, 1], [good, stuck])
    # An engine the checks pass but the loader cannot read: the rows loaded before it are put back.
    broken = world()
    broken.hands = None
    refused(None, [0, 1], [good, broken], error=TypeError)
    # And a good load does change the table, to the engine's state.
    obs, mask, seat = venv.load_rows(np.array([3]), [good])
    assert not np.array_equal(venv.state()[3], before[0][3])
    np.testing.assert_array_equal(venv.state()[3], good.state())
    np.testing.assert_array_equal(obs[3], good.observe(good.current_player))
    venv.load_rows([], [])  # nothing to load is fine


def test_stepping_some_tables_refuses_bad_rows_and_moves_nothing():
    venv = envs.vector_env("neu", 4, 4, seed=3)
    _, mask, _ = venv.reset()
    legal = mask.argmax(axis=1)
    before = venv.state(), *venv.views()
    for rows, actions, words in [([1, 1], legal[[1, 1]], r"distinct; repeated: \[1\]"), ([4], [0], r"in \[0, 4\)"),
                                 ([0.5], [0], "table indices"), ([0, 2], legal[[0]], r"shape \(2,\)"),
                                 ([3], [int(np.flatnonzero(mask[3] == 0)[0])], r"at table\(s\) 3 ")]:
        with pytest.raises(ValueError, match=words):
            venv.step(np.asarray(actions), rows=rows)
        for got, want in zip((venv.state(), *venv.views()), before):
            np.testing.assert_array_equal(got, want)
    obs, mask2, seat, rewards, done = venv.step(legal[[2]], rows=[2])
    assert obs.shape == (1, venv.obs_size) and rewards.shape == (1, 4)
    after = venv.state()
    assert (after[[0, 1, 3]] == before[0][[0, 1, 3]]).all() and (after[2] != before[0][2]).any()


@pytest.mark.parametrize("game", [g for g in BATCHED if hasattr(importlib.import_module(KERNELS[g]), "pack_row")])
def test_packed_worlds_give_the_tables_load_row_gives(game):
    """load_rows reads many worlds in one compiled call (pack_row, unpack_rows): every table
    field is what the one-engine reader (load_row) writes, over states along random games,
    sampled worlds and Ma's Jong's steal phase included."""
    module = importlib.import_module(KERNELS[game])
    for n in player_counts(game):
        e = envs.engine_class(game)(n)
        e.reset(np.random.default_rng(n))
        rnd, worlds = random.Random(n), []
        while len(worlds) < 300:
            if e.game_over:
                e.reset(np.random.default_rng(rnd.randrange(2**32)))
            if rnd.random() < 0.5:
                worlds.append(copy.deepcopy(e) if rnd.random() < 0.5 else
                              sample_world(e.information_state(rnd.randrange(n)), np.random.default_rng(len(worlds))))
            e.step(random_move(e.legal_mask(), rnd))
        packed, one = (envs.vector_env(game, len(worlds), n, seed=1) for _ in range(2))
        packed.reset(), one.reset()
        rows = np.arange(len(worlds))
        packed.load_rows(rows, worlds)
        for t, w in enumerate(worlds):
            module.load_row(one._st, t, w)
        for f in packed._table_fields:
            if packed._st._fields[f] != "rng":  # the streams are copied apart from both readers
                same(f"{game} {n}p {packed._st._fields[f]}", packed._st[f], one._st[f])


SAMPLE_CASES = [(g, n, {}) for g in BATCHED for n in load_counts(g)] + [
    ("not_your_mas_jong", 4, {"steal_phase": "eligible"}), ("neu", 2, {"rules": "small"}),
    ("deadfall", 2, {"rules": "small"})]


@pytest.mark.parametrize("game, num_players, options", SAMPLE_CASES, ids=lambda x: str(x).replace(" ", ""))
def test_sampled_rows_are_sample_worlds_loaded(game, num_players, options):
    """sample_rows draws the worlds of sample_world straight into tables (a packed world redealt
    in compiled code; Ma's Jong with steal_phase="eligible" loads sample_world's engines): every table field
    is what load_rows of sample_world's worlds writes from the same generator, the generator
    then draws what it would have, and the other tables are left alone. Views from every seat,
    the player to act's own included (Neu then redraws the deals that leave it no card)."""
    e = envs.engine_class(game)(num_players, **options)
    e.reset(np.random.default_rng(7))
    rnd = random.Random(7)
    sampled, loaded = (envs.vector_env(game, 12, num_players, seed=3, **options) for _ in range(2))
    sampled.reset(), loaded.reset()
    rows = np.array([1, 4, 5, 9, 10])
    checked = 0
    while checked < scaled(40):
        if e.game_over:
            e.reset(np.random.default_rng(rnd.randrange(2**32)))
        if rnd.random() < 0.3:
            info = e.information_state(rnd.randrange(num_players))
            seed = rnd.randrange(2**32)
            mine, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
            before = [np.array(sampled._st[f], copy=True) for f in sampled._table_fields]
            views = sampled.sample_rows(rows, info, mine)
            expected = loaded.load_rows(rows, [sample_world(info, theirs) for _ in rows])
            for f, was in zip(sampled._table_fields, before):
                name = f"{game} {num_players}p {sampled._st._fields[f]}"
                same(name, sampled._st[f][rows], loaded._st[f][rows])
                rest = np.setdiff1d(np.arange(12), rows)
                same(name + " (other tables)", sampled._st[f][rest], was[rest])
            for got, want in zip(views, expected):
                same(f"{game} views", got[rows], want[rows])
            assert mine.integers(2**62) == theirs.integers(2**62) and mine.random() == theirs.random()
            loaded.load_rows(np.arange(12), [copy.deepcopy(e) for _ in range(12)])  # both start over alike
            sampled.load_rows(np.arange(12), [copy.deepcopy(e) for _ in range(12)])
            checked += 1
        e.step(random_move(e.legal_mask(), rnd))


def test_sampled_rows_refuse_a_view_no_redeal_can_serve_and_change_nothing():
    """A Neu view in which every unseen card is a 10 at a total of 101, seen from a seat not to
    act: no redeal gives the player to act a card, so sample_rows raises sample_world's error."""
    e = envs.engine_class("neu")(4)
    e.reset(np.random.default_rng(9))
    _, info = stuck_neu_view(e)
    venv = envs.vector_env("neu", 4, 4, seed=0)
    venv.reset()
    before = [np.array(venv._st[f], copy=True) for f in venv._table_fields]
    with pytest.raises(ValueError, match="none of .* redeals"):
        venv.sample_rows([0, 2], info, np.random.default_rng(0))
    for f, was in zip(venv._table_fields, before):
        same("neu", venv._st[f], was)
