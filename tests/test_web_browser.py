"""The page in a real browser: Playwright driving the system's Chromium (Debian's ``chromium`` package).

Playwright's own browser downloads are not used: the tests launch the Chromium found on PATH (or named
by ``TAVERNZOO_CHROMIUM``). Without one they are skipped, with the reason, except under CI (``CI=true``),
where a missing browser fails them: .ci/run installs it. ``TAVERNZOO_SCREENSHOTS=DIR`` saves each game's
page as ``DIR/web-GAME.png`` (how docs/images/ was made).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tavernzoo.web.app import create_app
from tavernzoo.web.server import ServerThread

FIXTURES = Path(__file__).parent / "fixtures"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = os.environ.get("TAVERNZOO_SCREENSHOTS")
SMALL_TABLES = {"tiny_minotaur": None, "minefield": 3, "ministeel": 3, "wyvern": 3}


def _chromium() -> str | None:
    named = os.environ.get("TAVERNZOO_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _unavailable(reason: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs Debian's chromium)")
    pytest.skip(f"{reason}: install Debian's chromium package (apt-get install chromium) to run the browser tests")


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed")
    executable = _chromium()
    if executable is None:
        _unavailable("no Chromium found on PATH (chromium, chromium-browser) nor in TAVERNZOO_CHROMIUM")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def server():
    with ServerThread(create_app(allow_local=True)) as url:
        yield url


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.responses = []
    page.on("response", lambda response: page.responses.append(response) if "/api/tables" in response.url else None)
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(server + "?pace=0")
    page.wait_for_selector("body[data-ready]")
    yield page
    assert not errors, errors
    assert all(url.startswith(server) or url.startswith("data:") for url in requested), requested  # nothing external
    context.close()


def set_option(page, name, value):
    selector = f"#opt-{name}"
    if page.eval_on_selector(selector, "element => element.tagName") == "SELECT":
        page.select_option(selector, json.dumps(value))
    else:
        page.fill(selector, str(value))
        page.dispatch_event(selector, "change")


def set_up(page, game, seats=None, seed=7):
    page.select_option("#game", game)
    if SMALL_TABLES[game]:
        set_option(page, "num_players", SMALL_TABLES[game])
    for seat, choice in enumerate(seats or []):
        if choice.startswith("cmd:"):
            page.select_option(f"#seat-{seat}", "other")
            page.fill(f"#seat-{seat}-spec", choice)
        else:
            page.select_option(f"#seat-{seat}", choice)
    page.fill("#seed", str(seed))
    page.click("#start")


def play_to_the_end(page, shot=None):
    """Press the first action's key whenever it is the person's turn, until the result shows."""
    shot_taken = False
    for _ in range(2000):
        page.wait_for_selector("#actions button.action, #result:not([hidden])")
        if page.is_visible("#result"):
            if shot and not shot_taken:
                page.screenshot(path=shot, full_page=True)
            return page.inner_text("#result")
        if shot and not shot_taken and page.locator("#log li").count() >= 3:
            page.screenshot(path=shot, full_page=True)
            shot_taken = True
        page.keyboard.press("1")  # the keyboard alone plays the game
    raise AssertionError("the game did not end")


def test_the_set_up_page_renders_every_game_and_its_options(page):
    games = page.eval_on_selector_all("#game option", "options => options.map(o => o.value)")
    assert set(games) == set(SMALL_TABLES)
    page.select_option("#game", "ministeel")
    assert page.is_visible("#opt-num_players") and page.locator("#seats select").count() == 4
    set_option(page, "num_players", 5)
    assert page.locator("#seats select").count() == 5
    choices = page.eval_on_selector_all("#seat-1 option", "options => options.map(o => o.value)")
    assert {"human", "heuristic", "random", "zoo:ministeel", "other"} <= set(choices)


@pytest.mark.parametrize("game", sorted(SMALL_TABLES))
def test_a_whole_game_against_a_bot_in_the_browser(page, game, tmp_path):
    shot = str(Path(SHOTS) / f"web-{game}.png") if SHOTS else None
    set_up(page, game)
    result = play_to_the_end(page, shot)
    assert any(words in result for words in ("you win", "you lose", "you share the win")), result
    assert page.get_attribute("#download", "href").endswith("/record")
    # No hidden information of another seat reached the page: not in any response, not in the DOM.
    you = 0
    for response in page.responses:
        if response.request.method == "GET" and "/frames" in response.url:
            for frame in response.json()["frames"]:
                for player in frame["view"].get("players", []):
                    assert player["seat"] == you or "hand" not in player
    owners = page.eval_on_selector_all(".hand", "hands => hands.map(h => h.dataset.owner)")
    assert all(owner == str(you) for owner in owners)
    with page.expect_download() as download:
        page.click("#download")
    path = tmp_path / "game.json"
    download.value.save_as(path)
    assert json.loads(path.read_text())["game"] == game
    page.click("#rematch")
    page.wait_for_selector("#actions button.action, #result:not([hidden])")


def test_a_crashing_program_forfeits_and_the_page_says_so(page):
    set_up(page, "tiny_minotaur", ["human", f"cmd:{sys.executable} {FIXTURES / 'broken_bot.py'} crash"])
    result = play_to_the_end(page)
    assert "you win" in result and "forfeits: crash" in result, result


def test_bots_are_watched_with_pause_and_speed(page):
    set_up(page, "tiny_minotaur", ["heuristic", "random"], seed=3)
    page.wait_for_selector("#watch-controls:not([hidden])")
    page.fill("#speed", "4")
    page.click("#pause")
    assert page.get_attribute("#pause", "aria-pressed") == "true"
    page.click("#pause")
    page.wait_for_selector("#result:not([hidden])")
    assert page.locator("#log li").count() > 2


def test_a_replay_steps_forward_and_back(page, tmp_path):
    from tavernzoo.eval.match import play_match

    path = tmp_path / "games.jsonl"
    play_match("tiny_minotaur", ["heuristic", "random"], 2, seed=1, records_path=path)
    from playwright.sync_api import expect

    note = page.locator("#replay-note")
    page.click("#nav-replay")
    page.set_input_files("#replay-file", str(path))
    page.wait_for_selector("#replay-controls:not([hidden])")
    page.wait_for_selector("#replay-board .player")
    assert page.inner_text("#replay-note") == "the deal"
    page.click("#replay-next")
    expect(note).to_have_text(re.compile(r"^step 1:"))
    page.keyboard.press("ArrowRight")
    expect(note).to_have_text(re.compile(r"^step 2:"))
    page.click("#replay-prev")
    expect(note).to_have_text(re.compile(r"^step 1:"))
    assert page.locator("#replay-game option").count() == 2


def test_the_page_fits_a_phone_sized_window(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(server + "?pace=0")
    page.wait_for_selector("body[data-ready]")
    set_up(page, "wyvern")
    page.wait_for_selector("#actions button.action")
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / "web-phone.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    context.close()
