"""The luck-adjusted estimator (`experiments.tournament.luck`): its chance corrections have
expectation zero, it never changes a game, and a copy of an agent is level with it."""

from collections import Counter

import numpy as np
import pytest

import envs
from agents import make_agent
from experiments.tournament import luck, run_tournament


def _played(game, n, seed, steps=None):
    """A heuristic game on the readable engine, its moves, and the engine (stopped after `steps` moves)."""
    bots = [make_agent("heuristic", game, n, seed=seed * 8 + s) for s in range(n)]
    engine = envs.engine_class(game)(n)
    engine.reset(np.random.default_rng(seed))
    moves = []
    while not engine.game_over and (steps is None or len(moves) < steps):
        p = engine.current_player
        a = int(bots[p].act({"observation": engine.observe(p), "action_mask": engine.legal_mask()}))
        moves.append((p, a))
        engine.step(a)
    return engine, moves


@pytest.mark.parametrize("game", ["neu", "not_for_me", "not_your_mas_jong", "deadfall"])
def test_shuffle_unseen_keeps_every_view_and_card(game):
    engine, _ = _played(game, 4, 3, steps=12)
    before = [engine.observe(s).copy() for s in range(4)]
    places = {k: Counter(v) for k, v in engine.card_places().items()}
    counts = engine.next_draw_counts()
    top = max(counts) if counts else None
    engine.shuffle_unseen(np.random.default_rng(1), top=top)
    for s in range(4):
        np.testing.assert_array_equal(engine.observe(s), before[s])
    assert {k: Counter(v) for k, v in engine.card_places().items()} == places
    if top is not None:
        assert engine.draw[-1] == top  # drawn next


def test_the_correction_has_expectation_exactly_zero_where_the_draws_are_enumerated():
    """A Neu position before a draw: each kind the pile can give, taken as what chance dealt,
    weighted by its probability, gives corrections that sum to zero (V: a fitted value)."""
    engine, _ = _played("neu", 4, 11, steps=5)
    value = luck.LinearValue.load("neu", 4)
    assert value.w is not None  # the shipped fit, so that V is not just the score
    action = int(np.flatnonzero(engine.legal_mask())[0])
    expected = luck.expected_value(engine, action, value, np.random.default_rng(0))
    counts = engine.next_draw_counts()
    total = sum(counts.values())
    assert len(counts) > 1
    mean_correction = 0.0
    values = []
    for kind, k in counts.items():
        dealt = luck._clone(engine)
        dealt.shuffle_unseen(np.random.default_rng(5), top=kind)
        dealt.step(action)
        values.append(value(dealt))
        mean_correction = mean_correction + k / total * (value(dealt) - expected)
    np.testing.assert_allclose(mean_correction, 0.0, atol=1e-9)
    assert np.ptp(np.stack(values), axis=0).max() > 0  # the outcomes differ, so the test can fail


def test_the_corrections_average_zero_over_many_games():
    """Unbiased, CI-sized: the summed correction of seat 0 over Not For Me games (where every
    draw from the pile is a chance event) is within 4 standard errors of zero."""
    c = []
    for seed in range(40):
        engine, moves = _played("not_for_me", 4, 100 + seed)
        c.append(luck.corrections("not_for_me", 4, None, 100 + seed, moves)[0])
    c = np.asarray(c)
    assert c.std() > 0
    assert abs(c.mean()) <= 4 * c.std(ddof=1) / np.sqrt(len(c))


def test_a_replay_that_does_not_fit_its_moves_is_refused():
    _, moves = _played("neu", 4, 2, steps=6)
    bad = [((s + 1) % 4, a) for s, a in moves]
    with pytest.raises(ValueError, match="does not fit the replay"):
        luck.corrections("neu", 4, None, 2, bad)


def test_the_estimator_changes_no_game_and_a_copy_is_level_under_every_estimator():
    """Adjusted scores come from the moves after each game: every record's play is that of the
    duplicate run (so no hidden card reaches an agent). And heuristic against a copy of itself
    is level (the CI holds 0) under plain, duplicate and adjusted."""
    runs = {e: run_tournament("deadfall", ["a=heuristic", "b=heuristic"], num_players=4, deals=20, progress=False,
                              estimator=e, engine="aec") for e in ("plain", "duplicate", "adjusted")}
    dup, adj = runs["duplicate"]["records"], runs["adjusted"]["records"]
    assert [(r["scores"], r["ranks"]) for r in dup] == [(r["scores"], r["ranks"]) for r in adj]
    assert all("luck" in r and "moves" not in r for r in adj)
    assert runs["adjusted"]["estimator"] == "adjusted"
    for e, res in runs.items():
        d = res["pairwise"]["a vs b"]["score_diff"]
        assert d["ci_low"] <= 0 <= d["ci_high"], e
    a = runs["adjusted"]["pairwise"]["a vs b"]["adjusted_diff"]
    assert a["ci_low"] <= 0 <= a["ci_high"]


def test_an_unknown_estimator_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown estimator 'lucky'; valid: plain, duplicate, adjusted"):
        run_tournament("neu", ["heuristic", "random"], deals=1, progress=False, estimator="lucky")


def test_the_commands_report_the_adjusted_difference_in_markdown_json_and_the_database(tmp_path, capsys):
    import json
    import sqlite3

    from experiments import compare
    from experiments import tournament as T

    db = tmp_path / "r.sqlite"
    assert T.main(["--game", "deadfall", "--agents", "heuristic,random", "--deals", "3", "--estimator", "adjusted", "--quiet",
                   "--no-plots", "--db", str(db), "--out", str(tmp_path / "t")]) == 0
    assert "adjusted diff A − B" in capsys.readouterr().out
    res = json.loads((tmp_path / "t" / "results.json").read_text())
    pair = res[0]["pairwise"]["heuristic vs random"] if isinstance(res, list) else res["results"][0]["pairwise"]["heuristic vs random"]
    assert {"adjusted_diff", "var_adjusted", "adjusted_ratio"} <= set(pair)
    (meta,) = sqlite3.connect(db).execute("SELECT metadata FROM runs").fetchone()
    meta = json.loads(meta)
    assert meta["estimator"] == "adjusted" and "heuristic vs random" in meta["adjusted"]["deadfall 4p"]
    assert compare.main(["--games", "deadfall", "--agents", "heuristic,random", "--deals", "2", "--estimator", "adjusted", "--quiet",
                         "--no-plots", "--out", str(tmp_path / "c")]) == 0
    assert "adjusted diff A − B" in (tmp_path / "c" / "results.md").read_text()


@pytest.mark.parametrize("write, message", [
    (lambda p, size: p.write_bytes(b"PK\x03\x04 truncated"), "not an .npz file"),
    (lambda p, size: np.savez(p, w=np.zeros(size + 1), b=np.float64(0)), "w has shape"),
    (lambda p, size: np.savez(p, w=np.full(size, np.nan), b=np.float64(0)), "must be finite"),
    (lambda p, size: np.savez(p, w=np.full(size, 1e300), b=np.float64(0)), "must be finite and below"),
    (lambda p, size: np.savez(p, w=np.zeros(size)), "missing b"),
])
def test_a_bad_value_file_is_refused_before_any_game(tmp_path, monkeypatch, write, message):
    monkeypatch.setattr(luck, "VALUES", tmp_path)
    luck.LinearValue.load.cache_clear()
    write(tmp_path / "neu-2p.npz", envs.info("neu", 2).obs_size)
    played = []
    monkeypatch.setattr(luck, "corrections", lambda *a, **k: played.append(1))
    try:
        with pytest.raises(ValueError, match=message):
            run_tournament("neu", ["heuristic", "random"], num_players=2, deals=1, progress=False, estimator="adjusted")
    finally:
        luck.LinearValue.load.cache_clear()
    assert played == []


@pytest.mark.parametrize("command", ["tournament", "compare"])
def test_a_damaged_value_file_is_one_line_on_the_command_line_and_claims_nothing(command, tmp_path, monkeypatch, capsys):
    from experiments import compare
    from experiments.tournament import command as tournament_command
    from tests.helpers import cli_error_line

    monkeypatch.setattr(luck, "VALUES", tmp_path)
    luck.LinearValue.load.cache_clear()
    (tmp_path / "neu-2p.npz").write_bytes(b"PK\x03\x04 damaged")
    out = tmp_path / "out"
    argv = (["--game", "neu", "--players", "2", "--agents", "heuristic,random"] if command == "tournament"
            else ["--games", "neu", "--players", "2", "--agents", "heuristic,random"])
    main = tournament_command.main if command == "tournament" else compare.main
    try:
        line = cli_error_line(main, argv + ["--deals", "1", "--estimator", "adjusted", "--out", str(out)], capsys)
    finally:
        luck.LinearValue.load.cache_clear()
    assert "value file" in line and "neu-2p.npz" in line
    assert not out.exists()


def test_a_correction_that_is_not_finite_never_reaches_a_report():
    with pytest.raises(RuntimeError, match="not a finite number"):
        luck.adjusted_scores({"deal": 3, "scores": [1, -1], "luck": [float("nan"), 0.0]})


def test_an_interrupted_fit_leaves_the_old_value_file_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(luck, "VALUES", tmp_path)
    old = tmp_path / "neu-2p.npz"
    old.write_bytes(b"the old file")
    monkeypatch.setattr(luck, "fit", lambda *a, **k: luck.LinearValue(np.zeros(3), 0.0))

    def dies(f, **arrays):
        f.write(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(luck.np, "savez", dies)
    with pytest.raises(KeyboardInterrupt):
        luck.main(["--game", "neu", "--players", "2", "--games", "1"])
    assert old.read_bytes() == b"the old file" and [p.name for p in tmp_path.iterdir()] == ["neu-2p.npz"]


def test_the_fit_command_refuses_a_bad_player_count_in_one_line(capsys):
    with pytest.raises(SystemExit):
        luck.main(["--game", "neu", "--players", "99"])
    assert "num_players must be from 2 to 7, got 99" in capsys.readouterr().err


def test_plain_with_another_estimator_is_refused(capsys):
    from experiments.tournament.command import main

    with pytest.raises(SystemExit):
        main(["--plain", "--estimator", "adjusted", "--deals", "1", "--quiet"])
    assert "--plain is --estimator plain; it cannot go with --estimator adjusted" in capsys.readouterr().err


@pytest.mark.parametrize("workers", [1, 2])
def test_the_bar_moves_per_game_corrected_and_workers_give_the_same_luck(workers, monkeypatch, capsys):
    import time

    real = luck.batch_values

    def slow(*args, **kwargs):  # corrections that take long enough for the bar to draw as games end
        time.sleep(0.01)
        return real(*args, **kwargs)

    monkeypatch.setattr(luck, "batch_values", slow)
    res = run_tournament("neu", ["heuristic", "random"], num_players=2, deals=2, progress=True, estimator="adjusted",
                         workers=workers)
    err = capsys.readouterr().err
    steps = {part.split("|")[0].strip() for part in err.split("\r") if "luck corrections" in part}
    between = steps & {f"neu 2p luck corrections:  {p}%" for p in (25, 50, 75)}
    assert between, steps  # it moved between games, not from 0 straight to the end
    monkeypatch.setattr(luck, "batch_values", real)
    again = run_tournament("neu", ["heuristic", "random"], num_players=2, deals=2, progress=False, estimator="adjusted")
    assert [r["luck"] for r in res["records"]] == [r["luck"] for r in again["records"]]


# --- corrections on the batched engine ----------------------------------------------------------


def _records(game, n, deals, agents=("heuristic", "random")):
    from experiments.tournament import runner, vector

    tables = runner.make_tables_checked(list(agents), game, n, None)
    job = runner.Job(game, n, (), 0, True, tuple((0, d) for d in range(deals)), record_moves=True,
                     vector_tables=vector.choose_tables(game, tables, n, "auto"))
    return runner.play_job(job, tables)


@pytest.mark.parametrize("game, deals", [("neu", 3), ("not_for_me", 3), ("not_your_mas_jong", 2), ("deadfall", 3)])
def test_batched_corrections_are_the_readable_ones(game, deals):
    """The batched engine's corrections (every game side by side, a table per stratum) are the
    readable engine's, game by game, for the same seed; and a game's luck does not depend on the
    games corrected beside it."""
    recs = _records(game, 4, deals)
    want = [luck.sampled_corrections(game, 4, None, r["deal_seed"], r["moves"], seed=7) for r in recs]
    got = luck.batched_corrections(game, 4, None, recs, seed=7)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert np.abs(want).max() > 0.1  # luck was found, so the comparison can fail
    assert luck.batched_corrections(game, 4, None, recs[1:2], seed=7) == got[1:2]


def test_the_strata_give_a_single_draws_exact_expectation():
    """A Neu move that draws one card: the strata's weighted mean of V after the move is the
    exact mean over every card the pile can give (`Engine.step_outcomes`)."""
    engine, _ = _played("neu", 4, 11, steps=5)
    value = luck.LinearValue.load("neu", 4)
    action = int(np.flatnonzero(engine.legal_mask())[0])
    exact = luck.expected_value(engine, action, value, np.random.default_rng(0))
    tops, weights = luck.strata(np.bincount(engine.draw, minlength=luck._kinds(engine)), 4)
    assert (weights > 0).sum() > 1 and weights.sum() == pytest.approx(1.0)
    mean = 0.0
    for s, (top, w) in enumerate(zip(tops, weights)):
        if w > 0:
            cf = luck._clone(engine)
            cf.shuffle_unseen(np.random.default_rng(s), int(top))
            cf.step(action)
            mean = mean + w * value(cf)
    np.testing.assert_allclose(mean, exact, atol=1e-9)


@pytest.mark.parametrize("game", ["neu", "not_for_me", "not_your_mas_jong"])
def test_batched_corrections_average_zero_over_many_games(game):
    """Unbiased, CI-sized: over 240 heuristic-against-random games the mean correction of each
    agent's seats is within 4 standard errors of zero, and it is not zero game by game."""
    recs = _records(game, 4, 60)
    c = np.asarray(luck.batched_corrections(game, 4, None, recs, seed=1))
    assert c.std() > 0.05
    for seat in range(4):
        assert abs(c[:, seat].mean()) <= 4 * c[:, seat].std(ddof=1) / np.sqrt(len(c)), seat


def test_the_batched_engine_redeals_the_unseen_as_the_readable_one():
    """VectorEnv.shuffle_unseen(rows, seeds, tops) leaves a table in the state the engine's
    shuffle_unseen(default_rng(seed), top) leaves the engine in: the same game from then on."""
    rng = np.random.default_rng(4)
    for game in ("neu", "not_for_me", "not_your_mas_jong", "deadfall"):
        venv = envs.vector_env(game, 2, 4, seed=0)
        venv.reset()
        for trial in range(6):
            engine, _ = _played(game, 4, 30 + trial, steps=int(rng.integers(0, 30)))
            if engine.game_over:
                continue
            venv.load_rows(np.array([1]), [engine])
            pile = getattr(engine, "draw", None)
            top = int(pile[0]) if pile else -1
            seed = int(rng.integers(2**63))
            engine.shuffle_unseen(np.random.default_rng(seed), None if top < 0 else top)
            venv.shuffle_unseen([1], [seed], [top])
            while not engine.game_over:
                a = int(rng.choice(np.flatnonzero(engine.legal_mask())))
                engine.step(a)
                venv.step(np.array([a]), rows=np.array([1]))
                if not engine.game_over:
                    np.testing.assert_array_equal(venv.state()[1], engine.state())
        # one table's observation alone is that table's row of every table's
        np.testing.assert_array_equal(venv.observe(2, rows=[1]), venv.observe(2)[[1]])
    with pytest.raises(ValueError, match="no card of kind 17 in the draw pile of table 0"):
        v = envs.vector_env("not_for_me", 1, 4, seed=0)
        v.reset()
        v.shuffle_unseen([0], [1], [17])
    with pytest.raises(ValueError, match="no draw pile"):
        v = envs.vector_env("deadfall", 1, 4, seed=0)
        v.reset()
        v.shuffle_unseen([0], [1], [3])
    with pytest.raises(ValueError, match="seeds must be integers"):
        v.shuffle_unseen([0], [-1])
