"""Replay files and the web server's API, against a real server on a free port.

The leak test works on what the server sends: for every seat of one recorded
game of each game, every frame served for that seat must be exactly what the
frame function makes of the engine after ``shuffle_hidden(seat)`` redeals all
that seat cannot see (other hands, the draw pile, face-down cards), and the
same for every other move the acting player could have made that leaves the
seat's observation unchanged (a hidden decision, a secret number in an offer).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from envs.testing import clone
from experiments import replay, tournament, web
from experiments.web import frames as web_frames
from experiments.web import games as web_games
from experiments.web import http as web_http
from experiments.web import replays as web_replays
from tests.conftest import GAMES
from tests.helpers import cli_error_line


@contextlib.contextmanager
def running(folder=None):
    """A real server on a free loopback port, in a thread; yields the server."""
    server = web.WebServer(folder, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def serve(folder=None):
    """A real server on a free loopback port, in a thread; yields its base URL."""
    with running(folder) as server:
        yield server.url.rstrip("/")


def request(method: str, url: str, body=None, raw: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def record_games(folder: Path, game: str, seed: int = 0) -> list[dict]:
    """One deal of `game` at its default player count, the heuristic in each seat in turn against
    random bots, saved as replays ``<game>-<n>p-t0-d0-r<rotation>``; the records of the games."""
    from agents import make_agent

    cls = replay.engine_class(game)
    n, deal_seed = cls.default_players, 1000 + seed
    records = []
    for rotation in range(n):
        kinds = ["heuristic" if s == rotation else "random" for s in range(n)]
        bots = [make_agent(k, game, n, seed=seed * 100 + rotation * n + s) for s, k in enumerate(kinds)]
        engine = cls(n)
        engine.reset(np.random.default_rng(deal_seed))
        moves = []
        while not engine.game_over:
            s = engine.current_player
            action = int(bots[s].act({"observation": engine.observe(s), "action_mask": engine.legal_mask()}))
            moves.append((s, action))
            engine.step(action)
        scores, ranks = [int(x) for x in engine.scores], [int(x) for x in engine.ranks()]
        rep = replay.record(game, n, deal_seed, kinds, moves, scores, ranks)
        replay.write(folder / f"{game}-{n}p-t0-d0-r{rotation}", rep)
        records.append({"table": 0, "deal": 0, "rotation": rotation, "agents": kinds, "deal_seed": deal_seed,
                        "scores": scores, "ranks": ranks})
    return records


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replays")
    records = {g: record_games(folder, g) for g in GAMES}
    with serve(folder) as url:
        yield folder, records, url


def rid(game: str, r: dict) -> str:
    n = len(r["agents"])
    return f"{game}-{n}p-t{r['table']}-d{r['deal']}-r{r['rotation']}"


# -- replay files -----------------------------------------------------------------------
def test_replay_round_trip(recorded):
    folder, records, url = recorded
    for game, recs in records.items():
        for r in recs:
            path = folder / (rid(game, r) + replay.SUFFIX)
            text = path.read_text()
            rep = replay.load(path)  # replays every move and checks the recorded result
            assert "moves" not in r, "the moves go to the file, not into the tournament's records"
            assert rep.final() == {"scores": r["scores"], "ranks": r["ranks"]}
            assert rep.seed == r["deal_seed"] and rep.agents == r["agents"] and rep.game == game
            assert replay.loads(text).dumps() == text
            head = json.loads(text.splitlines()[0])
            assert {"version", "env", "num_players", "rule_options", "seed", "agents", "cardzoo"} <= set(head)
            # served: one frame per move plus the start, ending with the recorded result
            status, got = request("GET", f"{url}/api/replays/{rid(game, r)}?view=spectator")
            assert status == 200
            assert len(got["frames"]) == len(rep.moves) + 1
            assert got["frames"][-1]["result"] == {"scores": r["scores"], "ranks": r["ranks"]}
            assert [f["over"] for f in got["frames"]].count(True) == 1


def test_replay_checks_its_moves_and_result(recorded):
    folder, records, _ = recorded
    r = records["neu"][0]
    lines = (folder / (rid("neu", r) + replay.SUFFIX)).read_text().splitlines()
    step, seat, action = json.loads(lines[1])
    rep = replay.loads("\n".join(lines))
    mask = rep.new_engine().legal_mask()
    illegal = int(np.flatnonzero(mask == 0)[0])
    bad_move = lines[:1] + [json.dumps([0, seat, illegal])] + lines[2:]
    with pytest.raises(ValueError, match="move 0 .* not legal"):
        replay.loads("\n".join(bad_move)).check()
    bad_result = lines[:-1] + [json.dumps({"result": {"scores": [99] * len(r["scores"]), "ranks": r["ranks"]}})]
    with pytest.raises(ValueError, match="the file recorded"):
        replay.loads("\n".join(bad_result)).check()
    with pytest.raises(ValueError, match=r":3: move numbered 5, expected 1"):
        replay.loads("\n".join(lines[:2] + ["[5,0,0]"]))
    with pytest.raises(ValueError, match=r":1: not a cardzoo-replay header"):
        replay.loads('{"hello": 1}')
    with pytest.raises(ValueError, match="format version 9"):
        replay.loads(lines[0].replace('"version":1', '"version":9'))


def test_tournament_and_compare_save_replays(tmp_path):
    out = tmp_path / "t"
    tournament.main(["--game", "deadfall", "--players", "3", "--deals", "1", "--quiet", "--no-plots",
                     "--out", str(tmp_path / "res"), "--save-replays", str(out)])
    files = sorted(out.glob("*" + replay.SUFFIX))
    assert len(files) == 3  # one deal, three seat rotations
    for f in files:
        replay.load(f)
    # a second run into the same folder keeps the first run's files and adds its own
    first = {f.name: f.read_text() for f in files}
    tournament.main(["--game", "deadfall", "--players", "3", "--deals", "1", "--quiet", "--no-plots", "--seed", "9",
                     "--out", str(tmp_path / "res2"), "--save-replays", str(out)])
    now = {f.name: f.read_text() for f in out.glob("*" + replay.SUFFIX)}
    assert len(now) == 6 and {k: now[k] for k in first} == first
    assert all(replay.load(out / name).seed != replay.read(out / old).seed for name in set(now) - set(first) for old in first)
    from experiments import compare

    out2 = tmp_path / "c"
    compare.main(["--games", "neu", "--players", "3", "--agents", "random,heuristic", "--deals", "1", "--workers", "1",
                  "--no-plots", "--out", str(tmp_path / "cres"), "--save-replays", str(out2)])
    files = sorted(out2.glob("*" + replay.SUFFIX))
    assert len(files) == 2 * 3  # two one-vs-rest tables, three rotations
    heads = [replay.load(f) for f in files]
    assert {tuple(h.agents) for h in heads} >= {("random", "heuristic", "heuristic"), ("heuristic", "random", "random")}
    results = json.loads((tmp_path / "cres" / "results.json").read_text())
    assert "moves" not in json.dumps(results)


# -- what a seat is sent -------------------------------------------------------------------
def _look_alike_moves(engine, seat: int, rng, redeals: int = 8):
    """Pairs of the acting player's secret moves that `seat` cannot tell apart: (a, engine after a, b, engine after b).

    Two moves look alike when `seat`'s observation after them is the same, here and in
    `redeals` copies where what `seat` cannot see was redealt (where both moves are legal
    there), so that a chance equality (the card drawn from the pile equal to the one taken
    from the supply) does not count.
    """

    def after(state, a):
        g = clone(state)
        g.step(a)
        return g

    actor = engine.current_player
    # Only moves with a secret part: a public move (a card played face up) may look alike in the
    # observation, which holds the table and not its history, and still be told apart by everyone.
    legal = [int(a) for a in np.flatnonzero(engine.legal_mask())
             if engine.public_action_name(int(a), actor) != engine.action_name(int(a), actor)]
    here = {a: after(engine, a) for a in legal}
    obs = {a: g.observe(seat).tobytes() for a, g in here.items()}
    candidates = [(a, b) for i, a in enumerate(legal) for b in legal[i + 1:] if obs[a] == obs[b]]
    if not candidates:
        return []
    copies = []
    for _ in range(redeals):
        g = clone(engine)
        g.shuffle_hidden(seat, rng)
        copies.append(g)

    def same_everywhere(a, b):
        for c in copies:
            mask = c.legal_mask()
            if mask[a] and mask[b] and after(c, a).observe(seat).tobytes() != after(c, b).observe(seat).tobytes():
                return False
        return True

    return [(a, here[a], b, here[b]) for a, b in candidates if same_everywhere(a, b)]


def frame_leaks(rep: replay.Replay, served: dict[int, list[dict]], rng) -> tuple[list[str], dict]:
    """What the frames served for each seat show that the seat may not know; ([], counts) when nothing.

    Every served frame must be the frame function's output for the recorded game, must
    not change when `shuffle_hidden(seat)` redeals what the seat cannot see, and must be
    the same for any two secret moves of the actor that leave the seat's observation the same.
    """
    game, n = rep.game, rep.num_players
    problems: list[str] = []
    counts = {"redealt": set(), "alternatives": 0, "merged": 0, "rounds": 0}
    index = [0] * n  # next served frame per seat
    prev = None
    for engine, move in rep.states():
        for seat in range(n):
            named = None if move is None else web_frames.shown_move(prev, move[0], move[1], seat)
            if named is not None and not web_frames.shows_frame(engine, named, seat):
                counts["merged"] += 1
                continue
            if index[seat] >= len(served[seat]):
                problems.append(f"{game}: too few frames served to player_{seat}")
                continue
            shown = served[seat][index[seat]]
            step = index[seat]
            index[seat] += 1
            # A round's result comes with the frame of the move that ended it, without the hands.
            rounds = shown.get("rounds", [])
            counts["rounds"] += len(rounds)
            if any(r["hands"] is not None for r in rounds):
                problems.append(f"{game} frame {step}: player_{seat} was shown the hands of a replay")
            shown = {k: v for k, v in shown.items() if k != "rounds"}
            if shown != web_frames.frame(engine, seat, step, named):
                problems.append(f"{game} frame {step}: the frame served to player_{seat} is not that seat's view of the game")
            places = engine.card_places()
            for _ in range(2):
                g = clone(engine)
                g.shuffle_hidden(seat, rng)
                counts["redealt"].update(k for k, v in g.card_places().items() if v != places[k])
                if web_frames.frame(g, seat, step, shown["move"]) != shown:
                    problems.append(f"{game} frame {step}: player_{seat}'s frame changed when the cards it cannot see were redealt")
            if prev is not None and move[0] != seat:
                for a, ga, b, gb in _look_alike_moves(prev, seat, rng):
                    counts["alternatives"] += 1
                    fa = web_frames.frame(ga, seat, step, web_frames.shown_move(prev, move[0], a, seat))
                    fb = web_frames.frame(gb, seat, step, web_frames.shown_move(prev, move[0], b, seat))
                    if fa != fb:
                        problems.append(
                            f"{game} frame {step}: player_{seat} can tell apart player_{move[0]}'s moves "
                            f"{prev.action_name(a, move[0])!r} and {prev.action_name(b, move[0])!r}, which its observation cannot")
        prev = clone(engine)
    problems += [f"{game}: {len(served[s]) - index[s]} frames too many served to player_{s}" for s in range(n) if index[s] < len(served[s])]
    return problems, counts


@pytest.mark.parametrize("game", GAMES)
def test_seat_frames_do_not_depend_on_hidden_cards_or_decisions(recorded, game):
    folder, records, url = recorded
    r = records[game][0]
    rep = replay.read(folder / (rid(game, r) + replay.SUFFIX))
    served = {}
    for seat in range(rep.num_players):
        status, got = request("GET", f"{url}/api/replays/{rid(game, r)}?view={seat}")
        assert status == 200 and got["view"] == seat
        assert "seed" not in got and "moves" not in got, "a seat's view must not carry the deal"
        served[seat] = got["frames"]
    problems, counts = frame_leaks(rep, served, np.random.default_rng(0))
    assert not problems, "; ".join(problems[:3])
    # The check is not vacuous: the redeal moved other hands, and secret moves were compared.
    assert {f"hand {s}" for s in range(rep.num_players)} & counts["redealt"], "the redeal never moved a hidden card"
    events = sum(e is not None for _, _, e in rep.steps())
    assert counts["rounds"] == events * rep.num_players, "a round's result is missing from a seat's frames"
    if game in ("deadfall", "not_for_me", "not_your_mas_jong"):
        assert counts["alternatives"] > 0, f"{game}: no secret move was checked"
    engine = rep.new_engine()
    secret_names = {engine.public_action_name(a, s) for a in engine.secret_actions for s in range(rep.num_players)}
    for seat, frames in served.items():
        assert [f["step"] for f in frames] == list(range(len(frames)))
        for f in frames:
            # who decides on a steal is not told to the others, nor who is about to
            if f["move"] and f["move"]["name"] in secret_names:
                assert f["move"]["seat"] in (None, seat)
            if "discard up for stealing" in f["text"]:  # Ma's Jong, while steal decisions are pending
                assert f["to_act"] is None
    if game == "not_your_mas_jong":
        assert counts["merged"] > 0, "no steal decision of another seat was played: the merging went unchecked"
    _, spectator = request("GET", f"{url}/api/replays/{rid(game, r)}?view=spectator")
    assert any(f["text"] != served[0][i]["text"] for i, f in enumerate(spectator["frames"])), "the spectator sees no more"


@pytest.mark.parametrize("game,plant", [
    ("neu", "spectator text"),  # every hand in a seat's view
    ("deadfall", "full move names"),  # the face-down door card named to everyone
    ("not_for_me", "full move names"),  # the number inside a For You offer
    ("not_your_mas_jong", "full move names"),  # a steal decision named before it is resolved
])
def test_planted_frame_leaks_are_caught(recorded, monkeypatch, game, plant):
    folder, records, _ = recorded
    rep = replay.read(folder / (rid(game, records[game][0]) + replay.SUFFIX))
    if plant == "spectator text":
        original = web_frames.frame
        monkeypatch.setattr(web_frames, "frame", lambda e, view, step, move: {**original(e, view, step, move), "text": e.render()})
    else:
        monkeypatch.setattr(web_frames, "shown_move", lambda e, seat, a, view: {"seat": seat, "name": e.action_name(a, seat)})
    served = {seat: web_frames.replay_frames(rep, seat) for seat in range(rep.num_players)}
    problems, _ = frame_leaks(rep, served, np.random.default_rng(0))
    assert problems, f"the leak check missed the planted leak ({plant}) in {game}"


# Each game's words for how a round ends (docs/RULES.md); one of them is in every sentence.
ROUND_WORDS = {"neu": ("lost a chip",), "deadfall": ("called DEAD",), "not_for_me": ("went out", "nobody out"),
               "not_your_mas_jong": ("won by draw", "won by steal", "draw pile ran out")}


def test_round_results_are_one_sentence_in_the_games_words(recorded):
    folder, records, url = recorded
    for game, recs in records.items():
        status, data = request("GET", f"{url}/api/replays/{rid(game, recs[0])}?view=1")
        rounds = [r for f in data["frames"] for r in f.get("rounds", [])]
        assert status == 200 and rounds, game
        rep = replay.read(folder / (rid(game, recs[0]) + replay.SUFFIX))
        events = [e for _, _, e in rep.steps() if e is not None]
        keys = rep.new_engine().info_defaults()
        for r, event in zip(rounds, events, strict=True):
            s = r["sentence"]
            assert s == rep.new_engine().event_sentence(event.details), game
            assert re.fullmatch(r"(Round|Hand) \d+: [^\n]+\.", s), f"{game}: not one sentence: {s!r}"
            assert any(w in s for w in ROUND_WORDS[game]), f"{game}: not in the game's words: {s!r}"
            assert not re.search(r"_(?!\d)|\[|\b(" + "|".join(keys) + r"):", s), f"{game}: a fact list: {s!r}"


def test_the_text_view_has_no_python_lists(recorded):
    # lists in the table's text read as plain words ("hand 3, 6, 9"), never as "[3, 6]" or "['Red 1']"
    folder, records, url = recorded
    for game, recs in records.items():
        for view in ("0", "spectator"):
            status, data = request("GET", f"{url}/api/replays/{rid(game, recs[0])}?view={view}")
            assert status == 200
            for f in data["frames"]:
                # brackets or quotes around words ("Ma's" is an apostrophe, not a quote)
                assert not re.search(r"[\[\]\"]|(?<![A-Za-z])'|'(?![a-z])", f["text"]), f"{game} ({view}), frame {f['step']}:\n{f['text']}"


def test_spectator_only_on_request(recorded):
    folder, records, url = recorded
    r = records["neu"][0]
    rep = replay.read(folder / (rid("neu", r) + replay.SUFFIX))
    engine = rep.new_engine()
    status, default = request("GET", f"{url}/api/replays/{rid('neu', r)}")
    assert status == 200 and default["view"] == 0
    assert default["frames"][0]["text"] == engine.view(0) != engine.render()
    assert "seed" not in default
    status, spec = request("GET", f"{url}/api/replays/{rid('neu', r)}?view=spectator")
    assert spec["view"] == "spectator" and spec["frames"][0]["text"] == engine.render()
    assert spec["seed"] == rep.seed
    ends = [r for f in spec["frames"] for r in f.get("rounds", [])]
    assert ends and all(len(r["hands"]) == 4 and len(r["changes"]) == 4 for r in ends)  # the spectator sees the hands
    status, listing = request("GET", f"{url}/api/replays")
    assert status == 200 and len(listing["replays"]) == sum(len(v) for v in records.values())
    assert all(set(e) == {"id", "game", "players", "agents", "winners"} for e in listing["replays"])
    assert all(e["winners"] == [s for s, k in enumerate(r["ranks"]) if k == 1] for e in listing["replays"]
               for r in [next(x for g, rs in records.items() for x in rs if rid(g, x) == e["id"])])


def test_bad_replay_requests(recorded):
    _, records, url = recorded
    r = records["neu"][0]
    status, got = request("GET", f"{url}/api/replays/{rid('neu', r)}?view=7")
    assert status == 400 and "view must be a seat from 0 to 3 or 'spectator'" in got["error"]
    status, got = request("GET", f"{url}/api/replays/no-such-game")
    assert status == 404 and "no replay" in got["error"]
    status, got = request("GET", f"{url}/api/replays/..%2F..%2Fetc%2Fpasswd")
    assert status == 404
    status, got = request("GET", f"{url}/nothing-here")
    assert status == 404


# -- playing against the bots ----------------------------------------------------------------
def play_through(url: str, seed: int, choose=lambda legal: legal[0]) -> tuple[list[dict], dict]:
    status, got = request("POST", f"{url}/api/games", {"game": "neu", "players": 4, "human": 1, "bots": "heuristic", "seed": seed})
    assert status == 200, got
    frames, last = list(got["frames"]), got
    while not last["over"]:
        assert last["legal"], "the game waits for the human but offers no move"
        status, last = request("POST", f"{url}/api/games/{got['id']}/act", {"action": choose(last["legal"])["action"]})
        assert status == 200, last
        frames += last["frames"]
    return frames, last


def test_play_a_whole_game_against_bots():
    with serve() as url:
        frames, last = play_through(url, seed=5)
        assert [f["step"] for f in frames] == list(range(len(frames)))
        assert last["result"] == frames[-1]["result"] and sorted(last["result"]["ranks"])[0] == 1
        assert last["seed"] == 5
        # the same seed and the same choices give the same game
        again, _ = play_through(url, seed=5)
        assert again == frames
        # the human's frames are the seat's view of that game
        rep = replay.Replay("neu", 4, 5, ["heuristic", "you", "heuristic", "heuristic"])
        engine = rep.new_engine()
        assert frames[0]["text"] == engine.view(1)
        # a finished game takes no more moves, but a reloaded page still shows it, with the game as a replay
        status, got = request("POST", f"{url}/api/games/{last['id']}/act", {"action": 0})
        assert status == 400 and "is over (its seed was 5)" in got["error"]
        status, shown = request("GET", f"{url}/api/games/{last['id']}")
        assert status == 200 and shown["frames"] == frames and shown["over"]
        saved = replay.loads(shown["replay"])
        assert saved.agents == ["heuristic", "human", "heuristic", "heuristic"] and saved.seed == 5
        assert saved.final() == last["result"]


@pytest.mark.parametrize("game", GAMES)
def test_every_game_plays_to_the_end_through_the_api(game):
    import random

    rnd = random.Random(1)
    with serve() as url:
        status, got = request("POST", f"{url}/api/games", {"game": game, "human": 2, "bots": "random", "seed": 4})
        assert status == 200, got
        frames, last = list(got["frames"]), got
        while not last["over"]:
            move = rnd.choice(last["legal"])
            by_name = rnd.random() < 0.5  # a move may be sent by its name too
            body = {"name": move["name"]} if by_name else {"action": move["action"]}
            status, last = request("POST", f"{url}/api/games/{got['id']}/act", body)
            assert status == 200, last
            assert last["frames"][0]["move"] == {"seat": 2, "name": move["name"]}
            frames += last["frames"]
        assert frames[-1]["over"] and sorted(frames[-1]["result"]["ranks"])[0] == 1
        assert [f["step"] for f in frames] == list(range(len(frames)))


def test_bad_game_requests_get_400_with_one_line():
    with serve() as url:
        status, got = request("POST", f"{url}/api/games", {"game": "neu", "players": 4, "human": 0, "seed": 1})
        gid = got["id"]
        legal = {m["action"] for m in got["legal"]}
        illegal = next(a for a in range(100) if a not in legal)
        cases = [
            ("POST", f"/api/games/{gid}/act", {"action": illegal}, "is not legal now; legal:"),
            ("POST", f"/api/games/{gid}/act", {"action": "3"}, "action must be an integer"),
            ("POST", f"/api/games/{gid}/act", {"name": "dance"}, "unknown action name 'dance'"),
            ("POST", f"/api/games/{gid}/act", {"action": 1, "name": "x"}, "send one of"),
            ("POST", "/api/games", {"game": "chess"}, "unknown game 'chess'; valid games:"),
            ("POST", "/api/games", {"game": "neu", "players": 9}, "neu takes 2 to"),
            ("POST", "/api/games", {"game": "neu", "players": 2.5}, "players must be an integer, got 2.5"),
            ("POST", "/api/games", {"game": "neu", "human": 4}, "human must be a seat from 0 to 3"),
            ("POST", "/api/games", {"game": "neu", "bots": "genius"}, "bots must be one of random, heuristic, ppo"),
            ("POST", "/api/games", {"game": "neu", "colour": "red"}, "unknown field(s) colour"),
            ("POST", "/api/games", {"game": "deadfall", "rule_options": {"rounds": 0}}, "bad rule option rounds=0"),
            ("POST", "/api/games", {"game": "neu", "rule_options": {"num_players": 3}}, "unknown rule option(s) num_players"),
            ("POST", "/api/games", {"game": "neu", "rule_options": {"self": 1}}, "unknown rule option(s) self"),
            ("POST", "/api/games", [1, 2], "must be a JSON object"),
        ]
        for method, path, body, message in cases:
            status, got = request(method, url + path, body)
            assert status == 400, (body, got)
            assert message in got["error"] and "\n" not in got["error"], (body, got)
        status, got = request("POST", f"{url}/api/games", raw=b"{not json")
        assert status == 400 and got["error"].startswith("request body is not JSON")
        status, got = request("POST", f"{url}/api/games/feedbeef/act", {"action": 0})
        assert status == 404
        # the game survived the bad requests and still plays
        status, got = request("POST", f"{url}/api/games/{gid}/act", {"action": min(legal)})
        assert status == 200


def test_open_games_are_bounded():
    open_games = web_games.OpenGames(max_games=3, idle_s=3600)
    ids = [open_games.create({"game": "neu", "seed": s})["id"] for s in range(5)]
    assert list(open_games.games) == ids[2:]
    with pytest.raises(web_http.ApiError) as e:
        open_games.act(ids[0], {"action": 0})
    assert e.value.status == 404
    open_games.idle_s = 0.0
    open_games.create({"game": "neu", "seed": 9})
    assert len(open_games.games) == 1  # the idle ones went


# -- command line ------------------------------------------------------------------------------
def test_cli_rejects_missing_folder(capsys, tmp_path):
    line = cli_error_line(web.main, ["--replays", str(tmp_path / "nope")], capsys)
    assert "is not a folder" in line


def test_cli_serves_on_loopback_and_says_so(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "experiments.web", "--port", "0", "--replays", str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line and "loopback only" in line, line
        url = line.split(" at ")[1].split()[0]
        with urllib.request.urlopen(url, timeout=10) as res:
            assert b"<script src=\"app.js\">" in res.read()
        with urllib.request.urlopen(url + "app.js", timeout=10) as res:
            assert res.headers["Content-Type"].startswith("text/javascript")
        for name in ("favicon.ico", "favicon.svg"):  # what browsers ask for, and what the page links
            with urllib.request.urlopen(url + name, timeout=10) as res:
                assert res.headers["Content-Type"] == "image/svg+xml" and res.read().startswith(b"<svg")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# -- attacks: each refused with a 4xx, and the server keeps serving -------------------------------
def raw_http(url: str, data: bytes, wait: float = 5.0) -> bytes:
    """Send `data` as it is on a new connection; what came back until the server closed it or went quiet."""
    import socket

    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def statuses(answer: bytes) -> list[int]:
    return [int(m) for m in __import__("re").findall(rb"HTTP/1\.[01] (\d{3}) ", answer)]


def post_raw(url: str, path: str, body: bytes, headers: dict) -> bytes:
    host = url.split("//")[1]
    head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": host, **headers}.items())
    return f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + body


def still_serves(url: str) -> None:
    status, got = request("GET", f"{url}/api/setup")
    assert status == 200 and got["games"], "the server stopped serving"
    status, got = request("POST", f"{url}/api/games", {"game": "neu", "seed": 1})
    assert status == 200 and got["id"], "the server stopped starting games"


def test_bots_come_only_from_the_built_in_kinds(tmp_path):
    planted = tmp_path / "evil.py"
    marker = tmp_path / "ran"
    planted.write_text(f"open({str(marker)!r}, 'w').write('x')\nclass Evil:\n    def act(self, obs): return 0\n")
    with serve() as url:
        errors = set()
        for bots in ["os:abort", f"{planted}:Evil", "ppo:/etc/passwd", "ppo:/no/such.pt", "genius", "x=random",
                     " random", "agents.base:RandomAgent", ["random", "os:abort", "random", "random"], 7]:
            status, got = request("POST", f"{url}/api/games", {"game": "neu", "bots": bots, "seed": 1})
            assert status == 400, (bots, got)
            errors.add(got["error"])
        # one answer for all: nothing tells which files or modules exist
        assert errors == {"bots must be one of random, heuristic, ppo, or a list of 4 of them, one per seat"}
        assert not marker.exists(), "the server ran a file a request named"
        status, got = request("POST", f"{url}/api/games", {"game": "neu", "players": 3, "bots": "ppo", "seed": 1})
        assert status == 400 and "no ppo checkpoint is shipped for neu with 3 players" in got["error"]
        still_serves(url)


def test_ppo_checkpoints_are_read_once_per_server(monkeypatch):
    from agents.ppo import PPOAgent

    loads = []
    real = PPOAgent.for_game.__func__
    monkeypatch.setattr(PPOAgent, "for_game", classmethod(lambda cls, *a, **k: loads.append(a) or real(cls, *a, **k)))
    open_games = web_games.OpenGames()
    first = open_games.create({"game": "neu", "players": 4, "bots": "ppo", "seed": 3})
    second = open_games.create({"game": "neu", "players": 4, "bots": "ppo", "seed": 3})
    assert len(loads) == 1, f"the checkpoint was read {len(loads)} times for two games"
    assert first["frames"] == second["frames"] and first["legal"] == second["legal"]
    assert first["agents"] == ["you", "ppo", "ppo", "ppo"]
    # the bots of the two games are separate objects with their own random streams
    a, b = (open_games.games[g["id"]].bots[1] for g in (first, second))
    assert a is not b and a.rng is not b.rng and a._layers is b._layers


def test_requests_from_other_sites_are_refused():
    with running() as server:
        url = server.url.rstrip("/")
        port = server.server_address[1]
        body = {"game": "neu", "seed": 1}
        cases = [
            ({"Content-Type": "text/plain"}, 415, "Content-Type: application/json"),  # a no-cors form or fetch
            ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "Content-Type"),
            ({"Host": f"evil.example:{port}"}, 403, "is not this server's address"),  # DNS rebinding
            ({"Host": "127.0.0.1:1"}, 403, "is not this server's address"),
            ({"Origin": "http://evil.example"}, 403, "cross-origin request from 'http://evil.example' refused"),
            ({"Origin": f"http://127.0.0.1:{port + 1}"}, 403, "cross-origin"),
            ({"Origin": "null"}, 403, "cross-origin"),
        ]
        for headers, status_wanted, message in cases:
            status, got = request("POST", f"{url}/api/games", body, headers=headers)
            assert status == status_wanted and message in got["error"], (headers, got)
            assert len(server.games.games) == 0, f"a game was started by a refused request {headers}"
        status, got = request("GET", f"{url}/api/replays", headers={"Host": "attacker.example"})
        assert status == 403
        answer = raw_http(url, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")  # no Host at all
        assert statuses(answer) == [403]
        # the page's own origin and the loopback names work
        for headers in [{"Origin": f"http://127.0.0.1:{port}"}, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
                        {"Content-Type": "application/json; charset=utf-8"}]:
            status, got = request("POST", f"{url}/api/games", body, headers=headers)
            assert status == 200, (headers, got)
        still_serves(url)


@pytest.mark.parametrize("method", ["HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"])
def test_other_methods_get_the_host_check_first_then_405(method):
    with running() as server:
        url = server.url.rstrip("/")
        port = server.server_address[1]
        close = "Connection: close\r\n"  # the answer, then the end of the connection: nothing to wait for
        answer = raw_http(url, f"{method} /api/replays HTTP/1.1\r\nHost: evil.example:{port}\r\n{close}\r\n".encode())
        assert statuses(answer) == [403], answer[:200]
        answer = raw_http(url, f"{method} /api/replays HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{close}\r\n".encode())
        assert statuses(answer) == [405] and b"501" not in answer and b"<html" not in answer.lower(), answer[:300]
        if method != "HEAD":
            assert b"is not served here; use GET or POST" in answer
        still_serves(url)


def test_allowed_hosts_follow_the_bound_address():
    assert web_http.allowed_hosts("127.0.0.1", 8000) == {"127.0.0.1:8000", "localhost:8000", "[::1]:8000"}
    assert web_http.allowed_hosts("192.168.1.5", 80) == {"192.168.1.5:80", "192.168.1.5"}
    assert "evil.example:8000" not in web_http.allowed_hosts("0.0.0.0", 8000)


def test_bodies_are_bounded_whatever_content_length_says(monkeypatch):
    monkeypatch.setattr(web.Handler, "timeout", 1.0)
    with running() as server:
        url = server.url.rstrip("/")
        ok = json.dumps({"game": "neu", "seed": 1}).encode()
        json_type = {"Content-Type": "application/json"}
        for length, status_wanted in [(None, 411), ("-1", 400), ("abc", 400), ("1e3", 400), (str(10**12), 413),
                                      ("9" * 5000, 413), (str(64 * 1024 + 1), 413)]:
            headers = dict(json_type) if length is None else {**json_type, "Content-Length": length}
            answer = raw_http(url, post_raw(url, "/api/games", ok, headers))
            assert statuses(answer) == [status_wanted], (length, answer[:200])
            assert b"Connection: close" in answer
        # A body over the limit is not read: what follows it is not taken for a second request.
        smuggled = post_raw(url, "/api/games", ok, {**json_type, "Content-Length": str(len(ok))})
        big = 70_000
        answer = raw_http(url, post_raw(url, "/api/games", smuggled + b" " * (big - len(smuggled)),
                                        {**json_type, "Content-Length": str(big)}))
        assert statuses(answer) in ([413], [])  # [] when the close came first (a reset)
        # Two headers that disagree, a chunked body
        answer = raw_http(url, post_raw(url, "/api/games", ok, {**json_type, "Content-Length": str(len(ok))}).replace(
            b"\r\n\r\n", f"\r\nContent-Length: {len(ok) + 5}\r\n\r\n".encode(), 1))
        assert statuses(answer) == [411]
        answer = raw_http(url, post_raw(url, "/api/games", b"0\r\n\r\n", {**json_type, "Transfer-Encoding": "chunked"}))
        assert statuses(answer) == [411]
        assert len(server.games.games) == 0, "a refused or smuggled body started a game"
        # A body shorter than its length: the thread gives up after the timeout, others are served meanwhile.
        import time

        t0 = time.monotonic()
        answer = raw_http(url, post_raw(url, "/api/games", ok[:5], {**json_type, "Content-Length": str(len(ok))}), wait=10)
        assert statuses(answer) in ([408], []) and time.monotonic() - t0 < 8
        still_serves(url)


def test_malformed_bodies_and_queries_get_a_4xx_with_one_line(recorded):
    folder, records, url = recorded
    r = records["neu"][0]
    cases = [
        (b'{"game": "neu", "rule_options": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", "nests deeper than 8 levels"),
        (b"[" * 60_000, "nests deeper"),
        (b'{"game": "neu", "seed": ' + b"7" * 5000 + b"}", "more than 19 digits"),
        (b'{"game": "neu", "seed": 18446744073709551616}', "more than 19 digits"),
        (b'{"game": "neu", "seed": 9223372036854775808}', "seed must be an integer from 0 to 2**63 - 1"),
        (b'{"game": "neu", "seed": -1}', "seed must be an integer from 0"),
        (b'{"game": "neu", "seed": NaN}', "NaN is not JSON"),
        (b'{"game": "neu", "seed": 1e400}', "seed must be an integer"),
        (b'{"game": "neu", "players": "' + b"x" * 50_000 + b'"}', "players must be an integer"),
        (b'{"game": "' + b"\xff" * 10 + b'"}', "not JSON"),
        (b'{"game": "deadfall", "rule_options": {"rounds": [[[1]]]}}', "bad rule option rounds"),
        (b'{"game": "deadfall", "rule_options": {"nope": 1}}', "unknown rule option(s) nope"),
    ]
    for raw, message in cases:
        status, got = request("POST", f"{url}/api/games", raw=raw)
        assert status == 400 and message in got["error"], (raw[:60], got)
        assert "\n" not in got["error"] and len(got["error"]) <= 500
    for view in ["%C2%B2", "%EF%BC%91", "1e3", "-1", "player_" + "9" * 4000, "0x1"]:
        status, got = request("GET", f"{url}/api/replays/{rid('neu', r)}?view={view}")
        assert status == 400 and "view must be a seat" in got["error"], (view, got)
    still_serves(url)


def test_replay_files_are_capped_and_parsed_once(tmp_path, monkeypatch):
    record_games(tmp_path, "deadfall")
    good = sorted(tmp_path.glob("*" + replay.SUFFIX))
    lines = good[0].read_text().splitlines()
    huge = tmp_path / ("huge" + replay.SUFFIX)
    huge.write_text(lines[0] + "\n" + "\n".join(lines[1:-1]) * (web_replays.MAX_REPLAY_BYTES // len("\n".join(lines[1:-1])) + 1) + "\n")
    assert huge.stat().st_size > web_replays.MAX_REPLAY_BYTES
    head = json.loads(lines[0])
    (tmp_path / ("bad-agents" + replay.SUFFIX)).write_text(json.dumps({**head, "agents": 5}) + "\n" + "\n".join(lines[1:]))
    (tmp_path / ("bad-game" + replay.SUFFIX)).write_text(json.dumps({**head, "game": "../../etc"}) + "\n")
    (tmp_path / ("deep" + replay.SUFFIX)).write_text("[" * 100_000 + "\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside{replay.SUFFIX}"
    outside.write_text(good[0].read_text())
    (tmp_path / ("link" + replay.SUFFIX)).symlink_to(outside)  # a link out of the folder is not served
    parsed = []
    real_read, real_header = replay.read, replay.read_header
    monkeypatch.setattr(replay, "read", lambda p: parsed.append(Path(p).name) or real_read(p))
    monkeypatch.setattr(replay, "read_header", lambda p: parsed.append("head " + Path(p).name) or real_header(p))
    with serve(tmp_path) as url:
        for _ in range(3):
            status, listing = request("GET", f"{url}/api/replays")
            assert status == 200
        entries = {e["id"]: e for e in listing["replays"]}
        assert len(entries) == len(good) + 4 and listing["max_bytes"] == web_replays.MAX_REPLAY_BYTES
        assert "link" not in entries and request("GET", f"{url}/api/replays/link")[0] == 404
        assert "over the 1,048,576-byte limit" in entries["huge"]["unreadable"]
        assert "agents must be a list of 4 strings" in entries["bad-agents"]["unreadable"]
        assert "game is '../../etc'" in entries["bad-game"]["unreadable"]
        assert "not JSON" in entries["deep"]["unreadable"]
        assert all("unreadable" not in entries[p.name[: -len(replay.SUFFIX)]] for p in good)
        for name in ["huge", "bad-agents", "deep"]:
            status, got = request("GET", f"{url}/api/replays/{name}")
            assert status == 400 and "cannot be read" in got["error"] and str(tmp_path) not in got["error"], got
        good_id = good[0].name[: -len(replay.SUFFIX)]
        for view in ["0", "1", "spectator", "0"]:
            status, _ = request("GET", f"{url}/api/replays/{good_id}?view={view}")
            assert status == 200
        assert "huge" + replay.SUFFIX not in parsed and "head huge" + replay.SUFFIX not in parsed, "the oversized file was parsed"
        assert parsed.count(good[0].name) == 1, f"parsed {parsed.count(good[0].name)} times"
        assert sum(1 for p in parsed if p.startswith("head ")) == len(good) + 3, "headers parsed more than once"
        # a changed file is read again
        good[0].write_text(good[0].read_text() + "\n")
        status, _ = request("GET", f"{url}/api/replays/{good_id}?view=1")
        assert status == 200 and parsed.count(good[0].name) == 2
        still_serves(url)


def test_saved_replays_never_overwrite(tmp_path):
    records = record_games(tmp_path, "neu")
    first = {p.name: p.read_text() for p in tmp_path.glob("*" + replay.SUFFIX)}
    rep = replay.read(tmp_path / ("neu-4p-t0-d0-r0" + replay.SUFFIX))
    with pytest.raises(FileExistsError):
        replay.write(tmp_path / "neu-4p-t0-d0-r0", rep)
    again = [{**r, "moves": list(rep.moves)} for r in records[:1]]
    written = replay.save_records(again, tmp_path, "neu", 4)
    assert [p.name for p in written] == ["neu-4p-t0-d0-r0-2" + replay.SUFFIX]
    assert {p.name: p.read_text() for p in tmp_path.glob("*" + replay.SUFFIX) if p.name in first} == first
    assert not list(tmp_path.glob(".*tmp")), "a temporary file was left behind"


@pytest.mark.parametrize("game", GAMES)
def test_live_frames_reveal_hands_only_once_the_round_is_over(game):
    """In play mode the human's frames are its seat's view (unchanged when what it cannot see is
    redealt) until a round ends; the frame of that move brings the round's result and every hand
    as it was when the round ended."""
    import random

    rnd, rng = random.Random(2), np.random.default_rng(2)
    n = replay.engine_class(game).default_players
    live = web_games.LiveGame(game, n, 1, ["random"] * n, 11, {}, web_games.Bots())
    log, real = [], live.apply

    def spy(seat, action):
        before = clone(live.engine)
        event = clone(before).step(action)
        shown = real(seat, action)
        log.append((before, clone(live.engine), event, shown))
        return shown

    live.apply = spy
    live.bots_move()
    while not live.engine.game_over:
        live.apply(1, rnd.choice(np.flatnonzero(live.engine.legal_mask()).tolist()))
        live.bots_move()
    reveals, pending = 0, []
    for before, after, event, shown in log:
        if event is not None:
            pending.append([before.hand_cards(s) for s in range(n)])
        if shown is None:
            continue
        seat_view = {k: v for k, v in shown.items() if k != "rounds"}
        for _ in range(2):
            g = clone(after)
            g.shuffle_hidden(1, rng)
            assert web_frames.frame(g, 1, shown["step"], shown["move"]) == seat_view, f"{game} frame {shown['step']} shows a hidden card"
        if pending:
            assert [r["hands"] for r in shown["rounds"]] == pending, f"{game} frame {shown['step']}: wrong or missing reveal"
            assert all(len(r["changes"]) == n for r in shown["rounds"])
            reveals += len(pending)
            pending = []
        else:
            assert "rounds" not in shown, f"{game} frame {shown['step']}: hands revealed before the round ended"
    assert reveals >= 1 and live.frames[-1]["over"] and "rounds" in live.frames[-1]


def test_setup_names_each_game_as_its_engine_does():
    names = {g["game"]: g["display"] for g in web.setup()["games"]}
    assert names == {"not_for_me": "Not For Me", "deadfall": "Deadfall", "neu": "Neu", "not_your_mas_jong": "Not Your Ma's Jong"}
    assert all(names[g] == replay.engine_class(g).display_name for g in names)


def test_a_small_preset_game_takes_the_presets_player_count_and_replays():
    # Ma's Jong takes 3 or 4 players; its small preset takes two, and the page's game and its
    # replay file follow the preset's count.
    open_games = web_games.OpenGames(max_games=3, idle_s=3600)
    got = open_games.create({"game": "not_your_mas_jong", "rule_options": {"rules": "small"}, "seed": 3, "auto_pass": True})
    assert got["players"] == 2
    with pytest.raises(web_http.ApiError, match="takes 2 to 2 players with these rule options, got 4") as e:
        open_games.create({"game": "not_your_mas_jong", "players": 4, "rule_options": {"rules": "small"}})
    assert e.value.status == 400
    rnd = np.random.default_rng(0)
    while "replay" not in got:
        got = open_games.act(got["id"], {"action": int(rnd.choice([m["action"] for m in got["legal"]]))})
    game = replay.loads(got["replay"])
    assert game.num_players == 2 and game.rule_options["rules"] == "small"


def _get_bytes(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as res:
            return res.status, res.headers["Content-Type"], res.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


@pytest.mark.parametrize("game", GAMES)
def test_the_pages_picture_is_the_envs_drawing_of_the_humans_view(game):
    import io

    from PIL import Image

    from envs import picture

    with running() as server:
        url = server.url.rstrip("/")
        status, data = request("POST", f"{url}/api/games", {"game": game, "human": 1, "bots": "random", "seed": 4})
        assert status == 200
        live = server.games.games[data["id"]]
        for layout in ("landscape", "portrait"):
            status, ctype, png = _get_bytes(f"{url}/api/games/{data['id']}/picture?layout={layout}")
            assert status == 200 and ctype == "image/png"
            img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
            name = live.engine.display_name or game
            assert np.array_equal(img, picture.table(live.engine, 1, f"{name}: player_1's view (you)", layout))
            assert img.shape[:2] == picture.LAYOUTS[layout][::-1]
        # The human's view only: redealing what seat 1 cannot see leaves the picture's bytes unchanged.
        for k in range(3):
            live.engine.shuffle_hidden(1, np.random.default_rng(k))
            assert _get_bytes(f"{url}/api/games/{data['id']}/picture?layout=portrait")[2] == png
        for bad in ("square", ""):
            status, body = request("GET", f"{url}/api/games/{data['id']}/picture?layout={bad}")
            assert status == 400 and "layout must be one of" in body["error"], bad
        status, body = request("GET", f"{url}/api/games/0000/picture")
        assert status == 404
