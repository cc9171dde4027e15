"""Tiny Minotaur rules, scenario by scenario, with the dice scripted (the rulebook's examples first)."""

from __future__ import annotations

import pytest

from tavernzoo.envs.core import Chance, IllegalActionError, ReplayError
from tavernzoo.envs.tiny_minotaur import rules
from tavernzoo.envs.tiny_minotaur.rules import (
    ATTACK_BOSS,
    ATTACK_MIDDLING,
    ATTACK_PHASE,
    ATTACK_REGULAR,
    ATTACK_STRONK,
    BOSS,
    DODGE,
    HEAL,
    MIDDLING,
    PASS,
    REACT_DODGE,
    REACT_HEAL,
    REACT_PHASE,
    REACT_TAKE,
    REGULAR,
    STRONK,
    Config,
    apply,
    legal_actions,
    new_game,
)


def d20(*faces: int) -> Chance:
    return Chance.dice(*[(20, face) for face in faces])


ARCHETYPE_OF = {"sword": "fighter", "magic": "cleric", "cloak": "rogue"}


def config(**options) -> Config:
    """Fixed classes (sword for seat 0, magic for seat 1 unless given) and archetypes (fighter, cleric,
    rogue unless given), so that no chance is drawn before initiative."""
    options.setdefault("classes", ("sword", "magic"))
    options.setdefault("archetypes", tuple(ARCHETYPE_OF[c] for c in options["classes"]))
    return Config(**options)


def game(faces, **options) -> rules.State:
    """A game with fixed classes and archetypes (see ``config``) and scripted d20s."""
    return new_game(config(**options), d20(*faces))


# --- setup ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rolls", "tiers", "first"),
    [
        ((5, 9), (1, 2), 1),  # rulebook: Clarissa 5 -> tier 1, David 9 -> tier 2, David goes first
        ((6, 7), (1, 2), 1),  # tier edges
        ((13, 14), (2, 3), 1),
        ((20, 1), (3, 1), 0),
        ((8, 12), (2, 2), 1),  # "rolling the same Tier is fine"
    ],
)
def test_initiative_sets_tiers_and_first_player(rolls, tiers, first):
    state = game(rolls)
    assert state.tiers == tiers
    assert state.first_seat == first
    assert state.to_act == first and state.phase == ATTACK_PHASE


def test_equal_initiative_rolls_are_rolled_again():
    state = game((11, 11, 4, 4, 3, 17))
    assert state.initiative_rolls == ((11, 11), (4, 4), (3, 17))
    assert state.tiers == (1, 3)  # the final rolls set the tiers
    assert state.first_seat == 1


@pytest.mark.parametrize("ruleset", ["standard", "house_narrowing"])
def test_class_decks_follow_the_box_and_the_class_descriptions(ruleset):
    box = (6, 5, 5, 3, 3)
    decks = rules.load_ruleset(ruleset).decks
    assert sorted(decks) == sorted(rules.ALL_ARCHETYPES)
    for archetype, deck in decks.items():
        assert all(count <= limit for count, limit in zip(deck, box, strict=True)), archetype
        # "most Players have 5 regular attacks to start, clerics have 6"
        assert deck[0] == (6 if archetype == "cleric" else 5), archetype
    by_class = {name: [decks[a] for a in rules.ARCHETYPES[name]] for name in rules.CLASSES}
    for name, pair in by_class.items():
        assert pair[0][1:] == pair[1][1:], f"{name}: archetypes differ only in regular attacks"
    sword, magic, cloak = (by_class[name][0] for name in rules.CLASSES)
    middling, stronk, dodge, heal = 1, 2, 3, 4
    # Sword: "heavy on the middling and Stronk attacks. Bad at dodging."
    assert sword[middling] >= max(magic[middling], cloak[middling])
    assert sword[stronk] > max(magic[stronk], cloak[stronk])
    assert sword[dodge] == min(d[dodge] for d in (sword, magic, cloak)) < cloak[dodge]
    # Magic: "Lots of Middling Power, Low Stronk Power and great heals!"
    assert magic[middling] == 5 and magic[stronk] == min(d[stronk] for d in (sword, magic, cloak))
    # Cloak: "Lots of Middling Power and great at dodging"
    assert cloak[middling] == 5 and cloak[dodge] == 3
    # "Some classes have the ability to heal": Magic, the class described with heals, and no other
    assert magic[heal] == 3 and sword[heal] == cloak[heal] == 0


@pytest.mark.parametrize(("archetype", "regular"), [("fighter", 5), ("paladin", 5), ("sorcerer", 5), ("cleric", 6),
                                                     ("rogue", 5), ("ranger", 5)])
def test_each_archetype_lays_out_its_class_deck_and_clerics_have_six_regular_attacks(archetype, regular):
    class_name = rules.CLASS_OF[archetype]
    state = game((18, 2), classes=(class_name, "sword"), archetypes=(archetype, "fighter"))
    assert state.archetypes == (archetype, "fighter") and state.classes == (class_name, "sword")
    assert state.cards[0][REGULAR] == regular


def test_random_archetypes_are_dealt_among_the_class_s_two():
    chance = Chance.scripted([(2, 1), (2, 0), (20, 9), (20, 3)])
    state = new_game(Config(classes=("magic", "cloak")), chance)
    assert state.archetypes == ("cleric", "rogue") and chance.exhausted
    seen = {new_game(Config(classes=("magic", "sword")), Chance(seed)).archetypes[0] for seed in range(40)}
    assert seen == {"sorcerer", "cleric"}


def test_an_archetype_of_another_class_is_refused():
    with pytest.raises(ValueError, match=r"archetypes\[1\]='cleric' is a magic archetype but classes\[1\]='sword'"):
        Config(classes=("sword", "sword"), archetypes=("fighter", "cleric"))
    with pytest.raises(ValueError, match=r"classes\[0\]='random'"):
        Config(classes=("random", "sword"), archetypes=("rogue", "random"))


def test_the_rulebook_fixed_hit_ranges_are_kept():
    ruleset = rules.load_ruleset("standard")
    assert ruleset.windows[0]["middling"] == (4, 13)
    assert ruleset.windows[1]["stronk"] == (8, 13)
    assert ruleset.tiers == ((1, 6), (7, 13), (14, 20))


def test_random_classes_are_dealt_by_chance():
    chance = Chance.scripted([(3, 2), (2, 1), (3, 0), (2, 0), (20, 9), (20, 3)])
    state = new_game(Config(classes=("random", "random")), chance)
    assert state.classes == ("cloak", "sword") and state.archetypes == ("ranger", "fighter")
    assert chance.exhausted


# --- attacks -------------------------------------------------------------------------------------------


def test_rulebook_attack_example_middling_on_a_4_hits_and_stronk_on_a_15_misses():
    # Clarissa (seat 0, rolled 5: tier 1), David (seat 1, rolled 9: tier 2, first). David opens with a
    # middling that misses (20), Clarissa's middling rolls 4 and hits, David takes it, then David's stronk
    # rolls a 15 and misses: he keeps the card.
    state = game((5, 9, 20, 4, 15))
    apply(state, ATTACK_MIDDLING)
    assert state.cards[1][MIDDLING] == 5 and state.to_act == 0  # a miss keeps the card, the turn passes
    apply(state, ATTACK_MIDDLING)  # roll 4 inside tier 1's 4-13
    assert state.cards[0][MIDDLING] == 4  # the successful card is discarded
    assert state.phase == REACT_PHASE and state.to_act == 1  # David holds dodge and heal: his decision
    apply(state, REACT_TAKE)
    assert state.hp[1] == 70
    assert state.to_act == 1 and state.phase == ATTACK_PHASE  # the next turn is David's
    apply(state, ATTACK_STRONK)  # roll 15 outside tier 2's 8-13
    assert state.cards[1][STRONK] == 1 and state.hp[0] == 100 and state.to_act == 0


def test_regular_attacks_always_hit_without_a_roll():
    state = game((20, 1), classes=("sword", "sword"))
    state.cards[1][DODGE] = state.cards[1][HEAL] = 0
    apply(state, ATTACK_REGULAR)
    assert state.hp[1] == 90 and state.cards[0][REGULAR] == 4
    assert state.chance.exhausted  # no die was rolled for the regular attack


@pytest.mark.parametrize(("tier", "attack", "face", "hits"), [
    (1, ATTACK_MIDDLING, 3, False), (1, ATTACK_MIDDLING, 4, True), (1, ATTACK_MIDDLING, 13, True),
    (1, ATTACK_MIDDLING, 14, False), (2, ATTACK_STRONK, 7, False), (2, ATTACK_STRONK, 8, True),
    (2, ATTACK_STRONK, 13, True), (2, ATTACK_STRONK, 14, False),
    (1, ATTACK_STRONK, 8, False), (1, ATTACK_STRONK, 9, True), (2, ATTACK_MIDDLING, 2, False),
    (2, ATTACK_MIDDLING, 3, True), (3, ATTACK_MIDDLING, 1, False), (3, ATTACK_MIDDLING, 2, True),
    (3, ATTACK_STRONK, 7, True), (3, ATTACK_STRONK, 6, False), (3, ATTACK_STRONK, 13, True),
])
def test_hit_windows_by_tier(tier, attack, face, hits):
    tier_face = {1: 1, 2: 9, 3: 20}[tier]
    state = game((tier_face, 10, face))
    assert state.tiers[0] == tier
    state.to_act = 0  # let seat 0 attack whoever won initiative
    state.cards[1][DODGE] = state.cards[1][HEAL] = 0
    before = state.cards[0][attack]
    apply(state, attack)
    assert (state.hp[1] < 100) == hits
    assert state.cards[0][attack] == before - hits


# --- reactions -----------------------------------------------------------------------------------------


def test_rulebook_dodge_sequence():
    # Player 1 (seat 0, sword, tier 3) lands a stronk; player 2 (seat 1, cloak, tier 1) dodges with a
    # 16 (tier 1 dodge 16-20): the dodge and the attack card are discarded, then player 2 attacks.
    state = game((18, 2, 10, 16), classes=("sword", "cloak"))
    apply(state, ATTACK_STRONK)  # 10 inside tier 3's 7-13
    assert state.phase == REACT_PHASE and state.to_act == 1
    assert legal_actions(state) == [REACT_DODGE, REACT_TAKE]  # a cloak holds no heal
    apply(state, REACT_DODGE)
    assert state.hp[1] == 100  # nullified
    assert state.cards[1][DODGE] == 2  # the successful dodge is discarded
    assert state.cards[0][STRONK] == 4  # so is the nullified attack card
    assert state.to_act == 1 and state.phase == ATTACK_PHASE  # next turn: player 2 chooses an attack


def test_a_failed_dodge_takes_the_damage_and_keeps_the_card():
    state = game((18, 2, 10, 3), classes=("sword", "cloak"))
    apply(state, ATTACK_STRONK)
    apply(state, REACT_DODGE)  # 3 is outside 14-20
    assert state.hp[1] == 50 and state.cards[1][DODGE] == 3
    assert state.to_act == 1 and state.phase == ATTACK_PHASE  # one reaction per hit, then the next turn


@pytest.mark.parametrize(("attack", "hp_before", "heal_face", "hp_after", "heals_left"), [
    (ATTACK_REGULAR, 100, 20, 100, 2),  # +10 net, capped at 100
    (ATTACK_REGULAR, 60, 20, 70, 2),  # a heal turns a regular hit into +10
    (ATTACK_MIDDLING, 60, 20, 50, 2),  # and softens a middling one
    (ATTACK_MIDDLING, 60, 1, 30, 3),  # a failed heal takes the hit and keeps the card
    (ATTACK_REGULAR, 5, 20, 15, 2),  # net with the hit: it saves a player at 5 HP from a regular hit
    (ATTACK_STRONK, 20, 20, 0, 2),  # but not from a 50
])
def test_heal_reaction(attack, hp_before, heal_face, hp_after, heals_left):
    faces = [2, 18] + ([] if attack == ATTACK_REGULAR else [10]) + [heal_face]
    state = game(faces, classes=("magic", "sword"))  # seat 1 (sword, tier 3) attacks seat 0 (magic, tier 1)
    state.hp[0] = hp_before
    apply(state, attack)
    assert state.to_act == 0 and state.phase == REACT_PHASE
    apply(state, REACT_HEAL)
    assert state.hp[0] == hp_after
    assert state.cards[0][HEAL] == heals_left
    if hp_after == 0:
        assert rules.is_terminal(state) and rules.returns(state) == (-1.0, 1.0)


def test_a_defender_without_dodge_or_heal_takes_the_hit_with_no_decision():
    state = game((18, 2), classes=("sword", "sword"))
    state.cards[1][DODGE] = state.cards[1][HEAL] = 0
    apply(state, ATTACK_REGULAR)
    assert state.hp[1] == 90 and state.to_act == 1 and state.phase == ATTACK_PHASE


def test_reactions_are_only_offered_after_a_hit_and_attacks_never_while_reacting():
    state = game((18, 2, 10))
    assert REACT_DODGE not in legal_actions(state) and REACT_TAKE not in legal_actions(state)
    apply(state, ATTACK_STRONK)
    assert set(legal_actions(state)) <= {REACT_DODGE, REACT_HEAL, REACT_TAKE}


# --- the end -------------------------------------------------------------------------------------------


def test_knockout_ends_the_game_plus_one_minus_one():
    state = game((18, 2))
    state.hp[1] = 10
    state.cards[1][DODGE] = state.cards[1][HEAL] = 0
    apply(state, ATTACK_REGULAR)
    assert rules.is_terminal(state) and not rules.is_truncated(state)
    assert state.hp[1] == 0 and rules.returns(state) == (1.0, -1.0)
    assert state.end_reason == rules.KNOCKOUT and legal_actions(state) == []


def test_a_player_without_attack_cards_passes_and_no_attacks_left_is_a_draw():
    state = game((18, 2))
    state.cards[0][REGULAR] = state.cards[0][MIDDLING] = state.cards[0][STRONK] = 0
    state.cards[1][REGULAR] = state.cards[1][MIDDLING] = 0
    state.cards[1][STRONK] = 1
    assert legal_actions(state) == [PASS]
    apply(state, PASS)
    assert state.to_act == 1
    state.cards[0][DODGE] = state.cards[0][HEAL] = 0
    state.chance = Chance.dice((20, 20))  # seat 1 (tier 1) misses its last stronk
    apply(state, ATTACK_STRONK)
    apply(state, PASS)
    state.chance = Chance.dice((20, 10))  # now it hits: no attack card is left anywhere
    apply(state, ATTACK_STRONK)
    assert rules.is_terminal(state) and state.end_reason == rules.NO_ATTACKS_LEFT
    assert rules.returns(state) == (0.0, 0.0)


def test_the_turn_limit_ends_the_game_as_a_truncated_draw():
    state = game((18, 2, *[20] * 3), max_turns=3)
    for _ in range(3):
        apply(state, ATTACK_STRONK)  # 20 misses in every tier
    assert rules.is_terminal(state) and rules.is_truncated(state)
    assert rules.returns(state) == (0.0, 0.0) and state.turn == 3


# --- boss cards ----------------------------------------------------------------------------------------


def test_a_boss_card_replaces_one_attack_card_misses_stay_and_hits_are_discarded():
    state = game((18, 2, 14, 12), bosses=("wyvern_breath", "none"), boss_replaces=("middling", "stronk"))
    assert state.cards[0][BOSS] == 1 and state.cards[0][MIDDLING] == 4 and state.cards[1][BOSS] == 0
    assert state.cards[1][STRONK] == 1  # seat 1 has no boss card: nothing replaced
    state.cards[1][DODGE] = state.cards[1][HEAL] = 0
    assert ATTACK_BOSS in legal_actions(state)
    apply(state, ATTACK_BOSS)  # 14 is outside tier 3's 9-13: kept for another try
    assert state.cards[0][BOSS] == 1 and state.hp[1] == 100
    state.cards[0][DODGE] = state.cards[0][HEAL] = 0
    apply(state, ATTACK_REGULAR)  # seat 1's turn
    apply(state, ATTACK_BOSS)  # 12 hits for 60
    assert state.cards[0][BOSS] == 0 and state.hp[1] == 40
    assert ATTACK_BOSS not in legal_actions(state)


def test_each_seat_chooses_the_card_its_boss_card_replaces():
    """"You must replace one attack card (regular, middling or Stronk)": each player's own choice."""
    state = game((18, 2), bosses=("minotaur_gore", "tavern_brawl"), boss_replaces=("stronk", "middling"))
    assert state.cards[0][:4] == [5, 5, 4, 1] and state.cards[1][:4] == [6, 4, 1, 1]
    state = game((18, 2), bosses=("minotaur_gore", "tavern_brawl"))  # default: a regular card each
    assert state.cards[0][:4] == [4, 5, 5, 1] and state.cards[1][:4] == [5, 5, 1, 1]


def test_every_catalog_boss_has_its_own_damage_and_windows():
    bosses = rules.load_ruleset("standard").bosses
    assert len(bosses) >= 3
    assert len({damage for damage, _ in bosses.values()}) == len(bosses)


# --- bad input -----------------------------------------------------------------------------------------


def test_an_illegal_action_raises_naming_it_and_the_legal_ones_and_changes_nothing():
    state = game((18, 2))
    before = (list(state.hp), [list(c) for c in state.cards], state.to_act, state.turn)
    with pytest.raises(IllegalActionError) as error:
        apply(state, REACT_DODGE)
    message = str(error.value)
    assert "react:dodge" in message and "attack:regular" in message and "attack:stronk" in message
    assert (list(state.hp), [list(c) for c in state.cards], state.to_act, state.turn) == before
    with pytest.raises(IllegalActionError, match="99"):
        apply(state, 99)


@pytest.mark.parametrize(("options", "fragment"), [
    ({"classes": ("sword", "wizard")}, "wizard"),
    ({"classes": ("sword",)}, "one entry per seat"),
    ({"bosses": ("dragon", "none")}, "minotaur_gore"),
    ({"starting_hp": 0}, "starting_hp"),
    ({"starting_hp": -5}, "starting_hp"),
    ({"hp_cap": 50}, "hp_cap"),
    ({"num_players": 3}, "num_players"),
    ({"max_turns": 0}, "max_turns"),
    ({"boss_replaces": ("regular", "dodge")}, r"boss_replaces\[1\]='dodge'.*regular, middling, stronk"),
    ({"boss_replaces": "middling"}, "boss_replaces needs one entry per seat"),
    ({"archetypes": ("fighter", "druid")}, "fighter, paladin, sorcerer, cleric, rogue, ranger"),
    ({"ruleset": "house"}, "standard, house_narrowing"),
    ({"ruleset": "/no/such/file.toml"}, "standard"),
])
def test_bad_configurations_raise_value_errors_naming_the_valid_values(options, fragment):
    with pytest.raises(ValueError, match=fragment):
        Config(**options)


def test_a_boss_cannot_replace_a_card_the_deck_lacks(tmp_path):
    text = rules.resources.files("tavernzoo.envs.tiny_minotaur").joinpath("ruleset.toml").read_text()
    path = tmp_path / "house.toml"
    path.write_text(text.replace("regular = { fighter = 5, paladin = 5 }", "regular = { fighter = 0, paladin = 5 }"))
    with pytest.raises(ValueError, match="seat 0: the fighter deck has no regular card"):
        new_game(config(bosses=("minotaur_gore", "none"), ruleset=str(path)), d20(18, 2))


def test_a_house_ruleset_changes_the_windows_and_a_broken_one_is_refused(tmp_path):
    text = rules.resources.files("tavernzoo.envs.tiny_minotaur").joinpath("ruleset.toml").read_text()
    house = tmp_path / "house.toml"
    house.write_text(text.replace("middling = [4, 13]         # rulebook", "middling = [1, 20]"))
    state = new_game(config(ruleset=str(house)), d20(1, 2, 1))
    state.to_act = 0
    state.cards[1][DODGE] = state.cards[1][HEAL] = 0
    apply(state, ATTACK_MIDDLING)  # a 1 hits in the house window
    assert state.hp[1] == 70
    broken = tmp_path / "broken.toml"
    broken.write_text(text.replace("stronk = [7, 13]", "stronk = [7, 25]"))
    with pytest.raises(ValueError, match=r"ranges.tier_3.stronk"):
        Config(ruleset=str(broken))


@pytest.mark.parametrize(("old", "new", "words"), [
    ("regular = { fighter = 5, paladin = 5 }\nmiddling = 5\nstronk = 5",
     "regular = { fighter = 0, paladin = 5 }\nmiddling = 0\nstronk = 0", "the fighter deck holds no attack card"),
    ("regular = 10 ", "regular = -10 ", r"damage.regular must be a whole number of HP from 0 to 1000000, got -10"),
    ("regular = 10 ", "regular = 10.7 ", r"damage.regular .* got 10.7"),
    ("stronk = 50 ", "stronk = true ", r"damage.stronk .* got True"),
    ("damage = 40", "damage = -40", r"bosses.minotaur_gore.damage .* got -40"),
])
def test_a_house_ruleset_that_makes_the_game_unplayable_is_refused(tmp_path, old, new, words):
    text = rules.resources.files("tavernzoo.envs.tiny_minotaur").joinpath("ruleset.toml").read_text()
    assert old in text
    house = tmp_path / "house.toml"
    house.write_text(text.replace(old, new, 1))
    with pytest.raises(ValueError, match=words):
        Config(ruleset=str(house))
    # A deck with attacks but nothing else still plays: a table may strip the reactions.
    house.write_text(text.replace("dodge = 1\nheal = 0", "dodge = 0\nheal = 0", 1))
    state = new_game(config(ruleset=str(house), classes=("sword", "sword")), d20(18, 2))
    assert legal_actions(state)


def test_scripted_dice_refuse_a_mismatched_die():
    state = new_game(config(), Chance.dice((20, 18), (20, 2), (6, 3)))
    with pytest.raises(ReplayError, match="out of 6"):
        apply(state, ATTACK_MIDDLING)


def test_numpy_integers_are_actions_and_other_types_are_refused():
    import numpy as np

    state = game((18, 2))
    apply(state, np.int64(ATTACK_REGULAR))
    assert state.cards[0][REGULAR] == 4
    with pytest.raises(IllegalActionError, match="not an action index"):
        apply(state, "attack:regular")
    with pytest.raises(IllegalActionError, match="not an action index"):
        apply(state, 1.0)


def test_a_higher_tier_never_has_a_narrower_window_and_the_house_table_narrows():
    """The standard table: every window of a tier holds the window of the tier below (so a higher
    initiative roll never rolls worse; tests/test_tiny_minotaur_solver.py checks the whole game).
    ``house_narrowing`` keeps the first release's table, where each tier up loses one face."""
    standard, house = rules.load_ruleset("standard"), rules.load_ruleset("house_narrowing")
    for lower, higher in ((0, 1), (1, 2)):
        for card in ("middling", "stronk", "dodge", "heal"):
            (low_a, high_a), (low_b, high_b) = standard.windows[lower][card], standard.windows[higher][card]
            assert low_b <= low_a and high_b >= high_a, (card, lower + 1)
            (low_a, high_a), (low_b, high_b) = house.windows[lower][card], house.windows[higher][card]
            assert high_b - low_b == high_a - low_a - 1, (card, lower + 1)
        for name, (_, windows) in standard.bosses.items():
            assert windows[higher][0] <= windows[lower][0] and windows[higher][1] >= windows[lower][1], name
    assert house.windows[0]["middling"] == (4, 13) and house.windows[1]["stronk"] == (8, 13)
    assert house.decks == standard.decks and house.tiers == standard.tiers
