"""The page in a real headless browser: the system's Chromium driven by Playwright.

    apt-get install chromium && pip install -e ".[web-test]"
    python -m pytest -m browser

Playwright drives the Chromium the system installed (``executable_path``);
nothing is downloaded at run time. Without either, the tests skip and say which is missing.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request

import pytest

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
    with serve(folder) as url:
        yield url, folder


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_watch_a_replay_step_by_step(page, site, tmp_path):
    url, folder = site
    rep = replay.read(sorted(folder.glob("*" + replay.SUFFIX))[0])
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
