"""The page in a real headless browser: the system's Chromium driven by Playwright.

    apt-get install chromium && pip install -e ".[web-test]"
    python -m pytest -m browser

Playwright drives the Chromium the system installed (``executable_path``);
nothing is downloaded at run time. Without either, the tests skip and say which is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import urllib.request
from pathlib import Path

import pytest

from envs import picture
from experiments import replay
from tests.test_web import record_games, running, serve

pytestmark = pytest.mark.browser

CHROMIUM = next(filter(None, (shutil.which(n) for n in ("chromium", "chromium-browser"))), None)


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[web-test]')")
    if CHROMIUM is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replays")
    record_games(folder, "neu")
    first = sorted(folder.glob("*" + replay.SUFFIX))[0].read_text().splitlines()
    head = json.loads(first[0])  # a header the list cannot use must not empty it
    (folder / ("bad-agents" + replay.SUFFIX)).write_text("\n".join([json.dumps({**head, "agents": 5})] + first[1:]) + "\n")
    with serve(folder) as url:
        yield url, folder


@pytest.fixture
def page(browser):
    with open_page(browser, 1366, 768) as pg:
        yield pg


def test_watch_a_replay_step_by_step(page, site, tmp_path):
    url, folder = site
    rep = replay.read(sorted(folder.glob("neu*" + replay.SUFFIX))[0])
    engine = rep.new_engine()
    page.goto(url)
    page.locator("#replays button").first.click()
    last = len(rep.moves)
    page.wait_for_selector(f"text=move 0 / {last}")
    # player_0's seat: its own hand, never another
    assert page.inner_text("#view").strip() == engine.view(0).strip()
    assert page.locator("#seat").input_value() == "0"
    for _ in range(3):
        page.click("#next")
    assert page.inner_text("#step-label") == f"move 3 / {last}"
    assert page.locator("#moves li").count() == last + 1
    assert "current" in (page.locator("#moves li").nth(3).get_attribute("class") or "")
    page.click("#prev")
    assert page.inner_text("#step-label") == f"move 2 / {last}"
    page.press("body", "End")
    page.wait_for_selector("#result table")
    assert page.locator("#result tr").count() == rep.num_players + 1
    # the spectator is a separate, explicit choice
    page.select_option("#seat", "spectator")
    page.wait_for_function("document.querySelector('#info').textContent.includes('spectator')")
    page.press("body", "Home")
    assert page.inner_text("#view").strip() == engine.render().strip()
    # autoplay moves on by itself
    page.select_option("#speed", "0")
    page.click("#autoplay")
    page.wait_for_function(f"document.querySelector('#step-label').textContent === 'move {last} / {last}'")
    shot = tmp_path / "watch.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


def test_play_a_whole_neu_game_by_clicking(page, site, tmp_path):
    url, _ = site
    page.goto(url)
    page.click("#tab-play")
    page.wait_for_selector("#p-game option[value=neu]", state="attached")
    page.select_option("#p-game", "neu")
    page.fill("#p-seed", "3")
    page.select_option("#speed", "0")
    page.click("#start")
    clicks = 0
    while True:
        page.wait_for_selector("#legal button, #result table")
        if page.locator("#result table").count():
            break
        page.locator("#legal button").first.click()
        clicks += 1
        assert clicks < 500, "the game did not end"
    assert clicks >= 1
    ranks = page.locator("#result td:first-child").all_inner_texts()
    assert len(ranks) == 4 and ranks[0] == "1" and all(re.fullmatch(r"[1-4]", r) for r in ranks)
    assert page.locator("#result tr.you").count() == 1
    assert "Game over" in page.inner_text("#legal")
    # each round's result is one sentence in the game's words, not a list of facts
    rounds = page.locator("#moves .round").all_inner_texts()
    assert rounds and all(re.match(r"Round \d+: at a total of \d+, player_\d .* lost a chip\.", r) for r in rounds), rounds
    assert not any("round_loser" in r or "loser:" in r for r in rounds)
    shot = tmp_path / "play.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_a_page_on_another_origin_cannot_drive_the_server(browser, tmp_path):
    """Another site the user has open (here a second local server on another port) tries the
    requests a browser lets any page send: a no-cors text/plain POST, a form POST, and a CORS
    fetch with JSON (which needs a preflight). None may start a game."""
    import http.server
    import threading

    with running() as server:
        target = server.url.rstrip("/")
        body = json.dumps({"game": "neu", "bots": "random", "seed": 1})
        (tmp_path / "index.html").write_text(f"""<!doctype html><body>
<form id=f method=POST action="{target}/api/games" enctype="text/plain" target=sink>
<input name='{body[:-1]}, "x": "' value='"}}'></form><iframe name=sink></iframe>
<script>
const url = "{target}/api/games", body = {json.dumps(body)};
const tries = [
  fetch(url, {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body}}).then(() => "sent", (e) => "failed"),
  fetch(url, {{method: "POST", headers: {{"Content-Type": "application/json"}}, body}}).then((r) => "read " + r.status, (e) => "failed"),
];
Promise.all(tries).then((r) => {{ document.getElementById("f").submit(); window.results = r; }});
</script></body>""")
        handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **k)
        other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            context = browser.new_context()
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{other.server_address[1]}/index.html")
            page.wait_for_function("window.results !== undefined", timeout=10_000)
            results = page.evaluate("window.results")
            page.wait_for_timeout(500)  # the form's POST
            context.close()
        finally:
            other.shutdown()
            other.server_close()
        assert results[1] == "failed", f"a cross-origin page read the server's answer: {results}"
        assert not server.games.games, "a page on another origin started a game"
        with urllib.request.urlopen(target + "/api/setup", timeout=10) as res:
            assert res.status == 200  # and the server still serves


GAMES = ["neu", "deadfall", "not_for_me", "not_your_mas_jong"]


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """Screenshots kept after the run: in $CARDZOO_SCREENSHOTS when set, else under pytest's temporary folder."""
    folder = Path(os.environ["CARDZOO_SCREENSHOTS"]) if os.environ.get("CARDZOO_SCREENSHOTS") else tmp_path_factory.getbasetemp() / "web-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def open_page(browser, width, height=800, touch=False):
    """A page in a fresh browser context at this width (a touch screen with `touch`); no
    JavaScript error may happen on it."""
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield pg
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def start(pg, url, game, seed, auto=True, options=None):
    pg.goto(url)
    pg.click("#tab-play")
    pg.wait_for_selector(f"#p-game option[value={game}]", state="attached")
    pg.select_option("#p-game", game)
    pg.fill("#p-seed", str(seed))
    if options:
        pg.click("#p-options-box summary")
        for name, value in options.items():
            pg.fill(f"#opt-{name}", value)
    pg.select_option("#speed", "0")
    if not auto:
        pg.uncheck("#p-auto")
    pg.click("#start")


def visible_in_viewport(pg, selector):
    box = pg.locator(selector).first.bounding_box()
    width = pg.viewport_size["width"]
    return box is not None and box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= width + 1


def on_screen(pg, selector):
    """The element's box lies wholly inside the viewport, as the page is scrolled now."""
    box = pg.locator(selector).first.bounding_box()
    size = pg.viewport_size
    return (box is not None and box["width"] > 0 and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= size["width"] + 1 and box["y"] + box["height"] <= size["height"] + 1)


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("game", GAMES)
def test_play_each_game_by_clicking_with_a_reload(browser, site, shots, game, width):
    url, _ = site
    with open_page(browser, width) as pg:
        # one round where the game has the option, to keep the test short
        start(pg, url, game, seed=7, options={"rounds": "1"} if game in ("deadfall", "not_for_me") else {})
        clicks, reloaded, lone_passes = 0, False, 0
        while True:
            pg.wait_for_selector("#legal button, #result table")
            if pg.locator("#result table").count():
                break
            if clicks == 3 and not reloaded:
                before = pg.locator("#moves li").count()
                game_id = pg.evaluate("location.hash")
                assert game_id.startswith("#play="), game_id
                pg.reload()
                pg.wait_for_selector("#legal button")
                assert pg.evaluate("location.hash") == game_id
                assert pg.locator("#moves li").count() == before, "the reload lost moves"
                assert pg.input_value("#speed") == "0", "the reload lost the speed"
                reloaded = True
                if width == 390:
                    pg.screenshot(path=str(shots / f"play-{game}-{width}.png"), full_page=True)
                # The Picture link: the envs' drawing of this seat's view, in the layout for the screen.
                href = pg.get_attribute("#picture", "href")
                layout = "portrait" if width == 390 else "landscape"
                assert pg.locator("#picture").is_visible() and href.endswith(f"/picture?layout={layout}"), href
                size = pg.evaluate("""async (h) => { const b = await (await fetch(h)).blob();
                    const i = await createImageBitmap(b); return [b.type, i.width, i.height]; }""", href)
                assert size == ["image/png", *picture.LAYOUTS[layout]], size
            names = pg.evaluate("[...document.querySelectorAll('#legal button')].map((b) => b.textContent)")
            if names == ["pass"]:
                lone_passes += 1
            if clicks < 2 or clicks == 4:  # the table and the move buttons are on screen at this width
                assert visible_in_viewport(pg, "#legal button") and visible_in_viewport(pg, "#view")
                if width == 390:  # a phone: the hand and the moves at once, however many moves (a band of their own)
                    assert on_screen(pg, "#hands .hand.mine, #hands") and on_screen(pg, "#legal button"), clicks
                    # The New-game form is folded during the game, below the move log, which follows the board.
                    assert not pg.evaluate("document.querySelector('#p-fold').open")
                    top = {k: pg.locator(k).bounding_box()["y"] for k in ("#view", "#log", "#play-side")}
                    assert top["#view"] < top["#log"] < top["#play-side"], top
                assert pg.locator("#legal button").first.get_attribute("title")
            pg.click(f"#legal button >> nth={clicks % len(names)}")
            clicks += 1
            assert clicks < 1500, "the game did not end"
        assert reloaded or clicks <= 3
        assert lone_passes == 0, "a lone pass was offered with auto-pass on"
        assert pg.locator("#result tr").count() >= 3 and pg.locator("#result tr.you").count() == 1
        assert "The game is over" in pg.inner_text("#result")
        assert pg.evaluate("document.querySelector('#p-fold').open")  # the form is back for the next game
        # the round results are in the log, the last round's hands revealed
        assert pg.locator("#moves .round").count() >= 1
        assert pg.locator("#reveal .hand").count() == pg.locator("#result tr").count() - 1
        assert pg.locator("#after-game button").count() == 2
        pg.screenshot(path=str(shots / f"end-{game}-{width}.png"), full_page=True)


def test_a_tap_explains_a_move_on_a_touch_screen(browser, site):
    # A phone shows no hover tooltip: tapping the "?" beside a move says what the move does.
    url, _ = site
    with open_page(browser, 390, 800, touch=True) as pg:
        start(pg, url, "deadfall", seed=7)
        pg.wait_for_selector("#legal button")
        assert pg.evaluate("matchMedia('(hover: none)').matches"), "not a touch screen"
        names = pg.locator("#legal button").all_inner_texts()
        marks = pg.locator("#legal .why-mark")
        assert marks.count() == len(names) and not pg.is_visible("#move-why")
        marks.nth(1).tap()
        why = pg.locator("#move-why")
        assert why.is_visible() and visible_in_viewport(pg, "#move-why")
        text = why.inner_text()
        assert text.startswith(f"{names[1]}: ") and "door card" in text, text  # the engine says what it does now
        marks.nth(0).tap()  # another move's "?" says what that one does
        assert why.is_visible() and why.inner_text().startswith(f"{names[0]}: ")
        marks.nth(0).tap()  # the same "?" again hides it
        assert not why.is_visible()
        assert pg.locator("#moves li").count() == 1, "a tap on a ? played a move"


def test_cards_are_drawn_and_a_lone_pass_waits_when_auto_pass_is_off(browser, site, shots):
    url, _ = site
    with open_page(browser, 1280) as pg:
        start(pg, url, "not_your_mas_jong", seed=3, auto=False)
        pg.wait_for_selector("#legal button")
        # your hand as cards: one per card name, coloured by suit
        hand = pg.locator("#hands .hand.mine .card")
        frame_hand = pg.evaluate("state.shown[state.shown.length - 1].hands[state.game.human]")
        assert hand.count() == len(frame_hand) > 0
        assert [c.strip() for c in hand.all_inner_texts()] == [c.split(" ", 1)[-1] if c.split()[0] in ("Red", "Blue", "Green") else c for c in frame_hand]
        colours = {pg.locator("#hands .hand.mine .card").nth(i).get_attribute("class") for i in range(hand.count())}
        assert colours & {"card red", "card blue", "card green", "card special"}
        assert pg.locator("#hands .hand").count() == 1, "another seat's hand was drawn"
        lone = 0
        for _ in range(200):
            pg.wait_for_selector("#legal button, #result table")
            if pg.locator("#result table").count():
                break
            buttons = pg.locator("#legal button")
            if buttons.count() == 1 and buttons.first.inner_text() == "pass":
                lone += 1
            buttons.first.click()
        assert lone > 0, "with auto-pass off the lone pass is the player's to click"
        # the rules are one click away
        pg.click("#rules-open")
        assert "Not Your Ma's Jong" in pg.inner_text("#rules-text")
        pg.click("#rules-close")
        pg.screenshot(path=str(shots / "cards-1280.png"))


def test_mode_switches_double_clicks_and_failed_loads(browser, site):
    url, folder = site
    with open_page(browser, 1280) as pg:
        start(pg, url, "neu", seed=4)
        pg.wait_for_selector("#legal button")
        moves = pg.locator("#moves li").count()
        game_id = pg.evaluate("state.game.id")
        pg.click("#tab-watch")
        pg.click("#tab-play")
        pg.wait_for_selector("#legal button")
        assert pg.evaluate("state.game.id") == game_id and pg.locator("#moves li").count() == moves
        pg.locator("#legal button").first.click()
        pg.wait_for_selector("#legal button, #result table")
        # a replay that fails to load leaves nothing of the one before on screen
        pg.click("#tab-watch")
        pg.locator("#replays button:not([disabled])").first.click()
        pg.wait_for_selector("text=move 0 /")
        pg.evaluate("openReplay('bad-agents', '0')")
        pg.wait_for_function("document.querySelector('#error').textContent.includes('cannot be read')")
        assert pg.inner_text("#view") == "" and pg.locator("#moves li").count() == 0
        assert pg.locator("#watch-controls").is_hidden()


def test_double_click_on_start_opens_one_game(browser, site):
    url, _ = site
    with running() as server:
        with open_page(browser, 1280) as pg:
            start_url = server.url
            pg.goto(start_url)
            pg.click("#tab-play")
            pg.wait_for_selector("#p-game option[value=neu]", state="attached")
            pg.select_option("#p-game", "neu")
            pg.select_option("#p-bots", "ppo")  # the first game reads the checkpoint: the second click lands while it waits
            pg.dblclick("#start")
            pg.wait_for_selector("#legal button")
            pg.wait_for_timeout(300)
            assert len(server.games.games) == 1


def test_a_bad_header_leaves_the_rest_of_the_list(browser, site):
    url, folder = site
    with open_page(browser, 1280) as pg:
        pg.goto(url)
        pg.wait_for_selector("#replays button")
        good = len(list(folder.glob("*" + replay.SUFFIX))) - 1
        assert pg.locator("#replays button:not([disabled])").count() == good
        bad = pg.locator("#replays button[disabled]")
        assert bad.count() == 1 and "agents must be a list" in bad.first.inner_text()
        assert "won by" in pg.inner_text("#replays")


def tap(pg, selector):
    """Click as a finger does, where the element is: Playwright's click would first scroll it into view."""
    pg.evaluate(f"document.querySelector({selector!r}).click()")


def _board_top(pg) -> float:
    """Where the board's top is in the window (negative: scrolled above it)."""
    return pg.evaluate("document.querySelector('#view').getBoundingClientRect().top")


@pytest.mark.parametrize("width", [390, 1280])
def test_stepping_and_playing_keep_the_board_in_view(browser, site, width):
    url, folder = site
    rep = replay.read(sorted(folder.glob("neu*" + replay.SUFFIX))[0])
    with open_page(browser, width, 800) as pg:
        pg.goto(url)
        pg.locator("#replays button").first.click()
        pg.wait_for_selector(f"text=move 0 / {len(rep.moves)}")
        pg.evaluate("document.querySelector('#view').scrollIntoView({block: 'start'})")
        top = _board_top(pg)
        for step in range(1, 8):
            tap(pg, "#next")
            # the board stays where it was in the window (the page may grow above it; the browser
            # keeps it anchored), so the page never scrolled it away
            assert abs(_board_top(pg) - top) < 2, f"step {step} moved the board to {_board_top(pg)}"
            # no spoilers: the log lists the moves up to the one shown, no further
            shown = pg.locator("#moves li:not([hidden])").count()
            assert shown == step + 1, (step, shown)
        assert abs(_board_top(pg) - top) < 1 and 0 <= _board_top(pg) < 800
        pg.press("body", "End")  # the last step shows the whole log
        assert pg.locator("#moves li:not([hidden])").count() == len(rep.moves) + 1
        # the game's display name, not its id
        assert pg.inner_text("#info").startswith("Neu ·")
        # play: a move keeps the board where it was
        start(pg, url, "not_your_mas_jong", seed=3)
        pg.wait_for_selector("#legal button")
        assert pg.locator("#p-game option[value=not_your_mas_jong]").text_content() == "Not Your Ma's Jong"  # (folded away now)
        # each suited card carries its suit's letter, not its colour alone
        suits = pg.evaluate("[...document.querySelectorAll('#hands .hand.mine .card')].map(c => "
                            "[c.title.split(' ')[0], getComputedStyle(c, '::before').content])")
        suited = [(w, c) for w, c in suits if w in ("Red", "Blue", "Green", "Yellow")]
        assert suited and all(c == f'"{w[0]}"' for w, c in suited), suits
        pg.evaluate("document.querySelector('#view').scrollIntoView({block: 'start'})")
        for _ in range(4):
            pg.wait_for_selector("#legal button, #result table")
            if pg.locator("#result table").count():
                break
            tap(pg, "#legal button")
            pg.wait_for_timeout(50)
            # the page may shorten or grow as the moves change (the browser then shifts it a
            # little), but three quarters of the board at least stay in the window
            box = pg.evaluate("(({top, bottom}) => [top, bottom])(document.querySelector('#view').getBoundingClientRect())")
            seen = min(box[1], 800) - max(box[0], 0)
            assert seen >= 0.75 * (box[1] - box[0]), f"a move moved the board to {box}"


def test_the_rules_dialog_is_formatted_and_opens_at_the_top(browser, site):
    url, _ = site
    with open_page(browser, 390, 700) as pg:
        start(pg, url, "deadfall", seed=1)
        pg.wait_for_selector("#legal button, #result table")
        pg.click("#rules-open")
        text = pg.inner_text("#rules-text")
        assert "**" not in text and "Deadfall" in text
        assert "[D]" not in text and "full reference" in text  # how to play; the reference is folded below
        assert pg.locator("#rules-text h3").count() >= 1 and pg.locator("#rules-text strong").count() >= 1
        assert pg.locator("#rules-text li").count() >= 3
        assert pg.evaluate("document.querySelector('#rules').scrollTop") == 0
        assert pg.text_content("#rules-title") == "Rules: Deadfall"
        pg.click("#rules-reference summary")
        assert "[D]" in pg.inner_text("#rules-text")
        pg.click("#rules-close")
