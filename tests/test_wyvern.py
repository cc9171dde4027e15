"""Wyvern TCG rules: the rulebook's worked example and one scenario per race, class, combat outcome,
help deal, running away, death and looting, curse, selling and the level-25 rule."""

from __future__ import annotations

import random

import pytest

from tavernzoo.envs.core import Chance, IllegalActionError
from tavernzoo.envs.wyvern import rules
from tavernzoo.envs.wyvern.decks import BY_KEY
from tavernzoo.envs.wyvern.rules import (
    ACTION_INDEX,
    ACTION_NAMES,
    ASK,
    DISCARD,
    FREE,
    LOOT_ORDER,
    LOOT_PICK,
    REENTER,
    SETUP,
    WINDOW,
)


def cid(key: str) -> int:
    return BY_KEY[key].cid


def make(n: int = 2, races=None, classes=None, **options) -> rules.State:
    """A table in seat 0's free phase (out of combat), everyone at level 1 with empty hands."""
    config = rules.Config(num_players=n, races=tuple(races or ("dwarf",) * n),
                          classes=tuple(classes or ("cleric",) * n), **options)
    state = rules.new_game(config, Chance(0))
    for seat in range(n):
        state.deck[seat].extend(state.hand[seat])
        state.hand[seat] = []
    state.phase, state.active, state.to_act, state.turn = FREE, 0, 0, 1
    return state


def do(state: rules.State, *names: str) -> None:
    for name in names:
        rules.apply(state, ACTION_INDEX[name])


def legal(state: rules.State) -> list[str]:
    return [ACTION_NAMES[a] for a in rules.legal_actions(state)]


def give(state: rules.State, seat: int, *keys: str) -> None:
    state.hand[seat].extend(cid(k) for k in keys)


def wear(state: rules.State, seat: int, *keys: str) -> None:
    state.equipped[seat].extend(cid(k) for k in keys)


def stack(state: rules.State, seat: int, *keys: str) -> None:
    """Put cards on top of ``seat``'s deck, the first key drawn first."""
    state.deck[seat].extend(cid(k) for k in reversed(keys))


def dice(state: rules.State, *faces: int) -> None:
    state.chance = Chance.dice(*[(6, face) for face in faces])


def keys(cards: list[int]) -> list[str]:
    return sorted(rules.KEYS[c] for c in cards)


# --- the rulebook's worked example ---------------------------------------------------------------------


def test_rulebook_example_potion_backstab_help_ancient_then_run():
    state = make(3)
    state.level[0] = 2
    wear(state, 0, "dragonscale_armor", "cinder_boots")  # +3 armor and +2 boots
    assert rules.combat_level(state, 0) == 7  # "2 + 3 + 2 = 7"
    give(state, 0, "frost_troll", "potion_of_flame_shield")
    give(state, 1, "potion_of_strength", "ancient")
    state.level[2] = 7  # the helper: combat level 7
    do(state, "fight:frost_troll")  # a level 10
    assert state.phase == WINDOW and not rules.party_wins(state)
    assert "equip:iron_helm" not in legal(state)
    do(state, "use:potion_of_flame_shield:party")  # +5: 12 against 10
    assert rules.party_strength(state) == 12 and rules.party_wins(state)
    do(state, "use:potion_of_strength:monster")  # backstab: 13 against 12
    assert rules.monster_strength(state) == 13
    do(state, "pass")  # seat 2
    assert state.to_act == 0 and "run" in legal(state)
    do(state, "offer:+2:1")
    assert state.phase == ASK and state.to_act == 2
    do(state, "accept")
    assert rules.party_strength(state) == 19  # "your levels would be 19 to the monster's 13"
    assert state.to_act == 1
    do(state, "use:ancient:monster")  # +10: 23 to 19
    assert rules.monster_strength(state) == 23
    dice(state, 5)
    do(state, "pass", "pass")  # seats 2 and 0 pass: the window is still open
    assert state.phase == WINDOW
    do(state, "pass")  # seat 1: everyone has passed in a row, the fighter must run
    assert state.phase == FREE and state.level[0] == 2  # a 5 escapes
    assert state.chance.exhausted
    assert keys(state.discard[0]) == ["frost_troll", "potion_of_flame_shield"]
    assert keys(state.discard[1]) == ["ancient", "potion_of_strength"]


def test_failed_run_hits_the_fighter_only_and_death_by_levels_loots_in_chosen_order():
    state = make(3)
    state.level[0], state.level[2] = 2, 7
    wear(state, 0, "dragonscale_armor", "cinder_boots")
    give(state, 0, "frost_troll", "smoke_bomb")
    give(state, 2, "iron_helm")
    wear(state, 2, "broadsword")
    do(state, "fight:frost_troll", "offer:+2:0", "accept")
    state.monster_bonus = 20
    dice(state, 2)  # 2 < 5: caught; Frost Troll: lose 2 levels -> level 0: death by levels
    do(state, "pass", "pass", "pass")
    assert state.phase == LOOT_ORDER and state.to_act == 0
    assert set(legal(state)) == {"loot_order:+1", "loot_order:+2"}
    assert state.level[2] == 7 and keys(state.equipped[2]) == ["broadsword"]  # the partner suffers nothing
    do(state, "loot_order:+2")
    assert state.phase == LOOT_PICK and state.to_act == 2
    do(state, "loot:dragonscale_armor")
    # Seat 1 loots last; looting is a "may", so even the only item left is its choice.
    assert state.phase == LOOT_PICK and state.to_act == 1
    assert set(legal(state)) == {"loot:cinder_boots", "decline"}
    do(state, "loot:cinder_boots")
    assert keys(state.hand[1]) == ["cinder_boots"] and "dragonscale_armor" in keys(state.hand[2])
    assert state.dead[0] and state.level[0] == 1 and state.hand[0] == [] and state.equipped[0] == []
    assert "smoke_bomb" in keys(state.discard[0])
    assert state.active == 1  # the dead fighter's turn ended
    assert state.races[0] == rules.DWARF and state.classes[0] == rules.CLERIC


# --- combat outcomes ---------------------------------------------------------------------------------------


def _door_fight(state: rules.State, monster: str) -> None:
    """Seat 1 ends its turn; seat 0 kicks open ``monster``."""
    state.active = state.to_act = 1
    stack(state, 1, "iron_helm", "potion_of_strength")  # seat 1's face-down draw, then its next door
    stack(state, 0, monster)
    do(state, "pass")
    assert state.phase == WINDOW and state.active == 0 and state.door_card == cid(monster)


def test_defeating_a_door_monster_gives_levels_and_treasure_and_ends_the_turn():
    state = make(2)
    wear(state, 0, "broadsword")
    _door_fight(state, "frost_troll")
    state.level[0] = 8  # 11 against 10
    stack(state, 0, "holy_water", "slime", "rust")
    do(state, "pass", "pass")
    assert state.level[0] == 10  # Frost Troll grants 2 levels
    assert keys(state.hand[0]) == ["holy_water", "rust", "slime"]  # 3 treasures, drawn face down
    assert state.active == 1 and state.phase == FREE  # turn over; seat 1 kicked open a potion
    assert "frost_troll" in keys(state.discard[0])


def test_strictly_higher_wins_ties_lose_and_paladins_win_ties():
    state = make(2)
    _door_fight(state, "slime")  # 1 against 1
    assert not rules.party_wins(state)
    state.classes[0] = rules.PALADIN
    assert rules.party_wins(state)
    state.classes[0] = rules.CLERIC
    state.level[1], state.classes[1] = 0, rules.PALADIN
    state.helper = 1
    assert not rules.party_wins(state)  # the rulebook's paladin is "you", the fighter
    house = make(2, paladin_helper_wins_ties=True)
    _door_fight(house, "slime")
    house.level[1], house.classes[1], house.helper = 0, rules.PALADIN, 1
    assert rules.party_wins(house)


def test_losing_a_door_fight_and_escaping_ends_the_turn_without_bad_stuff():
    state = make(2)
    _door_fight(state, "wraith")
    dice(state, 6)
    do(state, "pass", "pass")
    assert state.level[0] == 1 and state.active == 1 and not state.dead[0]


@pytest.mark.parametrize("monster,worn,left", [
    ("skeleton", ["iron_helm", "broadsword"], ["broadsword"]),
    ("zombie", ["blessed_mail", "iron_helm"], ["iron_helm"]),
    ("giant_rat", ["boots_of_running", "iron_helm"], ["iron_helm"]),
    ("orc_warband", ["broadsword", "fire_axe", "iron_helm"], ["iron_helm"]),
    ("ghoul", ["broadsword", "iron_helm"], ["iron_helm"]),
    ("ogre_mage", ["broadsword", "iron_helm", "blessed_mail"], []),
])
def test_bad_stuff_that_takes_items(monster, worn, left):
    state = make(2)
    wear(state, 0, *worn)
    give(state, 0, monster)
    do(state, f"fight:{monster}")
    state.monster_bonus = 30
    dice(state, 1)
    do(state, "pass", "pass")
    assert keys(state.equipped[0]) == sorted(left) and state.phase == FREE


def test_run_action_is_offered_only_when_losing_and_rolls_at_once():
    state = make(2)
    give(state, 0, "slime", "wraith")
    wear(state, 0, "broadsword")
    do(state, "fight:slime")
    assert "run" not in legal(state)
    do(state, "pass", "pass")
    assert state.level[0] == 2
    do(state, "fight:wraith")
    dice(state, 1)
    do(state, "run")
    # Wraith: lose 3 levels; from level 2 that is death by levels, and seat 1 loots the broadsword.
    do(state, "loot:broadsword")
    assert state.dead[0] and state.level[0] == 1 and "broadsword" in keys(state.hand[1])


def test_run_bonuses_and_slowness():
    state = make(2, races=("elf", "halfling"))
    assert rules.run_bonus(state, 0) == 1 and rules.run_bonus(state, 1) == -1
    wear(state, 0, "boots_of_running")
    assert rules.run_bonus(state, 0) == 3
    state.slow_turn[0] = 1
    assert rules.run_bonus(state, 0) == 1
    give(state, 0, "wraith", "smoke_bomb")
    state.slow_turn[0] = -1
    do(state, "fight:wraith", "use:smoke_bomb:party")
    dice(state, 1)  # 1 + 3 (boots, elf) + 2 (smoke bomb) = 6 >= 5
    do(state, "pass", "pass")
    assert state.level[0] == 1 and not state.dead[0]


def test_only_one_shots_in_combat_and_no_equipping():
    state = make(2)
    give(state, 0, "goblin", "iron_helm", "potion_of_strength", "ancient")
    do(state, "fight:goblin")
    names = legal(state)
    assert "use:potion_of_strength:party" in names
    assert not any(n.startswith(("equip", "sell", "fight")) for n in names)
    assert "use:ancient:monster" not in names  # the fighter does not enhance its own monster


def test_the_window_reopens_after_any_play_and_closes_after_everyone_passes():
    state = make(3)
    give(state, 0, "goblin")
    give(state, 2, "potion_of_strength")
    wear(state, 0, "broadsword", "fire_axe")
    do(state, "fight:goblin", "pass", "pass")
    do(state, "use:potion_of_strength:monster")
    assert state.phase == WINDOW and state.passes == 0
    do(state, "pass", "pass")
    assert state.phase == WINDOW
    do(state, "pass")
    assert state.phase == FREE and state.level[0] == 2  # 7 against 6


# --- help deals ----------------------------------------------------------------------------------------


def test_help_split_is_honoured_and_the_helper_gains_no_level():
    state = make(3)
    state.level[0], state.level[1] = 5, 6
    give(state, 0, "frost_troll")
    do(state, "fight:frost_troll", "offer:+1:2", "accept")
    stack(state, 0, "holy_water", "iron_helm", "rust")
    do(state, "pass", "pass", "pass")
    assert state.level[0] == 7 and state.level[1] == 6
    assert keys(state.hand[1]) == ["holy_water", "iron_helm"] and keys(state.hand[0]) == ["rust"]


def test_elf_helper_gains_a_level():
    state = make(3, races=("dwarf", "elf", "dwarf"))
    state.level[0], state.level[1] = 5, 6
    give(state, 0, "frost_troll")
    do(state, "fight:frost_troll", "offer:+1:0", "accept", "pass", "pass", "pass")
    assert state.level[0] == 7 and state.level[1] == 7


def offers(state: rules.State) -> set[str]:
    return {n for n in legal(state) if n.startswith("offer")}


def test_negotiating_a_treasure_split_with_counter_offers_and_an_improved_offer():
    state = make(3)
    give(state, 0, "wraith")  # 3 treasures
    do(state, "fight:wraith", "offer:+1:0")
    assert state.phase == ASK and state.to_act == 1
    assert set(legal(state)) == {"accept", "decline", "ask:1", "ask:2", "ask:3"}  # a counter asks for more
    do(state, "ask:3")
    assert state.phase == rules.COUNTER and state.to_act == 0
    assert set(legal(state)) == {"accept", "decline", "offer:+1:1", "offer:+1:2"}  # better, below the ask
    do(state, "offer:+1:1")
    assert set(legal(state)) == {"accept", "decline", "ask:2", "ask:3"}  # never more than the last ask
    do(state, "ask:2")
    assert set(legal(state)) == {"accept", "decline"}  # nothing lies between 1 and 2
    do(state, "accept")
    assert state.helper == 1 and state.split == 2 and state.phase == WINDOW and state.to_act == 1
    assert offers(state) == set()  # one helper per combat


def test_a_would_be_helper_may_offer_its_help_unasked():
    state = make(3)
    give(state, 0, "wraith")
    do(state, "fight:wraith", "pass")
    assert {n for n in legal(state) if n.startswith("ask")} == {"ask:0", "ask:1", "ask:2", "ask:3"}
    do(state, "ask:2")
    assert state.phase == rules.COUNTER and state.to_act == 0
    assert set(legal(state)) == {"accept", "decline", "offer:+1:0", "offer:+1:1"}
    do(state, "decline")
    assert state.phase == WINDOW and state.helper == -1 and state.to_act == 1 and state.passes == 0
    assert {n for n in legal(state) if n.startswith("ask")} == {"ask:0", "ask:1", "ask:2"}


def test_a_declined_offer_can_be_renewed_only_higher_and_talks_are_bounded():
    state = make(4, help_rounds=2)
    give(state, 0, "wraith")
    do(state, "fight:wraith", "offer:+1:1", "decline")
    assert state.phase == WINDOW and state.helper == -1 and state.to_act == 1
    do(state, "pass", "pass", "pass")
    assert offers(state) >= {"offer:+1:2", "offer:+1:3"} and "offer:+1:1" not in offers(state)
    do(state, "offer:+1:2", "decline", "pass", "pass", "pass")
    assert not any(n.startswith("offer:+1:") for n in offers(state))  # two offers made: no third
    do(state, "offer:+2:0", "ask:3", "decline", "pass", "pass", "pass")
    do(state, "offer:+2:1", "ask:3")
    assert set(legal(state)) == {"accept", "decline"}  # no offers left to improve on
    do(state, "decline", "pass")
    assert "ask:3" not in legal(state)  # and seat 2 has made its two asks


def test_help_talks_always_end():
    """Whatever the players do, each combat's talks end within the rounds' bound."""
    state = make(6, help_rounds=3)
    give(state, 0, "lich")
    do(state, "fight:lich")
    pick = random.Random(1)
    decisions = 0
    while state.phase in (WINDOW, ASK, rules.COUNTER):
        choices = [a for a in rules.legal_actions(state) if ACTION_NAMES[a] != "run"]
        talk = [a for a in choices if ACTION_NAMES[a].split(":")[0] in ("offer", "ask", "decline")]
        rules.apply(state, pick.choice(talk or choices))
        decisions += 1
        assert decisions < 500
    # 5 others: at most 3 offers and 3 asks each, each answered once; a round of passes after each talk
    assert decisions <= 5 * (3 + 3) * 2 + 6 * (5 * (3 + 3) + 1)


def test_offered_split_is_capped_by_the_treasures():
    state = make(2)
    give(state, 0, "slime")
    do(state, "fight:slime")
    assert offers(state) == {"offer:+1:0", "offer:+1:1"}


def test_one_players_help_per_turn():
    state = make(3)
    state.level[1] = 20
    give(state, 0, "goblin", "zombie")
    do(state, "fight:goblin", "offer:+1:0", "accept", "pass", "pass", "pass")
    do(state, "fight:zombie")
    assert {n.split(":")[1] for n in offers(state)} == {"+1"}
    do(state, "pass")
    assert state.to_act == 1 and "ask:1" in legal(state)  # this turn's helper may offer itself again
    do(state, "pass")
    assert state.to_act == 2 and not any(n.startswith("ask") for n in legal(state))  # seat 2 may not
    relaxed = make(3, one_helper_per_turn=False)
    relaxed.helped_by = 1
    give(relaxed, 0, "zombie")
    do(relaxed, "fight:zombie")
    assert {n.split(":")[1] for n in offers(relaxed)} == {"+1", "+2"}


# --- death -------------------------------------------------------------------------------------------------


def test_eaten_keeps_level_and_looters_draw_two_cards_from_the_hand_when_nothing_is_in_play():
    state = make(3)
    state.level[0] = 9
    give(state, 0, "vampire_lord", "holy_water", "rust", "iron_helm", "slime")
    do(state, "fight:vampire_lord")
    state.chance = Chance.scripted([(6, 0), (4, 0), (3, 2), (2, 1), (1, 0)])  # run: 1; then hand draws
    do(state, "pass", "pass", "pass")
    assert state.phase == LOOT_ORDER
    do(state, "loot_order:+2")
    assert set(legal(state)) == {"loot:hand", "decline"}
    do(state, "loot:hand", "loot:hand")
    assert keys(state.hand[2]) == ["holy_water", "slime"]
    assert keys(state.hand[1]) == ["iron_helm", "rust"]
    assert state.dead[0] and state.level[0] == 9
    assert state.active == 1


def test_dead_player_re_enters_on_the_next_turn_with_a_new_hand_and_may_equip():
    state = make(2)
    state.dead[0] = True
    state.active = state.to_act = 1
    stack(state, 0, "iron_helm", "broadsword", "rust", "slime", "potion_of_strength")
    stack(state, 1, "holy_water")
    do(state, "pass")
    assert state.phase == REENTER and state.active == 0 and not state.dead[0]
    assert keys(state.hand[0]) == ["broadsword", "iron_helm", "rust", "slime"]
    do(state, "equip:iron_helm", "equip:broadsword", "pass")
    assert state.door_card == cid("potion_of_strength") and state.phase == FREE


def test_the_dead_cannot_be_cursed_asked_for_help_or_act_in_a_window():
    state = make(3)
    state.dead[2] = True
    wear(state, 0, "broadsword", "fire_axe")
    give(state, 0, "goblin", "rust")
    assert "curse:rust:+2" not in legal(state) and "curse:rust:+1" in legal(state)
    do(state, "fight:goblin")
    assert not any(n.startswith("offer:+2") for n in legal(state))
    do(state, "pass")
    assert state.to_act == 1
    do(state, "pass")
    assert state.phase == FREE  # two living players passed


def test_a_curse_that_kills_the_fighter_abandons_the_combat():
    state = make(3)
    give(state, 0, "goblin")
    give(state, 1, "level_drain")
    stack(state, 1, "holy_water")
    do(state, "fight:goblin", "pass", "curse:level_drain:+2")
    assert state.dead[0] and state.active == 1 and state.monster == -1 and state.phase == FREE
    assert "goblin" in keys(state.discard[0])


def test_a_curse_that_kills_the_helper_removes_it_and_the_window_goes_on():
    state = make(3)
    state.level[0] = 3
    give(state, 0, "goblin")
    give(state, 2, "level_drain")
    do(state, "fight:goblin", "offer:+1:0", "accept", "pass", "curse:level_drain:+2")
    assert state.dead[1] and state.helper == -1 and state.phase == WINDOW and state.to_act == 0


# --- curses ------------------------------------------------------------------------------------------------


def test_a_curse_kicked_open_hits_the_player_and_ends_the_turn():
    state = make(2)
    state.level[0] = 4
    state.active = state.to_act = 1
    stack(state, 1, "iron_helm")
    stack(state, 0, "level_drain")
    do(state, "pass")
    assert state.level[0] == 3 and state.active == 1 and "level_drain" in keys(state.discard[0])


def test_curses_from_the_hand_on_another_player_in_your_turn_and_in_a_combat():
    state = make(3)
    wear(state, 1, "blessed_mail", "iron_helm")
    give(state, 0, "rust", "goblin")
    give(state, 2, "frostbite")
    do(state, "curse:rust:+1")
    assert keys(state.equipped[1]) == ["iron_helm"]
    do(state, "fight:goblin", "pass", "pass", "curse:frostbite:+2")
    assert state.equipped[1] == []


@pytest.mark.parametrize("race,immune", [("human", True), ("elf", False)])
def test_lose_your_race_and_human_immunity(race, immune):
    state = make(2, races=("dwarf", race))
    give(state, 0, "lose_your_race")
    do(state, "curse:lose_your_race:+1")
    assert (state.races[1] == rules.RACES.index(race)) == immune
    assert immune or state.races[1] == rules.NO_RACE


def test_losing_giant_race_drops_weapons_that_no_longer_fit():
    state = make(2, races=("dwarf", "giant"))
    wear(state, 1, "flamberge", "broadsword")
    give(state, 0, "lose_your_race")
    do(state, "curse:lose_your_race:+1")
    assert keys(state.equipped[1]) == ["flamberge"]


@pytest.mark.parametrize("race", ["pixie", "dwarf"])
def test_paralysis_slow_confusion_and_pixie_immunity(race):
    state = make(2, races=("dwarf", race))
    give(state, 0, "paralysis", "slow", "confusion")
    do(state, "curse:paralysis:+1", "curse:slow:+1", "curse:confusion:+1")
    immune = race == "pixie"
    assert state.paralyzed[1] != immune
    assert (state.slow_turn[1] >= 0) != immune and (state.confused_turn[1] >= 0) != immune
    if not immune:
        assert rules.combat_level(state, 1) == 1 - 3 and rules.run_bonus(state, 1) == -2
    stack(state, 0, "iron_helm", "potion_of_strength")
    do(state, "pass")  # seat 0 ends its turn; a paralysed seat 1 loses its turn
    assert state.active == (0 if not immune else 1)


def test_slow_and_confusion_wear_off_after_the_victims_next_turn():
    state = make(2)
    give(state, 0, "confusion")
    do(state, "curse:confusion:+1")
    stack(state, 0, "iron_helm", "holy_water")  # seat 0's draw, then its next door
    stack(state, 1, "iron_helm", "potion_of_strength")
    do(state, "pass")
    assert state.active == 1 and state.confused_turn[1] >= 0
    do(state, "pass")
    assert state.active == 0 and state.confused_turn[1] == -1


# --- races and classes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("race,bonus", [("human", 1), ("elf", 0), ("halfling", 0), ("naga", 1),
                                        ("rakshasa", 1), ("giant", 1), ("pixie", 0), ("dwarf", 0)])
def test_race_combat_bonuses(race, bonus):
    state = make(2, races=(race, "dwarf"))
    assert rules.combat_level(state, 0) == 1 + bonus


def test_rakshasa_gains_one_more_every_five_levels():
    state = make(2, races=("rakshasa", "dwarf"))
    for level, bonus in ((1, 1), (5, 1), (6, 2), (11, 3), (21, 5)):
        state.level[0] = level
        assert rules.race_bonus(state, 0) == bonus


@pytest.mark.parametrize("race,cls,magic", [("human", "cleric", 1), ("naga", "cleric", 1), ("pixie", "cleric", 1),
                                            ("dwarf", "cleric", 0), ("dwarf", "wizard", 1), ("human", "wizard", 2)])
def test_magic_bonus_adds_to_potions_on_either_side(race, cls, magic):
    state = make(3, races=("dwarf", race, "dwarf"), classes=("cleric", cls, "cleric"))
    give(state, 0, "goblin")
    give(state, 1, "potion_of_strength", "holy_water")
    do(state, "fight:goblin", "pass", "use:potion_of_strength:monster")
    assert state.monster_bonus == 3 + magic
    do(state, "pass", "pass", "use:holy_water:party")
    assert state.party_bonus == 3 + magic


def test_thief_backstabs_for_two_more():
    state = make(2, classes=("cleric", "thief"))
    give(state, 0, "goblin")
    give(state, 1, "enraged")
    do(state, "fight:goblin", "pass", "use:enraged:monster")
    assert state.monster_bonus == 7


def test_warrior_fights_alone_at_plus_two_and_cleric_turns_undead():
    state = make(3, classes=("warrior", "cleric", "cleric"))
    give(state, 0, "goblin")
    do(state, "fight:goblin")
    assert rules.party_strength(state) == 3
    do(state, "offer:+1:0", "accept")
    assert rules.party_strength(state) == 1 + 1  # no warrior bonus with a helper
    cleric = make(2)
    give(cleric, 0, "skeleton")
    do(cleric, "fight:skeleton")
    assert rules.party_strength(cleric) == 4 and not rules.party_wins(cleric)  # a tie without a paladin


def test_wizard_runs_at_plus_one():
    state = make(2, classes=("wizard", "cleric"))
    assert rules.run_bonus(state, 0) == 1


def test_giant_wields_two_handed_weapons_in_one_hand():
    state = make(2, races=("giant", "dwarf"))
    give(state, 0, "flamberge", "scourge")
    give(state, 1, "flamberge", "broadsword")
    do(state, "equip:flamberge", "equip:scourge")
    assert keys(state.equipped[0]) == ["flamberge", "scourge"]
    state.active = state.to_act = 1
    do(state, "equip:flamberge")
    assert "equip:broadsword" not in legal(state)


def test_slots_one_helm_one_armor_one_boots_and_one_big_item_except_dwarves():
    state = make(2, races=("elf", "dwarf"))
    give(state, 0, "iron_helm", "frost_crown", "glacier_maul", "battering_ram", "blessed_mail")
    do(state, "equip:iron_helm", "equip:glacier_maul")
    names = legal(state)
    assert "equip:frost_crown" not in names and "equip:battering_ram" not in names
    assert "equip:blessed_mail" in names
    state.active = state.to_act = 1
    give(state, 1, "glacier_maul", "battering_ram")
    do(state, "equip:glacier_maul", "equip:battering_ram")
    assert keys(state.equipped[1]) == ["battering_ram", "glacier_maul"]


def test_hand_limit_is_five_and_six_for_a_dwarf():
    state = make(2, races=("elf", "dwarf"))
    give(state, 0, "rust", "rust", "slow", "slow", "slime")
    stack(state, 0, "goblin")
    stack(state, 1, "holy_water")
    do(state, "pass")  # draws a sixth card
    assert state.phase == DISCARD and set(legal(state)) == {"discard:rust", "discard:slow", "discard:slime",
                                                             "discard:goblin"}
    do(state, "discard:slime")
    assert state.active == 1 and len(state.hand[0]) == 5
    assert rules.hand_limit(state, 1) == 6


def _helper_paid_over_the_limit(**options) -> rules.State:
    state = make(3, races=("elf", "human", "elf"), **options)
    state.level[0], state.level[1] = 5, 6
    give(state, 0, "frost_troll")
    give(state, 1, "rust", "rust", "slow", "slime")
    stack(state, 0, "holy_water", "iron_helm", "broadsword")
    do(state, "fight:frost_troll", "offer:+1:3", "accept", "pass", "pass", "pass")  # 12 against 10
    return state


def test_a_hand_over_the_limit_is_cut_down_at_once_even_on_another_players_turn():
    state = _helper_paid_over_the_limit()
    assert len(state.hand[1]) == 7 and state.active == 0
    assert state.phase == DISCARD and state.to_act == 1  # before anyone decides anything else
    assert "discard:broadsword" in legal(state) and "discard:slime" in legal(state)
    do(state, "discard:slime")
    assert state.phase == DISCARD and state.to_act == 1
    do(state, "discard:rust")
    assert len(state.hand[1]) == 5 and state.phase == FREE and state.to_act == 0  # back to seat 0's turn
    assert keys(state.discard[1]) == ["rust", "slime"]


def test_the_hand_limit_only_at_the_end_of_ones_own_turn_as_a_house_rule():
    state = _helper_paid_over_the_limit(hand_limit_always=False)
    assert len(state.hand[1]) == 7 and state.phase == FREE and state.to_act == 0


def test_a_card_kicked_open_over_the_limit_is_shed_before_playing_on():
    state = make(2, races=("elf", "elf"))
    state.active = state.to_act = 1
    give(state, 0, "rust", "rust", "slow", "slow", "slime")
    stack(state, 1, "iron_helm")
    stack(state, 0, "broadsword")
    do(state, "pass")  # seat 1 ends its turn; seat 0 kicks open a broadsword: six cards
    assert state.phase == DISCARD and state.to_act == 0 and state.active == 0
    do(state, "discard:slime")
    assert state.phase == FREE and "equip:broadsword" in legal(state)


def test_a_looter_may_take_nothing_and_one_over_the_limit_sheds_at_once():
    state = make(3, races=("elf", "elf", "elf"))
    give(state, 0, "wraith")
    wear(state, 0, "broadsword", "iron_helm")
    give(state, 1, "rust", "rust", "slow", "slow", "slime")
    do(state, "fight:wraith")
    dice(state, 1)
    do(state, "run", "loot_order:+1")  # level 1 - 3: death by levels; seat 1 loots first
    assert state.phase == LOOT_PICK and "decline" in legal(state)
    do(state, "loot:broadsword")
    assert state.phase == DISCARD and state.to_act == 1
    do(state, "discard:slime")
    assert state.phase == LOOT_PICK and state.to_act == 2
    do(state, "decline")
    assert state.hand[2] == [] and "iron_helm" in keys(state.discard[0]) and state.dead[0]
    assert any(e[0] == "loot_none" for e in state.events)


# --- selling and the winning level -------------------------------------------------------------------------


def test_selling_1000_gold_in_a_turn_buys_a_level_several_times():
    state = make(2)
    give(state, 0, "flamberge", "glacier_maul", "broadsword", "iron_helm", "dragonscale_armor")
    wear(state, 0, "blessed_mail")
    do(state, "sell:flamberge")
    assert state.level[0] == 1 and state.gold == 600
    do(state, "sell_equipped:blessed_mail")
    assert state.level[0] == 2 and state.gold == 0
    do(state, "sell:glacier_maul", "sell:broadsword")
    assert state.level[0] == 3
    stack(state, 0, "slime")
    stack(state, 1, "holy_water")
    do(state, "sell:iron_helm", "pass")
    assert state.gold == 0  # leftover gold does not carry over to the next turn


def test_halfling_sells_one_item_a_turn_at_double_value():
    state = make(2, races=("halfling", "dwarf"))
    give(state, 0, "glacier_maul", "broadsword")
    do(state, "sell:glacier_maul")
    assert state.level[0] == 2 and state.gold == 200
    do(state, "sell:broadsword")
    assert state.gold == 600


def test_selling_never_reaches_the_winning_level():
    state = make(2)
    state.level[0] = 23
    give(state, 0, "flamberge", "glacier_maul", "dragonscale_armor", "fire_axe")
    do(state, "sell:flamberge", "sell:glacier_maul")
    assert state.level[0] == 24
    assert not any(n.startswith("sell") for n in legal(state))


def test_level_25_is_reached_only_by_defeating_a_monster_and_ends_the_game():
    state = make(4)
    state.level[0] = 24
    wear(state, 0, "broadsword")
    give(state, 0, "goblin")
    do(state, "fight:goblin", "pass", "pass", "pass", "pass")
    assert rules.is_terminal(state) and state.winner == 0 and not rules.is_truncated(state)
    assert rules.returns(state) == (1.0, -1 / 3, -1 / 3, -1 / 3)
    assert rules.current_seat(state) == -1 and rules.legal_actions(state) == []


def test_the_winning_level_caps_and_elf_helpers_stop_one_short():
    state = make(2, races=("dwarf", "elf"))
    state.level[0], state.level[1] = 20, 24
    give(state, 0, "wyvern")
    state.monster_bonus = 0
    do(state, "fight:wyvern", "offer:+1:0", "accept", "pass", "pass")
    assert state.level[0] == 23 and state.level[1] == 24 and not rules.is_terminal(state)


# --- setup, turn order, doors ----------------------------------------------------------------------------


def test_setup_draws_four_lets_everyone_play_items_then_the_highest_roll_starts():
    config = rules.Config(num_players=3, races=("dwarf",) * 3, classes=("cleric",) * 3)
    state = rules.new_game(config, Chance(5))
    assert [len(h) for h in state.hand] == [4, 4, 4] and state.phase == SETUP and state.to_act == 0
    assert all(len(d) == 76 for d in state.deck)
    state.chance = Chance.dice((6, 5), (6, 2), (6, 5), (6, 3), (6, 4))
    stack(state, 0, "holy_water")
    stack(state, 2, "holy_water")
    do(state, "pass", "pass", "pass")
    assert state.order_rolls == [(5, 2, 5), (3, 4)]  # seats 0 and 2 tie and roll again
    assert state.first_seat == 2 and state.active == 2 and state.phase == FREE
    assert state.door_card == cid("holy_water")


def test_door_item_goes_to_the_hand_then_free_play_then_a_face_down_draw_ends_the_turn():
    state = make(2)
    state.active = state.to_act = 1
    stack(state, 1, "iron_helm")
    stack(state, 0, "broadsword", "rust")
    do(state, "pass")
    assert state.phase == FREE and keys(state.hand[0]) == ["broadsword"]
    do(state, "equip:broadsword")
    stack(state, 1, "holy_water")
    do(state, "pass")
    assert keys(state.hand[0]) == ["rust"] and state.active == 1


def test_fighting_monsters_from_the_hand_as_often_as_you_like():
    state = make(2)
    wear(state, 0, "broadsword")
    give(state, 0, "slime", "giant_rat")
    stack(state, 0, "rust", "slow")
    do(state, "fight:slime", "pass", "pass")
    assert state.phase == FREE and state.level[0] == 2
    do(state, "fight:giant_rat", "pass", "pass")
    assert state.phase == FREE and state.level[0] == 3


# --- specialty decks and summons ---------------------------------------------------------------------------


def test_specialty_deck_bonuses():
    state = make(4, decks=("inferno", "frost_blade", "paladins_oath", "dark_pact"))
    assert state.static_bonus == [2, 1, 2, 2]  # single +2, dual +1, good and evil +2 per opposing deck
    off = make(4, decks=("inferno", "frost_blade", "paladins_oath", "dark_pact"), specialty_bonuses=False)
    assert off.static_bonus == [0, 0, 0, 0]
    assert rules.specialty_bonus((("good",), ("evil",), ("evil", "fire")), 0) == 4


def test_summons_are_set_aside_and_can_join_a_fight_or_be_fought_angry():
    state = make(2, summons=True, decks=("adventurer", "glacier"))
    assert state.summon == [cid("goblin"), cid("ice_drake")]
    assert sum(1 for c in state.deck[0] + state.hand[0] if c == cid("goblin")) == 1
    give(state, 0, "slime")
    do(state, "fight:slime", "pass")
    do(state, "summon:join")
    assert rules.monster_strength(state) == 1 + 16 and state.summon[1] == -1
    do(state, "summon:aid")
    assert rules.party_strength(state) == 1 + 3
    do(state, "pass")
    dice(state, 6)
    do(state, "pass")
    assert "ice_drake" in keys(state.discard[1]) and "goblin" in keys(state.discard[0])
    angry = make(2, summons=True)
    do(angry, "summon:fight")
    assert rules.monster_strength(angry) == 3 + 5 and angry.summon[0] == -1


# --- errors and limits -------------------------------------------------------------------------------------


def test_illegal_action_raises_naming_it_and_changes_nothing():
    state = make(2)
    before = (list(state.hand[0]), state.phase, state.steps)
    with pytest.raises(IllegalActionError, match="equip:broadsword.*legal now: pass"):
        do(state, "equip:broadsword")
    assert (list(state.hand[0]), state.phase, state.steps) == before


@pytest.mark.parametrize("options,message", [
    ({"num_players": 7}, "num_players"),
    ({"races": ("elf",)}, "races"),
    ({"races": ("orc", "elf")}, "races\\[0\\]"),
    ({"classes": ("bard", "paladin")}, "classes\\[0\\]"),
    ({"decks": ("nope", "inferno")}, "nope"),
    ({"win_level": 1}, "win_level"),
    ({"summons": 1}, "summons"),
])
def test_bad_config_is_rejected_naming_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        rules.Config(num_players=options.pop("num_players", 2), **options)


def test_turn_limit_truncates_without_a_winner():
    state = make(2, max_turns=1)
    stack(state, 0, "iron_helm")
    do(state, "pass")
    assert rules.is_terminal(state) and rules.is_truncated(state) and rules.returns(state) == (0.0, 0.0)


def test_level_reward_shapes_the_final_returns_only_when_asked():
    state = make(2, max_turns=1, level_reward=0.24)
    state.level[0] = 13
    stack(state, 0, "iron_helm")
    do(state, "pass")
    assert rules.returns(state) == pytest.approx((0.12, 0.0))


def test_rulebook_example_a_level_10_needs_four_more_or_three_for_a_paladin():
    for cls, potion, wins in (("cleric", "potion_of_strength", False), ("paladin", "potion_of_strength", True),
                              ("cleric", "holy_water", False), ("cleric", "potion_of_flame_shield", True)):
        state = make(2, classes=(cls, "cleric"))
        state.level[0] = 2
        wear(state, 0, "dragonscale_armor", "cinder_boots")
        give(state, 0, "frost_troll", potion)
        do(state, "fight:frost_troll", f"use:{potion}:party")
        assert rules.party_wins(state) == wins, (cls, potion)


def test_potions_from_others_on_the_party_do_not_count_as_helping():
    state = make(3)
    give(state, 0, "goblin")
    give(state, 1, "potion_of_strength")
    do(state, "fight:goblin", "pass", "use:potion_of_strength:party")
    assert state.helper == -1 and rules.party_strength(state) == 4
    do(state, "pass", "pass", "pass")
    assert state.level[0] == 2 and state.level[1] == 1


def test_specialty_bonus_needs_the_declaration():
    undeclared = {"cards": dict(rules.deckmod.bundled_decks()["inferno"]["cards"])}
    deck = rules.deckmod.deck_from_mapping(undeclared, "plain_fire")
    assert deck.specialty == ()
    assert rules.specialty_bonus(((), ("fire",)), 0) == 0 and rules.specialty_bonus(((), ("fire",)), 1) == 2


def test_legal_equips_are_exactly_the_items_that_fit():
    """``legal_actions`` writes ``fits`` out for a whole hand at once: over seeded random play (races dealt
    at random, so giants and dwarves with two-handed and big items come up), an item in hand may be
    equipped exactly when ``fits`` says so."""
    checked = {True: 0, False: 0}
    for seed in range(30):
        state = rules.new_game(rules.Config(num_players=3), Chance(seed))
        picker = random.Random(seed)
        while not rules.is_terminal(state) and state.steps < 600:
            legal = rules.legal_actions(state)
            if state.phase in (SETUP, REENTER, FREE):
                seat = state.to_act
                for card in set(state.hand[seat]):
                    if rules.IS_EQUIPMENT[card]:
                        fits = rules.fits(state, seat, card)
                        assert (rules.EQUIP_ACTION[card] in legal) == fits, (seed, rules.KEYS[card])
                        checked[fits] += 1
            rules.apply(state, picker.choice(legal))
    assert checked[True] > 200 and checked[False] > 200
