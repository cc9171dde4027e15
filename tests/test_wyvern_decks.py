"""Wyvern TCG decks: the catalog, the bundled starter decks and the validator, one case per rule."""

from __future__ import annotations

import copy

import pytest

from tavernzoo.envs.wyvern import decks, rules
from tavernzoo.envs.wyvern.decks import bundled_decks, validate_deck, validate_main


def starter(name: str = "adventurer") -> dict:
    return copy.deepcopy(bundled_decks()[name])


def test_catalog_has_what_the_issue_asks_for():
    kinds = [decks.CATALOG[c].kind for c in decks.ITEMS]
    assert len(decks.ITEMS) >= 15 and len(decks.MONSTERS) >= 15
    assert kinds.count("curse") >= 3 and kinds.count("enhancer") >= 2
    assert {"weapon", "helm", "armor", "boots", "big", "potion", "scroll", "wand"} <= set(kinds)
    assert {decks.CATALOG[c].hands for c in decks.ITEMS if kinds[decks.ITEMS.index(c)] == "weapon"} == {1, 2}
    assert decks.BY_KEY["ancient"].bonus == 10  # the rulebook's own numbers
    assert decks.BY_KEY["potion_of_flame_shield"].bonus == 5 and decks.BY_KEY["potion_of_strength"].bonus == 3
    assert {decks.CATALOG[c].bad for c in decks.MONSTERS} == set(decks.BAD_STUFF)


@pytest.mark.parametrize("name", list(bundled_decks()))
def test_every_bundled_deck_is_legal_and_loads(name):
    assert validate_deck(starter(name)) == []
    deck = decks.load_deck(name)
    assert len(deck.cards) == 80


def test_bundled_decks_cover_each_specialty():
    declared = {s for d in bundled_decks().values() for s in d["specialty"]}
    assert declared == set(decks.SPECIALTIES)
    assert any(len(d["specialty"]) == 2 for d in bundled_decks().values())


def test_rule_exactly_80_cards():
    deck = starter()
    deck["cards"]["slime"] = 1
    errors = validate_deck(deck)
    assert any("80 cards" in e and "79" in e for e in errors)
    assert any("40 monster cards" in e for e in errors)


def test_rule_40_items_and_40_monsters():
    deck = starter()
    deck["cards"]["slime"] = 1
    deck["cards"]["smoke_bomb"] = 3
    errors = validate_deck(deck)
    assert not any("80 cards" in e for e in errors)
    assert any("40 item cards: this one has 41" in e for e in errors)
    assert any("40 monster cards: this one has 39" in e for e in errors)


def test_rule_at_most_four_copies():
    deck = starter()
    deck["cards"]["potion_of_strength"] = 5
    deck["cards"]["holy_water"] = 1
    assert validate_deck(deck) == ["no more than 4 of a particular card: potion_of_strength has 5"]


def test_rule_only_catalog_cards():
    deck = starter()
    deck["cards"]["vorpal_bunny"] = 1
    assert any("unknown card 'vorpal_bunny'" in e for e in validate_deck(deck))


@pytest.mark.parametrize("count", [0, -1, "two", 1.5, True])
def test_rule_counts_are_positive_whole_numbers(count):
    deck = starter()
    deck["cards"]["slime"] = count
    assert any("positive whole number" in e for e in validate_deck(deck))


def test_rule_specialties_must_be_known():
    deck = starter()
    deck["specialty"] = ["lightning"]
    assert any("unknown specialty 'lightning'" in e for e in validate_deck(deck))


def test_rule_element_specialty_means_every_item_has_the_element():
    deck = starter("inferno")
    deck["cards"]["flame_whip"] = 3
    deck["cards"]["iron_helm"] = 1
    assert validate_deck(deck) == ["specialty fire: every item must be fire; not fire: iron_helm"]


def test_rule_alignment_specialty_means_every_item_has_the_alignment():
    deck = starter()
    deck["specialty"] = ["good"]
    assert any(e.startswith("specialty good: every item must be good") for e in validate_deck(deck))


def test_rule_weapon_specialty_means_every_weapon_is_of_that_kind():
    deck = starter("whipmaster")
    deck["cards"]["flame_whip"] = 3
    deck["cards"]["broadsword"] = 1
    assert validate_deck(deck) == ["specialty whip: every weapon must be a whip weapon; not: broadsword"]
    unarmed = starter("glacier")
    unarmed["specialty"] = ["melee"]
    for key in ("frost_whip", "ice_dagger", "glacier_maul"):
        del unarmed["cards"][key]
    unarmed["cards"].update(snowhide_cloak=4, frostwalkers=4, glacial=4, slow=4, frostbite=4, frost_crown=4)
    unarmed["cards"]["ice_bolt_wand"] = 4
    unarmed["cards"]["blizzard_scroll"] = 4
    unarmed["cards"]["frost_nova_wand"] = 4
    errors = validate_deck(unarmed)
    assert "specialty melee: the deck holds no weapons" in errors


def test_rule_at_most_two_themes_no_clashing_specialties():
    deck = starter()
    deck["specialty"] = ["fire", "ice", "whip", "good", "evil"]
    errors = validate_deck(deck)
    assert any("at most two element/weapon specialties" in e for e in errors)
    assert any("two elements" in e for e in errors)
    assert any("good or an evil" in e for e in errors)
    deck["specialty"] = ["whip", "melee"]
    assert any("two weapon kinds" in e for e in validate_deck(deck))
    deck["specialty"] = ["whip", "whip"]
    assert any("declared twice" in e for e in validate_deck(deck))


def test_rule_summon_is_a_monster_in_the_deck():
    deck = starter()
    deck["summon"] = "broadsword"
    assert validate_deck(deck) == ["the summon must be a monster card, got 'broadsword'"]
    deck["summon"] = "wyvern"
    del deck["cards"]["wyvern"]
    deck["cards"]["lich"] = 4
    assert validate_deck(deck) == ["the summon wyvern must be a monster in the deck"]


def test_rule_deck_shape():
    assert validate_deck([1, 2]) == ["a deck must be a table with a [cards] section, got list"]
    errors = validate_deck({"name": "x", "colour": "red"})
    assert any("unknown deck field(s) colour" in e for e in errors)
    assert any("[cards] table" in e for e in errors)


def test_every_broken_rule_is_reported_at_once():
    deck = starter()
    deck["cards"]["potion_of_strength"] = 6
    deck["cards"]["vorpal_bunny"] = 2
    deck["specialty"] = ["fire"]
    deck["summon"] = "nothing"
    assert len(validate_deck(deck)) >= 5


def test_validate_command_exit_status(tmp_path, capsys):
    good = tmp_path / "good.toml"
    bad = tmp_path / "bad.toml"
    text = "name = 'Mine'\nspecialty = ['fire']\n[cards]\n" + "".join(
        f"{k} = {v}\n" for k, v in bundled_decks()["inferno"]["cards"].items())
    good.write_text(text)
    bad.write_text(text.replace("flame_whip = 4", "flame_whip = 5\nvorpal_bunny = 1"))
    assert validate_main([str(good)]) == 0
    assert "legal deck" in capsys.readouterr().out
    assert validate_main([str(bad)]) == 1
    out = capsys.readouterr().out
    assert "NOT a legal deck" in out and "vorpal_bunny" in out and "no more than 4" in out
    garbled = tmp_path / "garbled.toml"
    garbled.write_text("cards = [")
    assert validate_main([str(garbled)]) == 1
    assert validate_main([str(tmp_path / "missing.toml")]) == 1
    assert validate_main(["inferno"]) == 0
    assert validate_main([]) == 2


def test_a_game_refuses_an_illegal_deck_file(tmp_path):
    path = tmp_path / "short.toml"
    path.write_text("[cards]\nslime = 4\n")
    with pytest.raises(ValueError, match="80 cards"):
        rules.Config(num_players=2, decks=(str(path), "adventurer"))
    fine = tmp_path / "fine.toml"
    fine.write_text("[cards]\n" + "".join(f"{k} = {v}\n" for k, v in bundled_decks()["glacier"]["cards"].items()))
    config = rules.Config(num_players=2, decks=(str(fine), "random"))
    assert decks.load_deck(str(fine)).specialty == ()
    assert config.decks[0] == str(fine)
