"""The board you play on: each game drawn as a table (the players around it, your hand as cards), a card chosen
and then its target on the board, the d20 strip's every window, the move clock.

The server side (each legal action's card and target, from the game's own ``action_parts``) runs anywhere; the
page's side runs in Chromium with Playwright, as tests/test_web_browser.py does (its fixtures and helpers are
used here), skipped without a browser except under CI. ``TAVERNZOO_SCREENSHOTS=DIR`` saves each game's board
at 1280 and 390 px as ``DIR/board-GAME-WIDTH.png`` (how docs/images/ was made), made small (256 colours).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_web import new_table, wait_for, with_seat_tokens
from test_web_browser import SHOTS, assert_accessible, axe, browser, server, set_option, set_up, settle  # noqa: F401 (fixtures)

from tavernzoo.envs import games
from tavernzoo.envs.make import make_env
from tavernzoo.web.app import create_app
from tavernzoo.web.tables import action_parts

WIDTHS = (1280, 390)


def _strings(node):
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    else:
        yield str(node)


@pytest.mark.parametrize("name", sorted(games()))
def test_every_legal_action_names_a_card_on_show_and_a_seat_at_the_table(name):
    """Random games: each legal action has its parts; a card it plays is one the seat's view shows (its hand,
    its equipment, the cards it picks from), a seat it aims at is another player (MiniSteel's Fate: yourself)."""
    game = games()[name]
    config = game.make_config({"num_players": 3} if name != "tiny_minotaur" else {})
    aimed = carded = 0
    for seed in range(2):
        env = make_env(game, config)
        env.reset(seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter(max_iter=600):
            observation, _, ended, cut, _ = env.last()
            if ended or cut:
                env.step(None)
                continue
            view = env.unwrapped.view(agent)
            legal = view["legal_actions"]
            parts = action_parts(game, config, legal, env.unwrapped.game_state)
            assert set(parts) == set(legal)
            shown = set(_strings({key: value for key, value in view.items()
                                  if key not in ("legal_actions", "events", "last_events")}))
            for action, (card, seat) in parts.items():
                assert card is None or card in shown, (action, card)
                assert seat is None or (0 <= seat < len(env.possible_agents)
                                        and (seat != view["you"] or action.endswith(">self"))), (action, seat)
                aimed += seat is not None
                carded += card is not None
            env.step(rng.choice([i for i, ok in enumerate(observation["action_mask"]) if ok]))
    assert aimed and (carded or name == "minefield")


def test_a_persons_frames_carry_the_parts_of_their_legal_actions():
    with TestClient(create_app(hosts=("testserver",))) as client:
        client = with_seat_tokens(client)
        table = new_table(client, "ministeel", ["human", "heuristic", "heuristic"], seed=3)
        wait_for(client, table["id"])
        frames = client.get(f"/api/tables/{table['id']}/frames", params={"since": -1}).json()["frames"]
        last = frames[-1]
        assert last["view"]["legal_actions"] and set(last["parts"]) == set(last["view"]["legal_actions"])
        at = {name: seat for name, (card, seat) in last["parts"].items() if seat is not None}
        # "play:dagger>seat+1" from player_0 aims at player_1: the offset is turned into the seat.
        assert all(seat == int(name.rsplit("+", 1)[1]) % 3 for name, seat in at.items() if ">seat+" in name), at


# --- in the browser ----------------------------------------------------------------------------------------


def _page(browser, server, width):  # noqa: F811 (the fixtures' names)
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.frames_seen, page.acts = [], []

    def keep(response):
        if "/frames" in response.url and response.ok:
            page.frames_seen += response.json()["frames"]

    page.on("response", keep)
    page.on("request", lambda request: page.acts.append(request.post_data_json.get("action"))
            if request.url.endswith("/act") and request.method == "POST" else None)
    page.goto(server + "?pace=0")
    page.wait_for_selector("body[data-ready]")
    return context, page


def _shown_frame(page):
    """The frame the person chooses in: the last one fetched (the page draws the choices only for it)."""
    return page.frames_seen[-1]


def _fits(page):
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


IRREVERSIBLE = re.compile(r"^(sell|sell_equipped|discard|decline|forfeit)(:|$)")


def _pose(page):
    """For a screenshot: on to a turn where a card in the hand may aim at several players (a few of the person's
    turns at most), and that card chosen, its targets marked on the board. A game without cards (its targets are
    marked already) or with one opponent is shown as it is."""
    if page.locator("#seatbar .chip").count() <= 2:
        return
    for _ in range(12):
        parts = _shown_frame(page)["parts"]
        if not page.locator("#board [data-play]").count():  # no cards in this game
            return
        aims: dict[str, int] = {}
        for name, (card, seat) in parts.items():
            if card is not None and seat is not None and not IRREVERSIBLE.match(name):
                aims[card] = aims.get(card, 0) + 1
        several = sorted(card for card, count in aims.items() if count >= 2)
        if several:
            page.click(f'#board [data-play] button.card.playable[data-card="{several[0]}"]')
            settle(page)
            page.mouse.move(0, 0)
            return
        page.keyboard.press("1")
        if page.locator("#actions button.confirming").count():
            page.keyboard.press("1")
        page.wait_for_selector("#actions button.action, #result:not([hidden])")
        if page.is_visible("#result"):
            return


def _save_small(page, path):
    """A screenshot of the page down to the person's choices, in 256 colours (a few tens of kB)."""
    from PIL import Image

    page.evaluate("() => window.scrollTo(0, 0)")
    # down to the first rows of the action list (it stays under the board)
    bottom = page.evaluate("""() => { const r = document.querySelector('#actions').getBoundingClientRect();
        return Math.min(r.bottom, r.top + 240) + window.scrollY; }""")
    width = page.viewport_size["width"]
    clip = {"x": 0, "y": 0, "width": width, "height": min(bottom + 8, 2400)}
    page.screenshot(path=str(path), full_page=True, clip=clip)
    with Image.open(path) as image:
        image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_ministeel_is_played_on_the_board_a_card_then_its_target(browser, server, axe, width):  # noqa: F811
    """A whole MiniSteel game (3 players) played by clicking a card in the hand and then a player on the table:
    only the players a legal action of that card aims at can be clicked, the move sent is that action, Esc puts
    the card back; the grouped action list is still there. At 1280 and 390 px, axe-core at a chosen card."""
    context, page = _page(browser, server, width)
    try:
        set_up(page, "ministeel", ["human", "heuristic", "heuristic"], seed=5)
        on_board = cancelled = 0
        for _ in range(400):
            page.wait_for_selector("#actions button.action, #result:not([hidden])")
            if page.is_visible("#result"):
                break
            assert page.locator("#actions .group h4").count() >= 1  # the list stays, for keyboards and readers
            frame = _shown_frame(page)
            parts = frame["parts"]
            aimed = {}
            for card, seat in parts.values():
                if card is not None and seat is not None:
                    aimed.setdefault(card, set()).add(seat)
            playable = page.eval_on_selector_all("#board [data-play] button.card.playable",
                                                 "b => b.map(x => x.dataset.card)")
            assert set(playable) == {card for card, _ in parts.values() if card is not None}
            card = next((c for c in playable if c in aimed), None)
            if card is None:
                page.keyboard.press("1")  # no card aims at anyone now (a token, a reaction): the list's first
                if page.locator("#actions button.confirming").count():
                    page.keyboard.press("1")
                continue
            before = len(page.acts)
            page.click(f'#board [data-play] button.card.playable[data-card="{card}"]')
            settle(page)
            if len(page.acts) > before:  # the card's one move (one target): played at the first click
                sent = page.acts[-1]
                assert parts[sent][0] == card and parts[sent][1] in aimed[card]
                on_board += 1
                continue
            targets = page.eval_on_selector_all("#board .player.targetable", "b => b.map(x => Number(x.dataset.seat))")
            assert set(targets) == aimed[card], (card, targets, aimed)  # only legal targets are offered
            if not cancelled:
                assert_accessible(page, axe, f"a card chosen on the board at {width} px")
                page.keyboard.press("Escape")
                settle(page)
                assert page.locator("#board .player.targetable").count() == 0
                assert page.locator('#board button.card[aria-pressed="true"]').count() == 0
                assert len(page.acts) == before
                cancelled += 1
                page.click(f'#board [data-play] button.card.playable[data-card="{card}"]')
            seat = sorted(aimed[card])[on_board % len(aimed[card])]
            # The player's box itself is the target (on its name, not on a button inside it).
            page.click(f'#board .player.targetable[data-seat="{seat}"] h4')
            settle(page)
            if len(page.acts) == before:  # several moves of this card at that player (a combo): one more choice
                choices = page.eval_on_selector_all("#board .board-choice button.choice",
                                                    "b => b.map(x => x.dataset.action)")
                assert choices and all(parts[name] == [card, seat] for name in choices), choices
                page.click("#board .board-choice button.choice")
                settle(page)
            sent = page.acts[-1]
            assert len(page.acts) == before + 1 and parts[sent] == [card, seat], (sent, parts.get(sent), card, seat)
            on_board += 1
            if width == 390:
                assert _fits(page)
        else:
            raise AssertionError("the game did not end")
        assert on_board >= 5 and cancelled == 1, (on_board, cancelled)
        assert re.search(r"you (win|lose|share)", page.inner_text("#verdict")), page.inner_text("#verdict")
        assert_accessible(page, axe, f"game over at {width} px")
        assert not page.errors, page.errors
    finally:
        context.close()


OVERLAPPING = {"game": "tiny_minotaur", "you": 0, "phase": "attack", "to_act": 0, "players": [
    {"seat": seat, "hp": 100, "class": "cloak", "tier": 2,
     "cards": {"regular": 5, "middling": 5, "stronk": 2, "dodge": 3},
     "windows": {"middling": "3-13 (55%)", "stronk": "8-13 (30%)", "dodge": "15-20 (30%)", "heal": "12-20 (45%)"}}
    for seat in (0, 1)]}


def test_the_d20_strip_shows_every_window_overlaps_included(browser, server):  # noqa: F811
    """Tiny Minotaur's windows overlap (heal 12-20 holds dodge 15-20; stronk 8-13 sits inside middling 3-13):
    every face of every window shows that window's colour on the strip, and no face outside it does."""
    context, page = _page(browser, server, 1280)
    try:
        drawn = page.evaluate("""(view) => {
            const board = TZ.renderView(view);
            document.querySelector("main").append(board);
            const box = board.querySelector('.player[data-seat="1"]');
            const strip = box.querySelector(".d20");
            const numbers = Object.fromEntries([...strip.children].filter(e => /^\\d+$/.test(e.textContent.trim()))
                .map(e => { const r = e.getBoundingClientRect();
                            return [e.textContent.trim(), (r.left + r.right) / 2]; }));
            const out = {};
            for (const key of box.querySelectorAll(".legend .key")) {
                const kind = [...key.classList].find(c => c.startsWith("w-")).slice(2);
                const colour = getComputedStyle(key).backgroundColor;
                const painted = [...strip.querySelectorAll("*")]
                    .filter(e => getComputedStyle(e).backgroundColor === colour)
                    .map(e => e.getBoundingClientRect());
                out[kind] = Object.entries(numbers).filter(([, x]) => painted.some(r => r.left <= x && x <= r.right))
                    .map(([face]) => Number(face));
            }
            board.remove();
            return out;
        }""", OVERLAPPING)
        assert drawn == {"middling": list(range(3, 14)), "stronk": list(range(8, 14)), "dodge": list(range(15, 21)),
                         "heal": list(range(12, 21))}, drawn
        bands = page.evaluate("(w) => TZ.d20Bands(w)", OVERLAPPING["players"][0]["windows"])
        assert [(b["kind"], b["low"], b["high"]) for b in bands] == [
            ("middling", 3, 13), ("stronk", 8, 13), ("dodge", 15, 20), ("heal", 12, 20)]
        assert not page.errors, page.errors
    finally:
        context.close()


def test_the_move_clock_counts_down_on_the_page(browser, server, axe):  # noqa: F811
    context, page = _page(browser, server, 390)
    try:
        page.select_option("#game", "tiny_minotaur")
        page.fill("#clock", "60")
        page.fill("#seed", "7")
        page.click("#start")
        page.wait_for_selector("#actions button.action")
        clock = page.locator("#move-clock")
        clock.wait_for(state="visible")
        first = int(re.search(r"(\d+) s left for your move", clock.inner_text())[1])
        assert 0 < first <= 60 and "stand-in" in clock.inner_text()
        assert page.get_attribute("#move-clock", "role") == "timer"
        shown = "document.querySelector('#move-clock').textContent"
        page.wait_for_function(f"() => Number(/(\\d+) s left/.exec({shown})[1]) < {first}", timeout=10_000)
        assert_accessible(page, axe, "a turn on the clock at 390 px")
        # A table without a clock shows none.
        page.click("#nav-setup")
        page.fill("#clock", "")
        page.click("#start")
        page.wait_for_selector("#actions button.action")
        assert page.is_hidden("#move-clock")
        assert not page.errors, page.errors
    finally:
        context.close()


BOARD_TABLES = {"tiny_minotaur": None, "ministeel": 4, "wyvern": 4, "minefield": 5}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("game", sorted(BOARD_TABLES))
def test_each_game_is_drawn_as_a_table(browser, server, axe, game, width):  # noqa: F811
    """The players around the table (you at the bottom, the others in their order after you), the middle of the
    board on the felt, your cards as buttons (only the playable ones enabled); it fits 390 px. In Minefield, with
    no cards, a player is clicked to attack them."""
    context, page = _page(browser, server, width)
    try:
        page.select_option("#game", game)
        if BOARD_TABLES[game]:
            set_option(page, "num_players", BOARD_TABLES[game])
        page.fill("#seed", "7")
        page.click("#start")
        page.wait_for_selector("#actions button.action")
        seats = page.locator("#seatbar .chip").count()
        assert page.locator("#board .seat-you .player.me").count() == 1
        assert page.locator("#board .felt").count() == 1
        around = page.eval_on_selector_all("#board :is(.seat-left, .seat-top, .seat-right) .player",
                                           "b => b.map(x => Number(x.dataset.seat))")
        assert around == [(0 + k) % seats for k in range(1, seats)], around  # the order of play from you
        if seats > 2:
            assert page.locator("#board .seat-left").count() == 1 and page.locator("#board .seat-right").count() == 1
        if game != "minefield":
            cards = page.locator("#board [data-play] button.card")
            assert cards.count() >= 1
            playable = page.locator("#board [data-play] button.card.playable").count()
            disabled = page.locator('#board [data-play] button.card[aria-disabled="true"]').count()
            assert playable + disabled == cards.count()
        assert _fits(page)
        assert_accessible(page, axe, f"{game}'s board at {width} px")
        if SHOTS:
            _pose(page)
            _save_small(page, Path(SHOTS) / f"board-{game}-{width}.png")
        if game == "tiny_minotaur":  # an attack card has one move, at the one opponent: played at the first click
            parts = _shown_frame(page)["parts"]
            card = page.get_attribute("#board [data-play] button.card.playable", "data-card")
            before = len(page.acts)
            page.click(f'#board [data-play] button.card.playable[data-card="{card}"]')
            settle(page)
            assert len(page.acts) == before + 1 and parts[page.acts[-1]] == [card, 1], (card, page.acts[before:])
        if game == "minefield":
            parts = _shown_frame(page)["parts"]
            targets = page.eval_on_selector_all("#board .player.targetable", "b => b.map(x => Number(x.dataset.seat))")
            assert sorted(targets) == sorted(seat for _, seat in parts.values())
            before = len(page.acts)
            page.click(f'#board .player.targetable[data-seat="{targets[-1]}"] button.target')
            settle(page)
            assert page.acts[before:] == [f"target:{targets[-1]}"]
        assert not page.errors, page.errors
    finally:
        context.close()
