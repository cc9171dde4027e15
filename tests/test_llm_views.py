"""Text and JSON views of a seat (agents/text_views.py): complete, and leak-free over every game."""

from __future__ import annotations

import dataclasses
import json
import random
import re

import pytest
from test_search import IDS, TABLES, positions

from tavernzoo.agents.text_views import (
    EventTracker,
    bounded_events,
    brief_options,
    brief_template,
    rules_brief,
    seat_legal,
    seat_view,
)
from tavernzoo.envs import games, get_game
from tavernzoo.envs.core import Chance, describe_options


@pytest.mark.parametrize(("name", "config"), TABLES, ids=IDS)
def test_changing_any_hidden_part_never_changes_a_seats_text_or_json(name, config):
    # The leak test: a determinized state differs from the real one in everything the seat cannot see
    # (other hands, deck order, the dice to come); the seat's text and JSON must not move.
    game, states = positions(name, config, 25, seed=11)
    chance = Chance(17)
    changed = 0
    for state in states:
        for seat in range(game.rules.num_seats(state.config)):
            real = seat_view(game, state, seat)
            for _ in range(2):
                sample = game.rules.determinize(state, seat, chance)
                changed += sample != state
                other = seat_view(game, sample, seat)
                assert other.text() == real.text()
                assert json.dumps(other.as_json(), sort_keys=True) == json.dumps(real.as_json(), sort_keys=True)
    if name in ("ministeel", "wyvern"):
        assert changed, "the determinized states should differ from the real ones in hidden parts"


@pytest.mark.parametrize(("name", "config"), TABLES, ids=IDS)
def test_the_text_holds_the_view_the_legal_actions_and_the_rules(name, config):
    game, states = positions(name, config, 6, seed=12)
    for state in states:
        for seat in range(game.rules.num_seats(state.config)):
            seen = seat_view(game, state, seat)
            text = seen.text()
            legal = seat_legal(game, state, seat)
            assert [action.index for action in seen.legal] == legal
            names = game.action_names(state.config)
            for number, index in enumerate(legal, start=1):
                assert f"{number}: {names[index]} — " in text  # numbered by position, never by index
            assert rules_brief(game, state.config) in text
            view = game.encoder.view(state, seat)
            assert seen.view == view  # exactly the encoder's view
            assert json.loads(json.dumps(seen.as_json()))["view"] == json.loads(json.dumps(view))
            # Every top-level entry of the view with a value shows up in the text.
            for key, value in view.items():
                if key != "you" and value not in (None, [], {}):
                    assert f"{key}" in text, key


def test_another_players_hand_never_shows_in_ministeel_text():
    game, states = positions("ministeel", {"num_players": 3}, 20, seed=13)
    swapped = 0
    for state in states:
        seat = 0
        text = seat_view(game, state, seat).text()
        # Swap a card kind between another player's hand and the deck: the seat's text stays.
        for other in (1, 2):
            hand = state.hands[other]
            kinds = [kind for kind, count in enumerate(hand) if count]
            spare = [kind for kind in range(len(hand)) if kind in state.deck and kind not in kinds]
            if not kinds or not spare:
                continue
            changed = game.rules.clone(state)
            a, b = kinds[0], spare[0]
            changed.hands[other][a] -= 1
            changed.hands[other][b] += 1
            changed.deck[changed.deck.index(b)] = a
            assert game.encoder.render(changed) != game.encoder.render(state)  # the full table did change
            assert seat_view(game, changed, seat).text() == text
            swapped += 1
    assert swapped > 10


def test_events_are_collected_step_by_step_for_a_seat():
    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    state = game.rules.new_game(config, Chance(4))
    tracker = EventTracker()
    rng = random.Random(2)
    seen_lines = []
    for _ in range(25):
        if game.rules.is_terminal(state):
            break
        legal = game.rules.legal_actions(state)
        game.rules.apply(state, legal[rng.randrange(len(legal))])
        info = game.rules.information_state(state, 0)
        tracker.see(game, info, 0)
        seen_lines += game.encoder.events(info, 0)[1]
    assert tracker.take() == seen_lines
    assert tracker.take() == []


def test_every_game_has_a_rules_brief():
    for game in games().values():
        brief = rules_brief(game, game.make_config())
        assert not brief.startswith("(no rules brief"), game.name
        assert 300 < len(brief) < 2200, game.name
        assert "{" not in brief and "This table's options" not in brief  # all filled; defaults listed nowhere


def other_values(game, name, default):
    """Valid values of option ``name`` other than its default (each alone on a default table)."""
    field = next(f for f in dataclasses.fields(type(game.make_config())) if f.name == name)
    choices = field.metadata.get("choices") or ((True, False) if isinstance(default, bool) else
                                                (default + 1, default - 1) if isinstance(default, int) else ())
    for value in choices:
        if value == default:
            continue
        try:
            yield value, game.make_config({name: value})
        except ValueError:
            continue


@pytest.mark.parametrize("name", sorted(games()))
def test_a_brief_states_the_tables_options_for_default_and_other_values(name):
    # The brief cannot contradict the rules: every fact that depends on an option comes from the config,
    # and every option the text does not state is listed once it differs from the default.
    game = get_game(name)
    default = game.make_config()
    stated = brief_options(name)
    base = rules_brief(game, default)
    template = brief_template(name)
    checked = 0
    for row in describe_options(type(default)):
        option = row["name"]
        value_default = getattr(default, option)
        if isinstance(value_default, int | float) and not isinstance(value_default, bool) and option not in stated:
            # A number the text would state without a placeholder could contradict a table's options.
            assert not re.search(rf"(?<![\w.]){value_default}(?![\w.])", template), (option, value_default)
        for value, config in other_values(game, option, value_default):
            brief = rules_brief(game, config)
            if option in stated:
                assert brief != base, (option, value)  # the stated fact follows the option
                if "{" + option + "}" in template:  # stated as the value itself, not a text chosen by it
                    assert re.search(rf"(?<![\w.]){re.escape(str(value))}(?![\w.])", brief), (option, value)
            else:
                shown = str(value).lower() if isinstance(value, bool) else value
                assert f"{option}={shown} ({row['help']})" in brief, (option, value)
            checked += 1
    assert checked >= 3


def test_the_ministeel_brief_says_card_draw_tokens_go_any_time_under_the_default_rules():
    game = get_game("ministeel")
    default = rules_brief(game, game.make_config())
    assert "your own turn only" not in default and "between other players' actions" in default
    own_turn = rules_brief(game, game.make_config({"token_timing": "own_turn"}))
    assert "in your own turn only" in own_turn and "token_timing=own_turn" in own_turn
    house = rules_brief(game, game.make_config({"starting_hp": 15, "hp_cap": 20, "poison_limit": 3, "num_players": 3}))
    assert "starts with 15 HP" in house and "above 20" in house and "3 poison tokens also put you out" in house
    assert "3 at this table" in house


def test_events_over_the_budget_keep_the_newest_and_summarise_the_older_in_one_line():
    lines = [f"player_{i % 3} attacks player_{(i + 1) % 3} with dagger (1)" for i in range(300)]
    lines += ["round 9:", "player_2 takes 1 damage"]
    shown = bounded_events(lines, budget=2000)
    assert sum(len(line) + 1 for line in shown) <= 2000
    summary, *newest = shown
    assert newest == lines[-len(newest):]  # the newest whole, in order
    older = len(lines) - len(newest)
    assert summary.startswith(f"... {older} earlier event line(s) summarised")
    assert "player_0 attacks x" in summary and "player_2 attacks x" in summary
    counted = sum(int(part.rsplit("x", 1)[1]) for part in summary.split("what: ", 1)[1].replace(";", ",").split(", "))
    assert counted == older  # every older line is counted, none silently dropped
    assert bounded_events(lines[:5]) == lines[:5]  # within the budget: all of them, no summary


def test_a_since_section_built_without_every_step_says_it_holds_only_the_latest():
    game, states = positions("ministeel", {"num_players": 3}, 3, seed=14)
    text = seat_view(game, states[-1], 0).text()
    assert "## The latest events (only the latest step's" in text and "## Since your last decision" not in text
    assert "## Since your last decision\n(nothing new)" in seat_view(game, states[-1], 0, since=[]).text()


# Entries whose names say what they are; every other entry of a view needs a meaning (VIEW_FIELDS).
SELF_EXPLAINING = {"you", "turn", "max_turns", "winner", "end_reason", "num_players", "win_level", "round",
                   "variant", "double_whammy", "seat", "hp", "level", "race", "class", "archetype", "deck",
                   "hand_size", "deck_size", "discard_size", "boss_damage", "max_rounds"}


@pytest.mark.parametrize(("name", "config"), TABLES, ids=IDS)
def test_every_entry_a_seat_is_shown_is_explained_and_every_card_has_its_text(name, config):
    game, states = positions(name, config, 25, seed=15)
    meanings = getattr(game.encoder, "VIEW_FIELDS", {})
    texts = game.encoder.card_texts(states[0].config) if hasattr(game.encoder, "card_texts") else None
    used, cards_seen = set(), 0
    for state in states:
        for seat in range(game.rules.num_seats(state.config)):
            seen = seat_view(game, state, seat)
            text = seen.text()
            for key in seen.fields:
                assert f"\n{key}: {meanings[key]}" in text
            shown = {key for key, value in seen.view.items() if value not in (None, [], {})}
            assert shown - SELF_EXPLAINING <= set(seen.fields), shown - SELF_EXPLAINING - set(seen.fields)
            used |= set(seen.fields)
            if texts is None:
                continue
            own = seen.view.get("hand") or next((p.get("hand") for p in seen.view.get("players", [])
                                                  if p.get("seat") == seat and p.get("hand")), None) or []
            for card in own:  # a list of names or a {name: count} dict
                assert f"\n{card}: {texts[card]}" in text, card
                cards_seen += 1
            if name == "tiny_minotaur":
                for card, count in seen.view["players"][seat]["cards"].items():
                    assert not count or f"\n{card}: {texts[card]}" in text
                    cards_seen += bool(count)
    every_key = set()
    for state in states:
        for key, value in game.encoder.view(state, 0).items():
            every_key.add(key)
            for entry in value if isinstance(value, list) else [value]:
                every_key |= set(entry) if isinstance(entry, dict) else set()
    assert set(meanings) <= every_key  # no meaning of an entry the view no longer has
    assert used
    assert texts is None or cards_seen > 10


def test_the_cards_follow_the_tables_ruleset():
    game = get_game("tiny_minotaur")
    for ruleset in ("standard", "house_narrowing"):
        config = game.make_config({"ruleset": ruleset, "heal_amount": 35})
        state = game.rules.new_game(config, Chance(3))
        text = seat_view(game, state, 0).text()
        assert f"\nheal: {game.encoder.card_texts(config)['heal']}" in text and "heal 35 HP" in text


def test_wyvern_prompts_give_every_players_race_and_class_ability_as_the_rules_count_it():
    from tavernzoo.envs.wyvern import rules as wyvern_rules

    game = get_game("wyvern")
    config = game.make_config({"num_players": 4, "races": ["dwarf", "elf", "pixie", "human"],
                               "classes": ["paladin", "thief", "wizard", "cleric"], "hand_limit": 7,
                               "paladin_helper_wins_ties": True})
    state = game.rules.new_game(config, Chance(1))
    text = seat_view(game, state, 1).text()
    texts = game.encoder.trait_texts(config)
    for player in game.encoder.view(state, 1)["players"]:
        assert f"\n{player['race']}: {texts[player['race']]}" in text
        assert f"\n{player['class']}: {texts[player['class']]}" in text
    assert f"hand limit {wyvern_rules.hand_limit(state, 0)} " in texts["dwarf"]  # the dwarf's limit, as played
    assert "or a helper" in texts["paladin"]


@pytest.mark.parametrize(("name", "config"), TABLES, ids=IDS)
def test_the_event_lines_a_host_collects_on_the_real_state_are_the_seats_own(name, config):
    # The table engine reads a bot's events on the real state, for its seat: the lines must be those of the
    # seat's information state (nothing the seat may not see), at every step.
    from tavernzoo.agents.text_views import event_mark

    game, states = positions(name, config, 30, seed=16)
    for state in states:
        for seat in range(game.rules.num_seats(state.config)):
            info = game.rules.information_state(state, seat)
            assert event_mark(game, state, seat) == event_mark(game, info, seat)


@pytest.mark.parametrize("decks", [(), ("adventurer", "random", "adventurer")])
def test_a_wyvern_prompt_describes_every_card_that_can_come_into_play_at_the_table_and_no_other(decks):
    from tavernzoo.agents.text_views import SeatView
    from tavernzoo.envs.wyvern.decks import CATALOG

    game = get_game("wyvern")
    config = game.make_config({"num_players": 3, "decks": list(decks)})
    at_table = game.encoder.table_cards(config)
    cards = SeatView(game, 0, {}, [], config=config).all_cards
    texts = game.encoder.card_texts(config)
    assert {name for name in cards if name in texts} == at_table < set(texts)
    assert set(game.encoder.trait_texts(config)) <= set(cards)  # every race and class still
    rng = random.Random(3)
    for seed in range(3):
        state = game.rules.new_game(config, Chance(seed))
        for _ in range(300):
            if game.rules.is_terminal(state):
                break
            held = [*state.deck, *state.hand, *state.equipped, *state.discard, [c for _, c in state.table]]
            assert {CATALOG[cid].key for pile in held for cid in pile} <= at_table
            game.rules.apply(state, rng.choice(game.rules.legal_actions(state)))


def test_the_prompts_whole_view_leaves_out_the_events_it_tells_above_it_and_the_flags_that_are_no():
    game, states = positions("wyvern", {"num_players": 3}, 6, seed=16)
    view = game.encoder.view(states[-1], 0)
    complete = seat_view(game, states[-1], 0, since=["player_1 does something"]).table_text()
    partial = seat_view(game, states[-1], 0).table_text()  # only the latest step's lines: the view's list stays
    assert "\nevents:" not in complete and "\nevents:" in partial
    assert "players (of yes/no fields only those that are yes):" in complete
    for player in view["players"]:
        row = next(line for line in complete.splitlines() if f"player_{player['seat']}" in line and "level=" in line)
        for flag in ("dead", "paralyzed", "slowed", "confused"):
            assert (f" {flag}=yes" in row) == player[flag] and f"{flag}=no" not in row
