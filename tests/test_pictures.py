"""render_mode="rgb_array" in every env form: one fixed-size picture of the view (the seats'
hands as cards, the view's text below), nothing a seat may not see (the redeal test, as for "ansi"), and the libraries that ask for pictures
(SB3's make_vec_env, gymnasium's RecordVideo, SB3's VecVideoRecorder) work with it."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from agents import make_single_agent
from envs import picture
from tests.conftest import GAMES

SHAPE = (picture.HEIGHT, picture.WIDTH, 3)


def _is_picture(img) -> bool:
    return isinstance(img, np.ndarray) and img.shape == SHAPE and img.dtype == np.uint8


def _play_aec(env, steps: int):
    for _ in range(steps):
        if not env.agents:
            break
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        assert _is_picture(env.render())


@pytest.mark.parametrize("game", GAMES)
def test_aec_and_parallel_draw_the_spectator_table(game):
    aec = envs.make(game, render_mode="rgb_array")
    aec.reset(seed=3)
    img = aec.render()
    assert _is_picture(img)
    engine = aec.unwrapped.game
    assert np.array_equal(img, picture.table(engine, None, f"{game}_v0: the table (spectator)"))
    # every hand face up: no card back anywhere
    assert not (img == picture.BACK).all(axis=2).any()
    _play_aec(aec, 12)
    par = envs.module(game).parallel_env(render_mode="rgb_array")
    obs, _ = par.reset(seed=3)
    assert _is_picture(par.render())
    for _ in range(6):
        if not par.agents:
            break
        acts = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in obs.items()}
        obs, *_ = par.step(acts)
        assert _is_picture(par.render())


@pytest.mark.parametrize("game", GAMES)
def test_seat_picture_shows_nothing_the_seat_cannot_see(game):
    env = make_single_agent(game, seat=1, opponents="random", render_mode="rgb_array")
    env.reset(seed=2)
    img = env.render()
    engine = env.aec.game
    assert _is_picture(img)
    assert np.array_equal(img, picture.table(engine, 1, f"{game}: player_1's view"))
    # The others' hands are card backs, as many as they hold (the spectator's table, every hand
    # face up, draws a different picture: the test can see a leak).
    assert (img == picture.BACK).all(axis=2).any()
    assert not np.array_equal(img, picture.table(engine, None, f"{game}: player_1's view"))
    for k in range(3):  # redealing every card seat 1 cannot see leaves its picture unchanged
        engine.shuffle_hidden(1, np.random.default_rng(k))
        assert np.array_equal(env.render(), img)


def test_a_leaking_view_fails_the_redeal_check(monkeypatch):
    env = make_single_agent("neu", seat=1, opponents="random", render_mode="rgb_array")
    env.reset(seed=2)
    monkeypatch.setattr(env.aec.game, "view", lambda seat: env.aec.game.render())  # planted leak
    img = env.render()
    env.aec.game.shuffle_hidden(1, np.random.default_rng(0))
    assert not np.array_equal(env.render(), img)


def test_hands_drawn_face_up_for_the_wrong_seat_fail_the_redeal_check(monkeypatch):
    env = make_single_agent("not_your_mas_jong", seat=1, opponents="random", render_mode="rgb_array")
    env.reset(seed=2)
    honest = env.render()
    drawn = picture.table
    monkeypatch.setattr(picture, "table", lambda engine, viewer, title, layout: drawn(engine, None, title, layout))  # planted leak
    img = env.render()
    assert not np.array_equal(img, honest)
    env.aec.game.shuffle_hidden(1, np.random.default_rng(0))
    assert not np.array_equal(env.render(), img)


@pytest.mark.parametrize("game", GAMES)
def test_the_seats_own_cards_are_drawn(game):
    # Another deal of the seat's own hand changes the picture from the seat's own row of cards down.
    env = make_single_agent(game, seat=0, opponents="random", render_mode="rgb_array")
    env.reset(seed=5)
    rows = rows_changed_by_a_new_hand(env, 0)
    top, row_h = picture.seat_rows(env.num_players)
    assert rows.size and rows.min() >= top - 2 and rows.min() < top + row_h  # seat 0's row changed


def rows_changed_by_a_new_hand(env, seat: int) -> np.ndarray:
    """The picture rows that change when another seat's redeal gives `seat` another hand."""
    engine, before = env.aec.game, env.render()
    cards = engine.hand_cards(seat)
    for k in range(20):
        engine.shuffle_hidden(1 - seat, np.random.default_rng(k))  # that seat's hidden cards: `seat`'s hand among them
        if engine.hand_cards(seat) != cards:
            return np.flatnonzero((env.render() != before).any(axis=(1, 2)))
    pytest.skip("no redeal changed the hand")


@pytest.mark.parametrize("game", GAMES)
def test_the_portrait_layout_in_every_env_form_shows_nothing_the_seat_cannot_see(game):
    portrait = (picture.LAYOUTS["portrait"][1], picture.LAYOUTS["portrait"][0], 3)
    aec = envs.make(game, render_mode="rgb_array", render_layout="portrait")
    aec.reset(seed=3)
    assert aec.render().shape == portrait
    assert np.array_equal(aec.render(), picture.table(aec.unwrapped.game, None, f"{game}_v0: the table (spectator)", "portrait"))
    par = envs.module(game).parallel_env(render_mode="rgb_array", render_layout="portrait")
    par.reset(seed=3)
    assert par.render().shape == portrait
    env = make_single_agent(game, seat=1, opponents="random", render_mode="rgb_array", render_layout="portrait")
    env.reset(seed=2)
    img = env.render()
    engine = env.aec.game
    assert img.shape == portrait and (img == picture.BACK).all(axis=2).any()
    assert np.array_equal(img, picture.table(engine, 1, f"{game}: player_1's view", "portrait"))
    landscape = picture.table(engine, 1, f"{game}: player_1's view")
    assert landscape.shape == SHAPE
    for k in range(3):  # redealing every card seat 1 cannot see leaves its picture unchanged
        engine.shuffle_hidden(1, np.random.default_rng(k))
        assert np.array_equal(env.render(), img)
    # The seat's own cards sit in its row, under its label: a redeal of its hand changes that band first.
    rows = rows_changed_by_a_new_hand(env, 1)
    top, row_h = picture.seat_rows(engine.num_players, "portrait")
    assert rows.size and top + row_h <= rows.min() < top + 2 * row_h


def test_an_unknown_layout_is_refused_in_one_line():
    with pytest.raises(ValueError, match="render_layout must be one of"):
        envs.make("neu", render_layout="square")
    with pytest.raises(ValueError, match="render_layout must be one of"):
        make_single_agent("neu", opponents="random", render_layout="square")


def test_long_text_wraps_and_clips_to_the_fixed_size():
    lines = picture.lines_of("x" * 1000 + "\n" + "\n".join(["row"] * 100))
    assert len(lines) == picture.ROWS and all(len(line) <= picture.COLUMNS for line in lines)
    assert lines[-1].endswith("…")
    assert picture.picture("a\n" * 200, "t").shape == SHAPE


def test_gym_ids_and_sb3_make_vec_env_take_rgb_array_by_default():
    gym = pytest.importorskip("gymnasium")
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    for game in GAMES:
        e = gym.make(envs.gym_id(game), render_mode="rgb_array")
        e.reset(seed=0)
        assert _is_picture(e.render())
    vec = env_util.make_vec_env(envs.gym_id("neu"), n_envs=2, seed=0)  # passes render_mode="rgb_array"
    vec.reset()
    frames = vec.get_images()
    assert len(frames) == 2 and all(_is_picture(f) for f in frames)
    vec.close()


def test_gymnasium_record_video_writes_a_video(tmp_path):
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy (pip install -e '.[video]')")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(gym.make(envs.gym_id("not_for_me"), render_mode="rgb_array"), str(tmp_path / "videos"),
                      episode_trigger=lambda i: True, disable_logger=True)
    env.reset(seed=0)
    done, steps = False, 0
    while not done:
        mask = env.unwrapped.action_masks()
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(mask)[0]))
        done, steps = term or trunc, steps + 1
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000, (steps, list((tmp_path / "videos").iterdir()))


def test_sb3_vec_video_recorder_writes_a_video(tmp_path):
    pytest.importorskip("moviepy", reason="VecVideoRecorder needs moviepy (pip install -e '.[video]')")
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    from stable_baselines3.common.vec_env import VecVideoRecorder

    vec = env_util.make_vec_env(envs.gym_id("neu"), n_envs=1, seed=0)
    rec = VecVideoRecorder(vec, str(tmp_path), record_video_trigger=lambda step: step == 0, video_length=8)
    rec.reset()
    for _ in range(10):
        mask = vec.env_method("action_masks")[0]
        rec.step(np.array([int(np.flatnonzero(mask)[0])]))
    rec.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000, list(tmp_path.iterdir())
