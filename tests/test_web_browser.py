"""The page in a real browser: Playwright driving the system's Chromium (Debian's ``chromium`` package).

Playwright's own browser downloads are not used: the tests launch the Chromium found on PATH (or named
by ``TAVERNZOO_CHROMIUM``). Without one they are skipped, with the reason, except under CI (``CI=true``),
where a missing browser fails them: .ci/run installs it. ``TAVERNZOO_SCREENSHOTS=DIR`` saves each game's
page as ``DIR/web-GAME.png`` (docs/images/ holds the boards of tests/test_web_board.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tavernzoo.web.app import Limits, create_app
from tavernzoo.web.server import ServerThread

FIXTURES = Path(__file__).parent / "fixtures"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = os.environ.get("TAVERNZOO_SCREENSHOTS")
SMALL_TABLES = {"tiny_minotaur": None, "minefield": 3, "ministeel": 3, "wyvern": 3}


# axe-core, the accessibility checker, from the npm registry: fetched once with ``npm pack`` into a cache
# folder (or named by TAVERNZOO_AXE: a path to axe.min.js), its tarball checked against the registry's hash.
AXE_VERSION = "4.10.2"
AXE_INTEGRITY = "sha512-RE3mdQ7P3FRSe7eqCWoeQ/Z9QXrtniSjp1wUjt5nRC3WIpz5rSCve6o3fsZ2aCpJtrZjSZgjwXAoTO5k4tEI0w=="
AXE_CACHE = Path(os.environ.get("TAVERNZOO_CACHE", Path.home() / ".cache" / "tavernzoo"))


def _axe_source() -> str:
    named = os.environ.get("TAVERNZOO_AXE")
    if named:
        return Path(named).read_text()
    import base64
    import hashlib
    import subprocess
    import tarfile

    folder = AXE_CACHE / f"axe-core-{AXE_VERSION}"
    script = folder / "axe.min.js"
    if not script.is_file():
        npm = shutil.which("npm")
        if npm is None:
            _unavailable("npm is not installed (the browser tests fetch axe-core from the npm registry with it)")
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "pack", f"axe-core@{AXE_VERSION}", "--pack-destination", str(folder)],
                              capture_output=True, text=True, timeout=300)
        tarball = folder / f"axe-core-{AXE_VERSION}.tgz"
        if done.returncode != 0 or not tarball.is_file():
            _unavailable(f"npm pack axe-core@{AXE_VERSION} failed: {done.stderr.strip()[-300:]}")
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != AXE_INTEGRITY:
            tarball.unlink()
            pytest.fail(f"axe-core-{AXE_VERSION}.tgz does not match the registry's integrity hash")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/axe.min.js")
            script.with_suffix(".tmp").write_bytes(member.read())
        script.with_suffix(".tmp").replace(script)
    return script.read_text()


@pytest.fixture(scope="module")
def axe():
    return _axe_source()


def assert_accessible(page, axe_source, where):
    """axe-core on the page as it is now: no serious or critical violation (WCAG 2 A/AA rules)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source)  # through the DevTools protocol: the page's own policy forbids inline scripts
    found = page.evaluate("""() => axe.run(document,
            {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"]}})
        .then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
        .map(v => `${v.id} (${v.impact}): ${v.help}; `
            + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")))""")
    assert not found, f"{where}: {found}"


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


class ManyPeople(Limits):
    # Every page of this module is another person at one address (loopback); the tests leave games unfinished,
    # so one address's quota of tables in use (tests/test_web.py tests it) would refuse the later pages.
    tables_per_client = Limits.tables


@pytest.fixture(scope="module")
def server():
    with ServerThread(create_app(allow_local=True, limits=ManyPeople)) as url:
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
    page.acts = []
    page.on("request", lambda request: page.acts.append(request.url) if request.url.endswith("/act") else None)
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


def settle(page):
    """Let the page's pending events run (a request a key press would send has been sent after this)."""
    page.evaluate("() => new Promise(resolve => setTimeout(resolve, 50))")


def play_to_the_end(page, shot=None, on_turn=None):
    """Press the first action's key whenever it is the person's turn, until the result shows; ``on_turn``
    sees the page at each of the person's turns first."""
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
        if on_turn is not None:
            on_turn(page)
        step = page.evaluate("() => document.querySelector('#actions button.action') && true")
        page.keyboard.press("1")  # the keyboard alone plays the game
        if step and page.locator("#actions button.confirming").count():
            page.keyboard.press("1")  # a move that cannot be taken back: the second press confirms it
    raise AssertionError("the game did not end")


def test_the_set_up_page_renders_every_game_and_its_options(page, axe):
    games = page.eval_on_selector_all("#game option", "options => options.map(o => o.value)")
    assert set(games) == set(SMALL_TABLES)
    page.select_option("#game", "ministeel")
    assert page.is_visible("#opt-num_players") and page.locator("#seats select").count() == 4
    assert_accessible(page, axe, "the set-up page")
    # A bot spec typed in survives the seats being redrawn.
    page.select_option("#seat-2", "other")
    page.fill("#seat-2-spec", "mcts:20")
    set_option(page, "num_players", 5)
    assert page.locator("#seats select").count() == 5
    assert page.input_value("#seat-2") == "other" and page.input_value("#seat-2-spec") == "mcts:20"
    assert page.is_visible("#seat-2-spec")
    choices = page.eval_on_selector_all("#seat-1 option", "options => options.map(o => o.value)")
    assert {"human", "heuristic", "random", "zoo:ministeel", "other"} <= set(choices)
    page.click("#start")
    page.wait_for_selector("#actions button.action, #result:not([hidden])")
    summary = page.evaluate("() => fetch(location.hash.split('&')[0].replace('#table=', '/api/tables/'))"
                            ".then(r => r.json())")
    assert [seat["player"] for seat in summary["seats"]][2] == "mcts:20"


def test_a_table_survives_a_reload_and_back_stays_in_the_app(page, server):
    set_up(page, "tiny_minotaur")
    for _ in range(2):
        page.wait_for_selector("#actions button.action")
        page.keyboard.press("1")
    page.wait_for_selector("#actions button.action, #result:not([hidden])")
    address, log = page.url, page.eval_on_selector_all("#log li", "items => items.map(i => i.textContent)")
    assert "#table=" in address and len(log) >= 3
    page.reload()
    page.wait_for_selector("body[data-ready]")
    page.wait_for_selector("#actions button.action, #result:not([hidden])")
    assert page.url == address and page.is_visible("#table")
    # The same seat, the same history.
    assert page.eval_on_selector_all("#log li", "items => items.map(i => i.textContent)")[:len(log)] == log
    assert page.eval_on_selector_all(".chip.me", "chips => chips.map(c => c.textContent)") == ["player_0: you"]
    page.click("#nav-replay")
    assert page.url.endswith("#replay")
    page.go_back()
    page.wait_for_selector("#table:not([hidden]) #actions button.action, #result:not([hidden])")
    assert page.url == address
    page.go_back()  # before the table: the set-up, still this page
    page.wait_for_selector("#setup:not([hidden])")
    assert page.url.startswith(server)


def test_skip_to_my_turn_shows_the_bots_moves_at_once(browser, server):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(server + "?pace=600000")  # ten minutes between the bots' moves, unless skipped
    page.wait_for_selector("body[data-ready]")
    set_up(page, "tiny_minotaur", seed=7)
    page.wait_for_selector("#actions button.action")
    page.keyboard.press("1")
    page.wait_for_selector("#skip:not([hidden])")
    page.click("#skip")
    page.wait_for_selector("#actions button.action, #result:not([hidden])", timeout=20_000)
    assert page.is_hidden("#skip")
    context.close()


class Turns:
    """What a whole game's turns show: checked at each of the person's turns (``play_to_the_end``)."""

    IRREVERSIBLE = re.compile(r"^(sell|sell_equipped|discard|decline|forfeit)(:|$)")

    # A game's name as the code spells it ("steel_shield", "lose_armor"), not as a person reads it; seats
    # (player_2) and bot specs (zoo:tiny_minotaur) are not such names.
    RAW_NAME = re.compile(r"(?<![\w:/.])[a-z]+(?:_[a-z]+)+(?!\w)")

    def __init__(self, axe):
        self.axe, self.turns, self.pending, self.confirmed, self.card_texts = axe, 0, [], False, set()
        self.raw_names: set[str] = set()

    def read_names(self, page):
        """Note any raw name the board, the log or the actions show a person."""
        for where in ("#board", "#log", "#actions"):
            self.raw_names |= set(self.RAW_NAME.findall(page.inner_text(where)))

    def __call__(self, page):
        self.turns += 1
        if self.turns == 1:
            assert_accessible(page, self.axe, "a player's turn")
            # Space never plays a move, though the first action has the focus.
            assert page.evaluate("() => document.activeElement.matches('#actions button.action')")
            before = len(page.acts)
            page.keyboard.press(" ")
            settle(page)
            assert len(page.acts) == before and page.locator("#actions button.action").count()
        self.read_names(page)
        self.pending += page.eval_on_selector_all(".pending", "nodes => nodes.map(n => n.textContent)")
        self.card_texts |= set(page.eval_on_selector_all("#board .card-text", "nodes => nodes.map(n => n.textContent)"))
        names = page.eval_on_selector_all("#actions button.action", "buttons => buttons.map(b => b.dataset.action)")
        # Every action is in words (its description), its stable name beside it; grouped by kind.
        assert page.locator("#actions .group h4").count() >= 1
        irreversible = [name for name in names if self.IRREVERSIBLE.match(name)]
        if irreversible and not self.confirmed:
            button = page.locator(f'#actions button.action[data-action="{irreversible[0]}"]')
            before = len(page.acts)
            button.click()
            settle(page)
            assert len(page.acts) == before, "a move that cannot be taken back was played at once"
            assert "press again to confirm" in button.inner_text()
            page.keyboard.press("Escape")
            assert "press again to confirm" not in button.inner_text()
            self.confirmed = True
        if len(names) > 9:  # beyond the number keys, the arrows reach every action
            page.focus("#actions button.action")
            page.keyboard.press("End")
            assert page.evaluate("() => document.activeElement.dataset.action") == names[-1]
            page.keyboard.press("Home")


def windows_drawn(page):
    """Each Tiny Minotaur player's windows: the legend's text and the faces of each window's band on the d20 strip."""
    return page.evaluate("""() => [...document.querySelectorAll("#board .player")].map(box => ({
        legend: [...box.querySelectorAll(".legend .key")].map(k => k.textContent),
        faces: Object.fromEntries([...box.querySelectorAll(".d20 .band")].map(band => [band.dataset.kind,
            Array.from({length: band.dataset.high - band.dataset.low + 1},
                       (_, i) => Number(band.dataset.low) + i)]))}))""")


@pytest.mark.parametrize("game", sorted(SMALL_TABLES))
def test_a_whole_game_against_a_bot_in_the_browser(page, game, tmp_path, axe):
    shot = str(Path(SHOTS) / f"web-{game}.png") if SHOTS else None
    set_up(page, game)
    page.wait_for_selector("#actions button.action, #result:not([hidden])")
    assert re.search(r"#table=[\w-]+&seat=[\w-]{32}$", page.url)  # the table's own address, with the seat's token
    if game == "tiny_minotaur":
        # The windows the server sends as text ("16-20 (25%)") colour their faces, and the legend reads them.
        for player in windows_drawn(page):
            for text in player["legend"]:
                kind, low, high = re.fullmatch(r"(\w+) (\d+)–(\d+) \(\d+%\)", text).groups()
                assert player["faces"][kind] == list(range(int(low), int(high) + 1)), player
            assert len(player["legend"]) >= 2 and not any("-" in text for text in player["legend"])
    turns = Turns(axe)
    result = play_to_the_end(page, shot, turns)
    assert any(words in result for words in ("you win", "you lose", "you share the win")), result
    # The final standings in words, every seat named, best first.
    standings = page.eval_on_selector_all("#standings li", "items => items.map(i => i.textContent)")
    assert len(standings) == page.locator("#seatbar .chip").count() and standings[0].startswith("1. ")
    assert all(re.search(r" (wins|does not win|shares the win)", line) for line in standings), standings
    assert not re.search(r"\d\.\d{4}", " ".join(standings)), standings  # returns to 3 significant digits
    turns.read_names(page)
    assert not turns.raw_names, f"names shown as the code spells them: {sorted(turns.raw_names)}"
    if game == "minefield":  # ranked by the order players went out, though every loser's return is the same
        assert [line.split(".")[0] for line in standings] == ["1", "2", "3"], standings
    assert_accessible(page, axe, "game over")
    assert not [text for text in turns.pending if re.search(r"\b(true|false|None|null|undefined)\b", text)]
    if game != "minefield":  # the cards on show say what they do, in words (Minefield has none)
        assert turns.card_texts and not [text for text in turns.card_texts if re.search(r"[a-z]_[a-z]", text)]
    if game == "wyvern":
        assert turns.confirmed  # a sale or a discard came up, and asked to be confirmed
    if game == "ministeel":
        assert turns.pending  # an attack waited for the person's answer, and was told in words
    # The download link carries the seat's token: the record holds every hand (tests/test_web_people.py checks
    # that the table id alone is refused).
    link = page.get_attribute("#download", "href")
    assert "/record?token=" in link
    assert page.evaluate("async (link) => (await fetch(link)).status", link) == 200
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
    # A rematch never says the game is over before its first frame is drawn.
    page.evaluate("""() => { window.turnTexts = [];
        const seen = new MutationObserver(() => window.turnTexts.push([document.querySelector("#turn").textContent,
            document.querySelector("#board").childElementCount]));
        for (const id of ["#turn", "#board"]) seen.observe(document.querySelector(id),
            {childList: true, characterData: true, subtree: true}); }""")
    page.click("#rematch")
    # The old game's result may still show for a moment: wait for the rematch to draw something first.
    page.wait_for_function("() => window.turnTexts.length > 0", timeout=20_000)
    page.wait_for_selector("#actions button.action, #result:not([hidden])")
    seen = page.evaluate("() => window.turnTexts")
    assert seen and ["the game is over", 0] not in seen, seen


def test_a_crashing_program_forfeits_and_the_page_says_so(page):
    set_up(page, "tiny_minotaur", ["human", f"cmd:{sys.executable} {FIXTURES / 'broken_bot.py'} crash"])
    result = play_to_the_end(page)
    assert "you win" in result and "forfeits: crash" in result, result


def expected_log(page, seat):
    """The notes and events of every frame of the table on the page, from ``seat``, as the log should hold them
    (the game's names in words)."""
    made = [r for r in page.responses if r.request.method == "POST" and r.url.endswith("/api/tables")]
    return page.evaluate("""async ([id, seat]) => {
        let since = -1, lines = [];
        for (;;) {
            const reply = await (await fetch(`/api/tables/${id}/frames?since=${since}&seat=${seat}`)).json();
            if (!reply.frames.length) return lines;
            for (const frame of reply.frames) {
                if (frame.note) lines.push(TZ.readable(frame.note));
                lines.push(...frame.events.map(TZ.readable));
                since = frame.step;
            }
        }}""", [made[-1].json()["id"], seat])


def test_bots_are_watched_with_pause_and_speed(page):
    set_up(page, "tiny_minotaur", ["heuristic", "random"], seed=3)
    page.wait_for_selector("#watch-controls:not([hidden])")
    page.fill("#speed", "1")
    page.wait_for_function("() => document.querySelectorAll('#log li').length >= 3")
    page.click("#pause")
    assert page.get_attribute("#pause", "aria-pressed") == "true"
    # Seen from another seat: the log goes on from where it was, nothing told twice.
    page.select_option("#watch-seat", "1")
    page.fill("#speed", "4")
    page.click("#pause")
    page.wait_for_selector("#result:not([hidden])")
    log = page.eval_on_selector_all("#log li", "items => items.map(i => i.textContent)")
    assert len(log) > 2 and log == expected_log(page, 1)
    assert page.inner_text("#verdict").endswith("wins") or "share" in page.inner_text("#verdict")


def test_a_watched_game_logs_every_event_even_identical_ones(page):
    set_up(page, "ministeel", ["heuristic", "heuristic", "heuristic"], seed=3)
    page.wait_for_selector("#watch-controls:not([hidden])")
    page.fill("#speed", "4")
    page.wait_for_selector("#result:not([hidden])")
    log = page.eval_on_selector_all("#log li", "items => items.map(i => i.textContent)")
    assert log == expected_log(page, 0) and len(log) > 40


def test_a_replay_steps_forward_and_back(page, tmp_path, axe):
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
    assert re.search(r"player_\d \(\w+\) wins|share the win|nobody wins", page.inner_text("#replay-summary"))
    page.click("#replay-next")
    expect(note).to_have_text(re.compile(r"^step 1:"))
    page.keyboard.press("ArrowRight")
    expect(note).to_have_text(re.compile(r"^step 2:"))
    page.click("#replay-prev")
    expect(note).to_have_text(re.compile(r"^step 1:"))
    assert page.locator("#replay-game option").count() == 2
    assert_accessible(page, axe, "a replay")
    # Autoplay runs to the last step and stops there.
    page.select_option("#replay-speed", "4")
    page.click("#replay-play")
    assert page.get_attribute("#replay-play", "aria-pressed") == "true"
    last = page.get_attribute("#replay-step", "max")
    expect(page.locator("#replay-where")).to_have_text(f"step {last} of {last}")
    expect(page.locator("#replay-play")).to_have_attribute("aria-pressed", "false")
    assert page.locator("#replay-log li").count() >= 1


@pytest.mark.parametrize("game", sorted(SMALL_TABLES))
def test_the_page_fits_a_phone_sized_window(browser, server, axe, game):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(server + "?pace=0")
    page.wait_for_selector("body[data-ready]")
    if game == "wyvern":
        assert_accessible(page, axe, "the set-up page at 390 px")
    set_up(page, game)
    page.wait_for_selector("#actions button.action")
    # On your turn the page has scrolled to your options.
    page.wait_for_function("() => { const r = document.querySelector('#actions').getBoundingClientRect(); "
                           "return r.top >= 0 && r.top < window.innerHeight; }", timeout=10_000)
    if SHOTS and game == "wyvern":
        page.screenshot(path=str(Path(SHOTS) / "web-phone.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert_accessible(page, axe, "a player's turn at 390 px")
    for _ in range(3):
        if page.is_visible("#result"):
            break
        page.keyboard.press("1")
        if page.locator("#actions button.confirming").count():
            page.keyboard.press("1")
        page.wait_for_selector("#actions button.action, #result:not([hidden])")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    context.close()


def test_card_draw_windows_can_be_left_to_the_table_and_asked_again_in_the_browser(page, axe):
    """MiniSteel at 4: one setting, "never ask me", in one wording, beside the actions all game; checked at the
    first Card Draw window, the table answers that window and every later one (the log says each); unchecked,
    the summary says the person is asked again. The set-up offers the same setting in the same words."""
    page.select_option("#game", "ministeel")
    set_option(page, "num_players", 4)
    setup_text = page.inner_text("#setup-never-ask").strip()
    assert setup_text == ("Never ask me at the Card Draw windows: the table turns each one down for me "
                          "until the game ends")
    page.fill("#seed", "4")
    page.click("#start")
    page.wait_for_selector("#never-ask:not([hidden])")
    assert page.inner_text("#never-ask").strip() == setup_text and not page.is_checked("#never-ask-box")
    for _ in range(200):
        page.wait_for_selector("#actions button.action")
        if page.locator('#actions button.action[data-action="token:pass"]').count():
            break
        page.keyboard.press("1")
        settle(page)
    assert_accessible(page, axe, "a Card Draw window")
    table_id, token = re.search(r"#table=([\w-]+)&seat=([\w-]+)", page.url).groups()
    fetch = f"fetch('/api/tables/{table_id}', {{headers: {{'X-Table-Token': '{token}'}}}}).then(r => r.json())"
    page.check("#never-ask-box")
    page.wait_for_function("() => document.querySelector('#log').textContent.includes('answered for you')")
    page.wait_for_selector("#actions button.action, #result:not([hidden])")  # the person's next own choice
    summary = page.evaluate(f"() => {fetch}")
    assert summary["answer_offers"] is True
    assert not page.locator('#actions button.action[data-action="token:pass"]').count()
    # One wording: nothing on the page says both "asked again" and "not asked again".
    assert "not asked again" not in page.inner_text("body")
    if summary["status"] != "over":
        page.uncheck("#never-ask-box")
        page.wait_for_function(f"() => {fetch}.then(s => s.answer_offers === false)")


def test_never_ask_me_can_be_chosen_at_the_set_up(page):
    page.select_option("#game", "tiny_minotaur")
    assert page.is_hidden("#setup-never-ask")  # a game without such offers does not offer the setting
    page.select_option("#game", "ministeel")
    set_option(page, "num_players", 3)
    page.check("#setup-never-ask-box")
    page.click("#start")
    page.wait_for_selector("#never-ask:not([hidden])")
    assert page.is_checked("#never-ask-box")
    made = [r for r in page.responses if r.request.method == "POST" and r.url.endswith("/api/tables")]
    assert made[-1].json()["answer_offers"] is True


def test_a_seed_past_2_53_is_shown_as_typed(page):
    # A browser's numbers round past 2^53: the seed goes and comes back as digits, so the one shown deals this game.
    big = str(2**60 + 1)
    set_up(page, "tiny_minotaur", ["heuristic", "random"], seed=big)
    page.wait_for_selector("#result:not([hidden])")
    assert f"seed {big}" in page.inner_text("#result-detail")
    assert page.get_attribute("#download", "download") == f"tiny_minotaur-{big}.json"


def test_returns_are_shown_for_people(page):
    # As the terminal prints them (eval/play.py return_text): -0.333, not -0.3333333333333333.
    shown = page.evaluate("() => [-1 / 3, 1, 0, -0, 2 / 3, -0.5, 12.345].map(TZ.returnText)")
    assert shown == ["-0.333", "+1", "0", "0", "+0.667", "-0.5", "+12.3"]


def _person_page(browser, server, width, errors):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.frames_seen = []

    def keep(response):
        if "/frames" in response.url and response.ok:
            page.frames_seen.append(response.json())

    page.on("response", keep)
    return context, page


def test_two_people_and_a_spectator_play_one_table_in_two_browsers(browser, server, axe):
    """Two browser contexts sit at one MiniSteel table with two bots, each seeing only its own hand; a third
    with the spectator link sees no hand; the table's address alone plays no seat. Desktop and 390 px."""
    from test_web import hidden_information_of_others
    from test_web_people import hands_anywhere

    errors: list[str] = []
    first_context, first = _person_page(browser, server, 1100, errors)
    second_context, second = _person_page(browser, server, 390, errors)
    watch_context, watcher = _person_page(browser, server, 390, errors)
    try:
        first.goto(server + "?pace=0")
        first.wait_for_selector("body[data-ready]")
        set_up(first, "ministeel", ["human", "open", "heuristic"], seed=11)
        first.wait_for_selector("#links:not([hidden])")
        assert_accessible(first, axe, "a table with links to share")
        links = first.eval_on_selector_all("#links-list input", "inputs => inputs.map(i => i.value)")
        seat_link = next(link for link in links if "&seat=" in link)
        watch_link = next(link for link in links if "&watch=" in link)
        table_only = seat_link.split("&")[0]
        # The table's address alone: no seat's frames, no move.
        refused = first.evaluate(f"""() => fetch('/api/tables/{table_only.split("=")[1]}/act', {{method: 'POST',
            headers: {{'Content-Type': 'application/json'}}, body: '{{"action": "pass"}}'}}).then(r => r.status)""")
        assert refused == 403
        second.goto(seat_link.replace("/#", "/?pace=0#"))
        watcher.goto(watch_link.replace("/#", "/?pace=0#"))
        second.wait_for_selector("#seatbar .chip.me")
        assert_accessible(second, axe, "the second person's table at 390 px")
        watcher.wait_for_selector("#seatbar .chip")
        for _ in range(3000):
            done = 0
            for page in (first, second):
                if page.is_visible("#result"):
                    done += 1
                elif page.locator("#actions button.action").count():
                    page.keyboard.press("1")
                    if page.locator("#actions button.confirming").count():
                        page.keyboard.press("1")
            if done == 2:
                break
            settle(first)
        else:
            raise AssertionError("the game did not end")
        assert "you " in first.inner_text("#verdict") + second.inner_text("#verdict")
        watcher.wait_for_selector("#result:not([hidden])")
        assert_accessible(watcher, axe, "the spectator's page at the end")
        for you, page in ((0, first), (1, second)):
            assert page.frames_seen and not hidden_information_of_others(page.frames_seen, you)
        assert watcher.frames_seen and not hands_anywhere(watcher.frames_seen)
        assert watcher.locator("#actions button.action").count() == 0
        if SHOTS:
            first.screenshot(path=str(Path(SHOTS) / "web-people-first.png"), full_page=True)
            watcher.screenshot(path=str(Path(SHOTS) / "web-people-spectator.png"), full_page=True)
    finally:
        for context in (first_context, second_context, watch_context):
            context.close()
    assert not errors, errors


def test_a_table_listed_in_the_lobby_is_joined_from_another_browser(browser, server, axe):
    errors: list[str] = []
    first_context, first = _person_page(browser, server, 1100, errors)
    second_context, second = _person_page(browser, server, 390, errors)
    try:
        first.goto(server + "?pace=0")
        first.wait_for_selector("body[data-ready]")
        first.select_option("#game", "tiny_minotaur")
        first.select_option("#seat-1", "open")
        first.check("#lobby-box")
        first.click("#start")
        first.wait_for_selector("#links:not([hidden])")
        table_id = re.search(r"#table=([\w-]+)", first.url)[1]
        second.goto(server + "?pace=0")
        second.wait_for_selector("body[data-ready]")
        join = second.locator(f'#lobby-list button.join[data-table="{table_id}"]')
        join.wait_for()
        assert_accessible(second, axe, "the lobby at 390 px")
        join.click()
        second.wait_for_selector("#seatbar .chip.me")
        assert re.search(rf"#table={table_id}&seat=[\w-]{{32}}$", second.url)
        assert "player_1: you" in second.inner_text("#seatbar")
    finally:
        first_context.close()
        second_context.close()
    assert not errors, errors


@pytest.mark.parametrize("width", [1280, 390])
def test_the_game_is_reviewed_in_place_marked_and_played_on_from_a_step(browser, server, axe, width):
    """After a short game: the review opens on the table, steps back (button and arrow keys), looks from the other
    seat, shows the oracle's marks and plays on from a step at a new table, at a desktop size and at 390 px."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 500)
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server + "?pace=0")
    page.wait_for_selector("body[data-ready]")
    set_up(page, "tiny_minotaur", ["human", "heuristic"], seed=7)
    play_to_the_end(page)
    where = page.locator("#review-where")
    page.click("#review-open")
    expect(where).to_have_text(re.compile(r"^step (\d+) of \1$"))  # the end first
    last = int(where.inner_text().split()[1])
    page.click("#review-prev")
    expect(where).to_have_text(f"step {last - 1} of {last}")
    page.keyboard.press("ArrowLeft")
    expect(where).to_have_text(f"step {last - 2} of {last}")
    page.keyboard.press("ArrowRight")
    expect(where).to_have_text(f"step {last - 1} of {last}")
    page.keyboard.press("Home")
    expect(where).to_have_text(f"step 0 of {last}")
    expect(page.locator("#review-note")).to_have_text("step 0: the deal")
    page.wait_for_selector("#review-marks li")
    assert "exact costs" in page.inner_text("#review-method")
    page.select_option("#review-seat", "1")  # the other seat's view: no "you" on the board
    expect(page.locator("#board .player.me")).to_contain_text("player_1")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert_accessible(page, axe, f"the review at {width} px")
    page.select_option("#review-seat", "0")
    page.keyboard.press("ArrowRight")
    expect(where).to_have_text(f"step 1 of {last}")
    first = page.url
    page.click("#review-branch")
    page.wait_for_function(f"() => location.href !== {json.dumps(first)}")
    page.wait_for_selector("#actions button.action, #result:not([hidden])")
    assert page.locator("#review").is_hidden() and page.locator("#log li").count() >= 1
    context.close()
    assert not errors, errors
