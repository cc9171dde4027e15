"""Wyvern TCG — the rules engine (pure Python: no gymnasium, pettingzoo or torch).

A 2-6 player Munchkin-like race to level 25 (rulebook: shared/seeds/003_*.txt; docs/rules/wyvern.md
marks every interpretation). Each player brings an 80-card deck (40 items, 40 monsters; :mod:`.decks`),
a race and a class. Cards are catalog ids (ints); every zone is a list of ids, so cards are conserved:
deck, hand, in play (``equipped``), discard pile, the summon slot and the cards on the table in a combat.

State machine
=============
Seats sit counterclockwise in index order, so play passes from seat ``s`` to ``s + 1``.

``SETUP``      Each player has drawn 4; in seat order each may equip items and curse others, then
               ``pass``. Then everyone rolls a d6 (ties for the highest re-roll) and the highest starts.
turn start     (automatic) A dead player re-enters: draws a new hand of 4 and goes to ``REENTER``
               (equip, curse, ``pass``) before kicking the door. A paralysed player skips the turn.
door           (automatic) Kick open the door: the top card of your own deck, face up.
               monster -> ``WINDOW`` (a door fight: the turn ends after it);
               curse   -> it hits you, the turn ends;
               else    -> to your hand, ``FREE``. (An empty deck and discard pile: straight to ``FREE``.)
``FREE``       Your turn, out of combat: ``equip:*`` (only what fits), ``sell:*`` / ``sell_equipped:*``,
               ``fight:*`` (a monster from your hand -> ``WINDOW``; back to ``FREE`` afterwards),
               ``curse:*:+r``, ``summon:fight``, or ``pass``: draw one card face down and end the turn
               (``DISCARD`` first while your hand is over the limit).
``WINDOW``     The combat window. Decisions pass around the table from the fighter (fighter, fighter+1,
               ...), skipping the dead. The fighter may ``use:*:party`` (potions, scrolls, wands), curse,
               ``offer:+r:k`` (ask seat +r to help for k of the treasures), ``summon:aid``, ``run`` (when not
               winning) or ``pass``. Every other player may ``use:*:party`` or ``use:*:monster`` (one-shots
               and enhancers), curse, ``summon:join`` / ``summon:aid`` (a helper), or ``pass``. Any play
               resets the count of passes; when every living player has passed in a row the window
               closes: the party wins if its strength is strictly higher (a paladin fighter wins ties),
               otherwise the fighter runs away (d6 + bonuses >= 5) or suffers the Bad Stuff.
``ASK``        Help is negotiated ("simply negotiate a treasure split"). In the window the fighter may
``COUNTER``    ``offer:+r:k`` (k of the monster's treasures to seat +r) and every other player may
               ``ask:k`` (offer to help for k). ``ASK``: the offered seat answers ``accept``, ``decline``
               or a counter ``ask:j`` (j > k). ``COUNTER``: the fighter answers an ask with ``accept``,
               ``decline`` or an improved ``offer:+r:k`` (above its last offer, below the ask). Each
               new offer to a seat beats the fighter's earlier ones to it and each ask never exceeds
               that seat's earlier ask; in one combat the fighter makes at most ``help_rounds`` offers
               to a seat and the seat at most ``help_rounds`` asks, so talks always end. A deal makes
               the seat the helper; after a deal or a ``decline`` the window goes on from the seat
               after the fighter. One helper per combat, and (option ``one_helper_per_turn``) only the
               same helper again later in the turn.
``LOOT_ORDER`` A player died (Bad Stuff, a curse): the dead player names the next looter (``loot_order:+r``)
``LOOT_PICK``  and that looter "may" take one item in play (``loot:*``), or with nothing in play draw two
               cards at random from the dead player's hand (``loot:hand``), or take nothing (``decline``).
               With one looter left the order is forced. Afterwards the rest is discarded; death by
               levels resets to level 1; the dead player is out of play (cannot act, help or be cursed)
               until re-entering on their turn.
               Play resumes where it stopped; a dead fighter's combat is abandoned and the turn ends.
``DISCARD``    A hand over the limit ("only 5 cards in your hand at a time", a dwarf 6): its holder
               ``discard:*`` until within it, at once, whoever's turn it is (option ``hand_limit_always``;
               false: only at the end of the holder's own turn); then play goes on where it stopped.
``OVER``       Someone reached level 25 by winning a fight, or the declared turn / step limit ran out
               (truncation: no winner).

Actions: see :data:`ACTION_NAMES` (one fixed Discrete space; ``+r`` is a seat offset in play order).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import Chance, IllegalActionError, check_choice, check_range, option
from . import decks as deckmod
from .decks import (
    CATALOG,
    CURSES,
    ENHANCERS,
    EQUIPMENT,
    MAX_TREASURES,
    MONSTERS,
    NUM_CARDS,
    ONE_SHOTS,
    SELLABLE,
    load_deck,
)

MIN_PLAYERS, MAX_PLAYERS = 2, 6
MAX_OFFSET = MAX_PLAYERS - 1

RACES = ("human", "elf", "halfling", "naga", "rakshasa", "giant", "pixie", "dwarf")
NO_RACE = len(RACES)  # after "lose your race"
RACE_NAMES = RACES + ("none",)
HUMAN, ELF, HALFLING, NAGA, RAKSHASA, GIANT, PIXIE, DWARF = range(8)
CLASSES = ("paladin", "warrior", "wizard", "thief", "cleric")
PALADIN, WARRIOR, WIZARD, THIEF, CLERIC = range(5)

# Phases.
SETUP, REENTER, FREE, WINDOW, ASK, COUNTER, LOOT_ORDER, LOOT_PICK, DISCARD, OVER = range(10)
PHASE_NAMES = ("setup", "reenter", "free", "window", "ask", "counter", "loot_order", "loot_pick", "discard",
               "over")
RESUME_END_TURN = -1

# Where the monster of a combat came from.
FROM_DOOR, FROM_HAND, FROM_SUMMON = range(3)
SOURCE_NAMES = ("door", "hand", "summon")
DEATH_LEVELS, DEATH_EATEN = 1, 2

WIN, TURN_LIMIT, STEP_LIMIT = "reached_win_level", "turn_limit", "step_limit"

# --- card data as flat tuples for the inner loops ----------------------------------------------------------

KIND = tuple(card.kind for card in CATALOG)
BONUS = tuple(card.bonus for card in CATALOG)
GOLD = tuple(card.gold for card in CATALOG)
RUN = tuple(card.run for card in CATALOG)
BIG = tuple(card.big for card in CATALOG)
HANDS = tuple(card.hands for card in CATALOG)
LEVEL = tuple(card.level for card in CATALOG)
LEVELS = tuple(card.levels for card in CATALOG)
TREASURES = tuple(card.treasures for card in CATALOG)
IS_MONSTER = tuple(card.is_monster for card in CATALOG)
UNDEAD = tuple("undead" in card.tags for card in CATALOG)
IS_EQUIPMENT = tuple(card.kind in deckmod.EQUIPMENT_KINDS for card in CATALOG)
IS_ONE_SHOT = tuple(card.kind in deckmod.ONE_SHOT_KINDS for card in CATALOG)
IS_ENHANCER = tuple(card.kind == "enhancer" for card in CATALOG)
IS_CURSE = tuple(card.kind == "curse" for card in CATALOG)
KEYS = tuple(card.key for card in CATALOG)
# What a card in hand can do in a combat window (legal_actions reads one code per card instead of three flags).
W_NONE, W_ONE_SHOT, W_ENHANCER, W_CURSE = range(4)
WINDOW_USE = tuple(W_ONE_SHOT if IS_ONE_SHOT[cid] else W_ENHANCER if IS_ENHANCER[cid] else W_CURSE if IS_CURSE[cid]
                   else W_NONE for cid in range(len(CATALOG)))

# --- the action table ------------------------------------------------------------------------------------

A_PASS, A_RUN, A_ACCEPT, A_DECLINE, A_SUMMON_AID, A_SUMMON_JOIN, A_SUMMON_FIGHT, A_LOOT_HAND = range(8)
(K_FIXED, K_EQUIP, K_USE_PARTY, K_USE_MONSTER, K_CURSE, K_FIGHT, K_SELL, K_SELL_EQUIPPED, K_DISCARD, K_LOOT,
 K_OFFER, K_ASK, K_LOOT_ORDER) = range(13)


def _build_actions() -> tuple[list[str], list[int], list[int], list[int]]:
    names = ["pass", "run", "accept", "decline", "summon:aid", "summon:join", "summon:fight", "loot:hand"]
    kinds, cards, args = [K_FIXED] * 8, [-1] * 8, [0] * 8

    def add(name: str, kind: int, card: int = -1, arg: int = 0) -> None:
        names.append(name)
        kinds.append(kind)
        cards.append(card)
        args.append(arg)

    for cid in EQUIPMENT:
        add(f"equip:{KEYS[cid]}", K_EQUIP, cid)
    for cid in ONE_SHOTS:
        add(f"use:{KEYS[cid]}:party", K_USE_PARTY, cid)
    for cid in ONE_SHOTS + ENHANCERS:
        add(f"use:{KEYS[cid]}:monster", K_USE_MONSTER, cid)
    for cid in CURSES:
        for offset in range(1, MAX_OFFSET + 1):
            add(f"curse:{KEYS[cid]}:+{offset}", K_CURSE, cid, offset)
    for cid in MONSTERS:
        add(f"fight:{KEYS[cid]}", K_FIGHT, cid)
    for cid in SELLABLE:
        add(f"sell:{KEYS[cid]}", K_SELL, cid)
    for cid in EQUIPMENT:
        add(f"sell_equipped:{KEYS[cid]}", K_SELL_EQUIPPED, cid)
    for cid in range(NUM_CARDS):
        add(f"discard:{KEYS[cid]}", K_DISCARD, cid)
    for cid in EQUIPMENT:
        add(f"loot:{KEYS[cid]}", K_LOOT, cid)
    for offset in range(1, MAX_OFFSET + 1):
        for split in range(MAX_TREASURES + 1):
            add(f"offer:+{offset}:{split}", K_OFFER, -1, offset * 100 + split)
    for split in range(MAX_TREASURES + 1):
        add(f"ask:{split}", K_ASK, -1, split)
    for offset in range(1, MAX_OFFSET + 1):
        add(f"loot_order:+{offset}", K_LOOT_ORDER, -1, offset)
    return names, kinds, cards, args


_names, _kinds, _cards, _args = _build_actions()
ACTION_NAMES: tuple[str, ...] = tuple(_names)
ACTION_KIND: tuple[int, ...] = tuple(_kinds)
ACTION_CARD: tuple[int, ...] = tuple(_cards)
ACTION_ARG: tuple[int, ...] = tuple(_args)
NUM_ACTIONS = len(ACTION_NAMES)
ACTION_INDEX = {name: index for index, name in enumerate(ACTION_NAMES)}


def _index_by_card(kind: int) -> tuple[int, ...]:
    table = [-1] * NUM_CARDS
    for action in range(NUM_ACTIONS):
        if ACTION_KIND[action] == kind:
            table[ACTION_CARD[action]] = action
    return tuple(table)


EQUIP_ACTION = _index_by_card(K_EQUIP)
USE_PARTY_ACTION = _index_by_card(K_USE_PARTY)
USE_MONSTER_ACTION = _index_by_card(K_USE_MONSTER)
FIGHT_ACTION = _index_by_card(K_FIGHT)
SELL_ACTION = _index_by_card(K_SELL)
SELL_EQUIPPED_ACTION = _index_by_card(K_SELL_EQUIPPED)
DISCARD_ACTION = _index_by_card(K_DISCARD)
LOOT_ACTION = _index_by_card(K_LOOT)
CURSE_ACTION = tuple(ACTION_INDEX[f"curse:{KEYS[cid]}:+1"] - 1 if cid in CURSES else -1 for cid in range(NUM_CARDS))
OFFER_ACTION0 = ACTION_INDEX["offer:+1:0"]  # offer:+r:k = OFFER_ACTION0 + (r-1)*(MAX_TREASURES+1) + k
ASK_ACTION0 = ACTION_INDEX["ask:0"]  # ask:k = ASK_ACTION0 + k
LOOT_ORDER_ACTION0 = ACTION_INDEX["loot_order:+1"] - 1  # loot_order:+r = LOOT_ORDER_ACTION0 + r


def offer_action(offset: int, split: int) -> int:
    return OFFER_ACTION0 + (offset - 1) * (MAX_TREASURES + 1) + split


# --- configuration ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Options of one Wyvern TCG game; every value is checked, bad ones raise ValueError."""

    num_players: int = option(4, "players at the table (2-6)", choices=tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    races: tuple[str, ...] = option((), "race per seat (human, elf, halfling, naga, rakshasa, giant, pixie, dwarf "
                                        "or random); empty: all dealt at random")
    classes: tuple[str, ...] = option((), "class per seat (paladin, warrior, wizard, thief, cleric or random); "
                                          "empty: all dealt at random")
    decks: tuple[str, ...] = option((), "deck per seat: a bundled deck name, a deck TOML path or random; "
                                        "empty: everyone plays the adventurer starter deck",
                                    names=lambda: (*deckmod.bundled_decks(), "random"))
    win_level: int = option(25, "the level that wins (reachable only by defeating a monster)")
    start_hand: int = option(4, "cards drawn at setup and on re-entering after death")
    hand_limit: int = option(5, "cards a player may hold (a dwarf one more)")
    hand_limit_always: bool = option(True, "a hand over the limit is cut down at once, on anyone's turn "
                                           "(false: only at the end of the holder's own turn)")
    run_target: int = option(5, "a d6 plus run-away bonuses must reach this to escape")
    gold_per_level: int = option(1000, "gold sold in one turn for each level bought")
    specialty_bonuses: bool = option(True, "declared specialty decks get their combat bonuses")
    summons: bool = option(False, "summons: each deck's declared summon monster is set aside for its owner")
    one_helper_per_turn: bool = option(True, "once someone helped, only that player may help again this turn")
    help_rounds: int = option(3, "in one combat, the most offers the fighter may make to one player and the "
                                 "most asks that player may make back")
    paladin_helper_wins_ties: bool = option(False, "a paladin helper also wins ties (false: only a paladin "
                                                   "fighter, as the rulebook says)")
    draw_after_monster_door: bool = option(False, "also draw face down after a turn that kicked open a monster")
    max_turns: int = option(400, "turns after which the game is truncated with no winner")
    max_steps: int = option(40000, "decisions after which the game is truncated with no winner")
    level_reward: float = option(0.0, "shaped reward: this much per level above 1 at the end (0: off)")

    def __post_init__(self) -> None:
        check_choice("num_players", self.num_players, tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
        for name, per_seat, valid in (("races", self.races, (*RACES, "random")),
                                      ("classes", self.classes, (*CLASSES, "random"))):
            self._check_per_seat(name, per_seat)
            for seat, value in enumerate(per_seat):
                check_choice(f"{name}[{seat}]", value, valid)
        self._check_per_seat("decks", self.decks)
        for deck in self.decks:
            if deck != "random":
                load_deck(deck)  # ValueError naming every broken rule
        check_range("win_level", self.win_level, 2, 99)
        check_range("start_hand", self.start_hand, 0, 10)
        check_range("hand_limit", self.hand_limit, 1, 20)
        check_range("run_target", self.run_target, 1, 12)
        check_range("gold_per_level", self.gold_per_level, 1)
        check_range("max_turns", self.max_turns, 1)
        check_range("max_steps", self.max_steps, 1)
        check_range("level_reward", self.level_reward, 0.0, 1.0)
        check_range("help_rounds", self.help_rounds, 1, 10)
        for flag in ("specialty_bonuses", "summons", "one_helper_per_turn", "draw_after_monster_door",
                     "hand_limit_always", "paladin_helper_wins_ties"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be true or false, got {getattr(self, flag)!r}")

    def _check_per_seat(self, name: str, per_seat: object) -> None:
        if not isinstance(per_seat, tuple) or len(per_seat) not in (0, self.num_players):
            raise ValueError(f"{name} needs no entries or one per seat ({self.num_players}), got {per_seat!r}")


# --- state -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class State:
    """Everything about one game. Hidden: each hand (to the others) and every deck's order (to all)."""

    config: Config
    chance: Chance
    n: int
    races: list[int]
    classes: list[int]
    deck_names: tuple[str, ...]
    specialties: tuple[tuple[str, ...], ...]
    static_bonus: list[int]  # specialty and good-versus-evil deck bonuses
    deck: list[list[int]]
    discard: list[list[int]]
    hand: list[list[int]]
    equipped: list[list[int]]
    summon: list[int]  # each seat's summon card set aside, -1: none
    level: list[int]
    dead: list[bool]
    paralyzed: list[bool]
    slow_turn: list[int]  # turn number the status began, -1: none
    confused_turn: list[int]
    phase: int = SETUP
    to_act: int = 0
    active: int = 0
    turn: int = 0
    steps: int = 0
    order_rolls: list[tuple[int, ...]] = field(default_factory=list)
    first_seat: int = -1
    door_card: int = -1
    gold: int = 0  # sold this turn, not yet turned into a level
    halfling_sold: bool = False
    helped_by: int = -1  # the one player whose help this turn may be asked again
    # the combat
    monster: int = -1
    source: int = FROM_DOOR
    fighter: int = -1
    helper: int = -1
    split: int = 0  # treasures promised to the helper
    # the help negotiation of this combat, per seat: offers the fighter made it, its best offer (-1: none),
    # asks it made, its last ask (-1: none); and the pending proposal between the fighter and ``ask_seat``
    offers_to: list[int] = field(default_factory=list)
    best_offer: list[int] = field(default_factory=list)
    asks_from: list[int] = field(default_factory=list)
    last_ask: list[int] = field(default_factory=list)
    ask_seat: int = -1
    ask_split: int = 0  # the fighter's pending offer (phase ASK)
    bid: int = 0  # the would-be helper's pending ask (phase COUNTER)
    monster_bonus: int = 0
    party_bonus: int = 0
    run_bonus: int = 0
    table: list[tuple[int, int]] = field(default_factory=list)  # (owner, card) one-shots and summons in play
    passes: int = 0
    # death and looting
    dying: int = -1
    death_kind: int = 0
    looters: list[int] = field(default_factory=list)
    looter: int = -1
    resume_phase: int = RESUME_END_TURN
    resume_seat: int = -1
    # where play goes on once a hand over the limit is cut down (RESUME_END_TURN: the next turn)
    shed_phase: int = RESUME_END_TURN
    shed_seat: int = -1
    winner: int = -1
    end_reason: str = ""
    events: list[tuple] = field(default_factory=list)  # public events, for views (the latest 30-60)
    # every event ever logged, and how many there were when the latest decision began: a frontend prints
    # each decision's events once and so keeps the whole history (encode.events)
    events_logged: int = 0
    step_first_event: int = 0


def num_seats(config: Config) -> int:
    return config.num_players


def max_game_length(config: Config) -> int:
    """The most decisions one game can take (the game is truncated when it reaches this)."""
    return config.max_steps


def _log(state: State, *event: object) -> None:
    state.events_logged += 1
    events = state.events
    events.append(event)
    if len(events) > 60:
        del events[:30]


def new_game(config: Config, chance: Chance) -> State:
    """Deal races, classes and decks, shuffle, draw the starting hands; seat 0 starts the setup plays."""
    n = config.num_players
    bundled = tuple(deckmod.bundled_decks())
    races = [RACES.index(r) if r != "random" else chance.below(len(RACES))
             for r in (config.races or ("random",) * n)]
    classes = [CLASSES.index(c) if c != "random" else chance.below(len(CLASSES))
               for c in (config.classes or ("random",) * n)]
    deck_names = tuple(d if d != "random" else bundled[chance.below(len(bundled))]
                       for d in (config.decks or ("adventurer",) * n))
    loaded = [load_deck(name) for name in deck_names]
    specialties = tuple(d.specialty for d in loaded) if config.specialty_bonuses else ((),) * n
    state = State(
        config=config, chance=chance, n=n, races=races, classes=classes, deck_names=deck_names,
        specialties=specialties, static_bonus=[0] * n, deck=[], discard=[[] for _ in range(n)],
        hand=[[] for _ in range(n)], equipped=[[] for _ in range(n)], summon=[-1] * n, level=[1] * n,
        dead=[False] * n, paralyzed=[False] * n, slow_turn=[-1] * n, confused_turn=[-1] * n,
    )
    state.static_bonus = [specialty_bonus(specialties, seat) for seat in range(n)]
    _reset_negotiation(state)
    for seat, deck in enumerate(loaded):
        cards = list(deck.cards)
        if config.summons and deck.summon >= 0:
            cards.remove(deck.summon)
            state.summon[seat] = deck.summon
        chance.shuffle(cards)
        state.deck.append(cards)
    for seat in range(n):
        for _ in range(config.start_hand):
            _draw_to_hand(state, seat)
    state.phase, state.to_act = SETUP, 0
    _check_hands(state)
    return state


def specialty_bonus(specialties: tuple[tuple[str, ...], ...], seat: int) -> int:
    """+2 for a (single) specialty deck, +1 for a dual one; +2 per opposing alignment deck in play."""
    own = specialties[seat]
    themes = sum(1 for s in own if s not in deckmod.ALIGNMENTS)
    bonus = 2 if themes == 1 else 1 if themes == 2 else 0
    for alignment, enemy in (("good", "evil"), ("evil", "good")):
        if alignment in own:
            bonus += 2 * sum(1 for other, spec in enumerate(specialties) if other != seat and enemy in spec)
    return bonus


# --- derived numbers ---------------------------------------------------------------------------------------


def equipment_bonus(state: State, seat: int) -> int:
    return sum(BONUS[cid] for cid in state.equipped[seat])


def race_bonus(state: State, seat: int) -> int:
    race = state.races[seat]
    if race in (HUMAN, NAGA, GIANT):
        return 1
    if race == RAKSHASA:  # +1, and another +1 for every 5 levels after the first
        return 1 + (state.level[seat] - 1) // 5
    return 0


def magic_bonus(state: State, seat: int) -> int:
    """Added to every potion, scroll or wand this seat plays: human, naga, pixie +1; wizard +1."""
    return (state.races[seat] in (HUMAN, NAGA, PIXIE)) + (state.classes[seat] == WIZARD)


def combat_level(state: State, seat: int, monster: int = -1, alone: bool = False) -> int:
    """Level + items + race, class and deck bonuses; situational ones when ``monster`` is given.

    :func:`equipment_bonus` and :func:`race_bonus` written out: this runs several times per decision
    (legal actions, the heuristic's facts, the end of every fight)."""
    level = state.level[seat]
    value = level + state.static_bonus[seat]
    for cid in state.equipped[seat]:
        value += BONUS[cid]
    race = state.races[seat]
    if race == HUMAN or race == NAGA or race == GIANT:
        value += 1
    elif race == RAKSHASA:
        value += 1 + (level - 1) // 5
    if state.confused_turn[seat] >= 0:
        value -= 3
    if monster >= 0:
        cls = state.classes[seat]
        if cls == CLERIC and UNDEAD[monster]:
            value += 3
        if cls == WARRIOR and alone:
            value += 2
    return value


def party_strength(state: State) -> int:
    monster, helper = state.monster, state.helper
    strength = combat_level(state, state.fighter, monster, alone=helper < 0) + state.party_bonus
    if helper >= 0:
        strength += combat_level(state, helper, monster)
    return strength


def monster_strength(state: State) -> int:
    return LEVEL[state.monster] + state.monster_bonus


def party_wins(state: State) -> bool:
    return party_beats(state, party_strength(state), monster_strength(state))


def party_beats(state: State, party: int, monster: int) -> bool:
    """Whether a party of strength ``party`` beats this fight's monster at strength ``monster``: more wins, a
    tie only with a paladin fighter (or a paladin helper, by the house rule). :func:`party_wins` with the
    strengths already at hand (the encoder shows them too)."""
    if party != monster:
        return party > monster
    if state.classes[state.fighter] == PALADIN:  # "only paladins can win ties"
        return True
    return state.config.paladin_helper_wins_ties and state.helper >= 0 and state.classes[state.helper] == PALADIN


def run_bonus(state: State, seat: int) -> int:
    bonus = sum(RUN[cid] for cid in state.equipped[seat])
    race = state.races[seat]
    if race == ELF:
        bonus += 1
    elif race in (HALFLING, NAGA):
        bonus -= 1
    if state.classes[seat] == WIZARD:
        bonus += 1
    if state.slow_turn[seat] >= 0:
        bonus -= 2
    return bonus


def hand_limit(state: State, seat: int) -> int:
    return state.config.hand_limit + (state.races[seat] == DWARF)


_ONE_PER_SLOT = frozenset(("helm", "armor", "boots"))


def fits(state: State, seat: int, cid: int) -> bool:
    """Whether ``cid`` can be equipped next to what ``seat`` has in play (no equipping replaces).
    ``legal_actions`` writes this out for all the items in a hand at once (a test compares the two)."""
    equipped = state.equipped[seat]
    kind = KIND[cid]
    race = state.races[seat]
    if BIG[cid] and race != DWARF and any(BIG[other] for other in equipped):
        return False
    if kind == "weapon":
        return _hands_used(equipped, race) + _hands_of(cid, race) <= 2
    if kind in ("helm", "armor", "boots"):
        return all(KIND[other] != kind for other in equipped)
    return True


def _hands_of(cid: int, race: int) -> int:
    return 1 if race == GIANT else HANDS[cid]


def _hands_used(equipped: list[int], race: int) -> int:
    return sum(_hands_of(cid, race) for cid in equipped if KIND[cid] == "weapon")


def living(state: State) -> list[int]:
    return [seat for seat in range(state.n) if not state.dead[seat]]


def _next_living(state: State, seat: int) -> int:
    n = state.n
    for step in range(1, n + 1):
        other = (seat + step) % n
        if not state.dead[other]:
            return other
    return seat


# --- zones -------------------------------------------------------------------------------------------------


def _draw(state: State, seat: int) -> int:
    """Top card of ``seat``'s deck (its discard pile shuffled back in when empty), -1 if both are empty."""
    deck = state.deck[seat]
    if not deck:
        discard = state.discard[seat]
        if not discard:
            return -1
        deck.extend(discard)
        discard.clear()
        state.chance.shuffle(deck)
        _log(state, "reshuffle", seat)
    return deck.pop()


def _draw_to_hand(state: State, seat: int, from_deck_of: int = -1) -> int:
    cid = _draw(state, seat if from_deck_of < 0 else from_deck_of)
    if cid >= 0:
        state.hand[seat].append(cid)
    return cid


def _discard_equipped(state: State, seat: int, cids: list[int]) -> None:
    for cid in cids:
        state.equipped[seat].remove(cid)
        state.discard[seat].append(cid)
        _log(state, "lose_item", seat, cid)


# --- the game's flow -------------------------------------------------------------------------------------


def current_seat(state: State) -> int:
    """The seat that decides next, or -1 once the game is over."""
    return -1 if state.phase == OVER else state.to_act


def legal_actions(state: State) -> list[int]:
    """Legal action indices for the seat to act, ascending; empty once the game is over."""
    phase = state.phase
    seat = state.to_act
    if phase == OVER:
        return []
    hand = state.hand[seat]
    legal: list[int] = []
    if phase == WINDOW:  # the window first: four in ten decisions
        legal.append(A_PASS)
        distinct = set(hand)
        fighter = state.fighter
        in_party = seat == fighter or seat == state.helper
        curses = False
        for cid in distinct:
            use = WINDOW_USE[cid]
            if use:
                if use == W_ONE_SHOT:
                    legal.append(USE_PARTY_ACTION[cid])
                    if not in_party:
                        legal.append(USE_MONSTER_ACTION[cid])
                elif use == W_ENHANCER:
                    if not in_party:
                        legal.append(USE_MONSTER_ACTION[cid])
                else:
                    curses = True
        if curses:
            _curse_actions(state, seat, distinct, legal)
        if state.summon[seat] >= 0:
            legal.append(A_SUMMON_AID if in_party else A_SUMMON_JOIN)
        if seat == fighter:
            if not party_wins(state):
                legal.append(A_RUN)
            if state.helper < 0:
                # The fighter's offers to each seat that may still help (``may_help``) with rounds left, above its
                # best offer to it so far, up to the treasures (every decision of a losing fighter: written out)
                n, dead, helped = state.n, state.dead, state.helped_by
                anyone = not state.config.one_helper_per_turn or helped == -1
                rounds, offers_to, best_offer = state.config.help_rounds, state.offers_to, state.best_offer
                top = TREASURES[state.monster] + 1
                for offset in range(1, n):
                    other = (seat + offset) % n
                    if not dead[other] and (anyone or helped == other) and offers_to[other] < rounds:
                        base = OFFER_ACTION0 + (offset - 1) * (MAX_TREASURES + 1)
                        legal.extend(range(base + best_offer[other] + 1, base + top))
        elif state.helper < 0 and (not state.config.one_helper_per_turn or state.helped_by in (-1, seat)):
            # may_help: a would-be helper names a price unasked (_ask_actions from 0, written out here)
            if state.asks_from[seat] < state.config.help_rounds:
                highest = TREASURES[state.monster]
                last = state.last_ask[seat]
                if 0 <= last < highest:
                    highest = last
                legal.extend(range(ASK_ACTION0, ASK_ACTION0 + highest + 1))
    elif phase in (SETUP, REENTER, FREE):
        legal.append(A_PASS)
        free = phase == FREE
        if free and state.summon[seat] >= 0:
            legal.append(A_SUMMON_FIGHT)
        sells = free and state.level[seat] < state.config.win_level - 1
        curses = False
        distinct = set(hand)
        worn = None  # what is in play, read at the first item in hand (fits, written out for the pass)
        # One pass over the distinct cards (the list is sorted at the end, so the order of appends is free).
        for cid in distinct:
            if IS_EQUIPMENT[cid]:
                if worn is None:  # one loop over what is in play: the kinds worn, a big item, the hands used
                    race, worn, big_taken, hands_free = state.races[seat], set(), False, 2
                    for other in state.equipped[seat]:
                        kind = KIND[other]
                        worn.add(kind)
                        if BIG[other]:
                            big_taken = race != DWARF
                        if kind == "weapon":
                            hands_free -= 1 if race == GIANT else HANDS[other]
                if not (BIG[cid] and big_taken):
                    kind = KIND[cid]
                    if kind == "weapon":
                        if (1 if race == GIANT else HANDS[cid]) <= hands_free:
                            legal.append(EQUIP_ACTION[cid])
                    elif kind not in worn or kind not in _ONE_PER_SLOT:
                        legal.append(EQUIP_ACTION[cid])
            elif IS_CURSE[cid]:
                curses = True
            if free:
                if IS_MONSTER[cid]:
                    legal.append(FIGHT_ACTION[cid])
                if sells and GOLD[cid] > 0:
                    legal.append(SELL_ACTION[cid])
        if curses:
            _curse_actions(state, seat, distinct, legal)
        if sells:
            for cid in set(state.equipped[seat]):
                legal.append(SELL_EQUIPPED_ACTION[cid])
    elif phase == ASK:
        legal = [A_ACCEPT, A_DECLINE]
        _ask_actions(state, seat, state.ask_split + 1, legal)  # a counter-offer: more than offered
    elif phase == COUNTER:
        legal = [A_ACCEPT, A_DECLINE]
        other = state.ask_seat
        if state.offers_to[other] < state.config.help_rounds:  # an improved offer, below the ask
            offset = (other - seat) % state.n
            base = offer_action(offset, 0)
            legal.extend(range(base + state.best_offer[other] + 1, base + state.bid))
    elif phase == LOOT_ORDER:
        n = state.n
        legal = [LOOT_ORDER_ACTION0 + (looter - seat) % n for looter in state.looters]
    elif phase == LOOT_PICK:  # looting "may": a looter can always take nothing
        equipped = state.equipped[state.dying]
        legal = [A_DECLINE] + ([LOOT_ACTION[cid] for cid in set(equipped)] if equipped else [A_LOOT_HAND])
    elif phase == DISCARD:
        legal = [DISCARD_ACTION[cid] for cid in set(hand)]
    legal.sort()
    return legal


def may_help(state: State, seat: int) -> bool:
    """Whether the fighter and ``seat`` may still negotiate help in this combat (before the limits below)."""
    return not state.config.one_helper_per_turn or state.helped_by in (-1, seat)


def _ask_actions(state: State, seat: int, lowest: int, legal: list[int]) -> None:
    """A would-be helper's asks: ``lowest`` up to the treasures, never more than its own last ask."""
    if state.asks_from[seat] < state.config.help_rounds:
        highest = TREASURES[state.monster]
        if state.last_ask[seat] >= 0:
            highest = min(highest, state.last_ask[seat])
        legal.extend(range(ASK_ACTION0 + lowest, ASK_ACTION0 + highest + 1))


def _curse_actions(state: State, seat: int, distinct: set[int], legal: list[int]) -> None:
    n = state.n
    for cid in distinct:
        if IS_CURSE[cid]:
            base = CURSE_ACTION[cid]
            for offset in range(1, n):
                if not state.dead[(seat + offset) % n]:
                    legal.append(base + offset)


def apply(state: State, action: int) -> None:
    """Play ``action`` for the seat to act; raises IllegalActionError for anything not legal now."""
    legal = legal_actions(state)
    if action not in legal:
        name = ACTION_NAMES[action] if isinstance(action, int) and 0 <= action < NUM_ACTIONS else action
        raise IllegalActionError(name, [ACTION_NAMES[a] for a in legal], f"phase {PHASE_NAMES[state.phase]}")
    apply_legal(state, action)


def apply_legal(state: State, action: int) -> None:
    """:func:`apply` without its legality check, for a caller that has just checked ``action`` (a plain
    int) against ``legal_actions(state)`` of this very state: the AEC env, which computes that list for
    the action mask anyway (envs/aec.py). Anything else calls :func:`apply`: an illegal action here
    corrupts the game instead of raising."""
    state.steps += 1
    state.step_first_event = state.events_logged
    seat = state.to_act
    phase = state.phase
    kind = ACTION_KIND[action]
    cid = ACTION_CARD[action]
    if phase == WINDOW:  # the window first: four in ten decisions
        _apply_window(state, seat, action, kind, cid)
    elif phase in (SETUP, REENTER, FREE):
        _apply_own_play(state, seat, phase, action, kind, cid)
    elif phase in (ASK, COUNTER):
        _negotiate(state, seat, action, kind)
    elif phase == LOOT_ORDER:
        looter = (seat + action - LOOT_ORDER_ACTION0) % state.n
        state.looters.remove(looter)
        _loot_turn(state, looter)
    elif phase == LOOT_PICK:
        if action == A_DECLINE:
            _log(state, "loot_none", seat, state.dying)
        elif action == A_LOOT_HAND:
            _loot_hand(state, seat)
        else:
            _take_loot(state, seat, cid)
        _loot_continue(state)
    elif phase == DISCARD:
        state.hand[seat].remove(cid)
        state.discard[seat].append(cid)
        _log(state, "discard", seat, cid)
        if len(state.hand[seat]) <= hand_limit(state, seat):
            if state.shed_phase == RESUME_END_TURN:
                _next_turn(state)
            else:
                state.phase, state.to_act = state.shed_phase, state.shed_seat
    if max(map(len, state.hand)) > state.config.hand_limit:  # _check_hands' own first test, without the call
        _check_hands(state)
    if state.phase != OVER and state.steps >= state.config.max_steps:
        _end(state, -1, STEP_LIMIT)


def _check_hands(state: State) -> None:
    """The hand limit holds "at a time": the first holder over it (in play order from the active seat)
    discards down before anyone decides anything else; then play goes on where it stopped."""
    config = state.config
    if not config.hand_limit_always or state.phase in (OVER, DISCARD):
        return
    hands, limit = state.hand, config.hand_limit
    if max(map(len, hands)) <= limit:  # nobody over even the smaller limit: the usual case, after every action
        return
    n = state.n
    for step in range(n):
        seat = (state.active + step) % n
        if seat != state.dying and len(hands[seat]) > hand_limit(state, seat):
            state.shed_phase, state.shed_seat = state.phase, state.to_act
            state.phase, state.to_act = DISCARD, seat
            return


def _apply_own_play(state: State, seat: int, phase: int, action: int, kind: int, cid: int) -> None:
    """SETUP, REENTER and FREE: equip, curse, sell, fight from hand, or pass."""
    if action == A_PASS:
        if phase == SETUP:
            later = [other for other in range(seat + 1, state.n) if not state.dead[other]]
            if later:
                state.to_act = later[0]
            else:
                _roll_turn_order(state)
        elif phase == REENTER:
            _kick_door(state)
        else:
            _end_turn(state, draw=True)
        return
    if kind == K_EQUIP:
        state.hand[seat].remove(cid)
        state.equipped[seat].append(cid)
        _log(state, "equip", seat, cid)
    elif kind == K_CURSE:
        _play_curse(state, seat, action, cid)
        if state.dying >= 0:
            _start_looting(state, phase, seat)
    elif kind == K_FIGHT:
        state.hand[seat].remove(cid)
        _start_combat(state, cid, FROM_HAND)
    elif action == A_SUMMON_FIGHT:
        cid = state.summon[seat]
        state.summon[seat] = -1
        _start_combat(state, cid, FROM_SUMMON)
    elif kind == K_SELL:
        state.hand[seat].remove(cid)
        _sell(state, seat, cid)
    elif kind == K_SELL_EQUIPPED:
        state.equipped[seat].remove(cid)
        _sell(state, seat, cid)


def _sell(state: State, seat: int, cid: int) -> None:
    """Gold sold in one turn buys a level per ``gold_per_level``; never the winning level."""
    value = GOLD[cid]
    if state.races[seat] == HALFLING and not state.halfling_sold:
        state.halfling_sold = True  # a halfling sells one item per turn at double value
        value *= 2
    state.discard[seat].append(cid)
    state.gold += value
    config = state.config
    gained = 0
    while state.gold >= config.gold_per_level and state.level[seat] < config.win_level - 1:
        state.gold -= config.gold_per_level
        state.level[seat] += 1
        gained += 1
    _log(state, "sell", seat, cid, value, gained)


def _roll_turn_order(state: State) -> None:
    """Everyone rolls a d6; the highest goes first, ties for the highest roll again."""
    contenders = list(range(state.n))
    while True:
        rolls = tuple(state.chance.roll(6) for _ in contenders)
        state.order_rolls.append(rolls)
        best = max(rolls)
        contenders = [seat for seat, roll in zip(contenders, rolls, strict=True) if roll == best]
        if len(contenders) == 1:
            break
    state.first_seat = contenders[0]
    _log(state, "first", state.first_seat)
    _start_turn(state, state.first_seat)


def _start_turn(state: State, seat: int) -> None:
    while True:
        state.turn += 1
        if state.turn > state.config.max_turns:
            _end(state, -1, TURN_LIMIT)
            return
        state.active = state.to_act = seat
        state.gold, state.halfling_sold, state.helped_by, state.door_card = 0, False, -1, -1
        if state.dead[seat]:
            state.dead[seat] = False
            for _ in range(state.config.start_hand):
                _draw_to_hand(state, seat)
            _log(state, "reenter", seat)
            state.phase = REENTER
            return
        if state.paralyzed[seat]:
            state.paralyzed[seat] = False
            _log(state, "paralyzed", seat)
            _expire_statuses(state, seat)
            seat = (seat + 1) % state.n
            continue
        _kick_door(state)
        return


def _kick_door(state: State) -> None:
    seat = state.active
    cid = _draw(state, seat)
    state.door_card = cid
    _log(state, "door", seat, cid)
    state.to_act = seat
    if cid < 0:
        state.phase = FREE
    elif IS_MONSTER[cid]:
        _start_combat(state, cid, FROM_DOOR)
    elif KIND[cid] == "curse":
        state.discard[seat].append(cid)
        _curse(state, seat, cid, by=seat)
        if state.dying >= 0:
            _start_looting(state, RESUME_END_TURN, seat)
        else:
            _end_turn(state, draw=False)
    else:
        state.hand[seat].append(cid)
        state.phase = FREE


def _end_turn(state: State, draw: bool) -> None:
    seat = state.active
    if not state.dead[seat]:
        if draw:
            _draw_to_hand(state, seat)
        if len(state.hand[seat]) > hand_limit(state, seat):
            state.phase, state.to_act = DISCARD, seat
            state.shed_phase, state.shed_seat = RESUME_END_TURN, seat
            return
    _next_turn(state)


def _next_turn(state: State) -> None:
    seat = state.active
    _expire_statuses(state, seat)
    _start_turn(state, (seat + 1) % state.n)


def _expire_statuses(state: State, seat: int) -> None:
    """Slow and confusion last until the end of the victim's next whole turn."""
    if 0 <= state.slow_turn[seat] < state.turn:
        state.slow_turn[seat] = -1
    if 0 <= state.confused_turn[seat] < state.turn:
        state.confused_turn[seat] = -1


# --- combat ------------------------------------------------------------------------------------------------


def _start_combat(state: State, cid: int, source: int) -> None:
    fighter = state.active
    state.monster, state.source, state.fighter, state.helper = cid, source, fighter, -1
    state.split, state.ask_seat = 0, -1
    _reset_negotiation(state)
    state.monster_bonus = 5 if source == FROM_SUMMON else 0  # fighting your own summon angers it
    state.party_bonus = state.run_bonus = 0
    state.table = []
    state.passes = 0
    state.phase, state.to_act = WINDOW, fighter
    _log(state, "fight", fighter, cid, SOURCE_NAMES[source])


def _apply_window(state: State, seat: int, action: int, kind: int, cid: int) -> None:
    if action == A_PASS:
        state.passes += 1
        _advance_window(state, seat)
        return
    if action == A_RUN:
        _run_away(state)
        return
    state.passes = 0
    if kind == K_USE_PARTY:
        state.hand[seat].remove(cid)
        state.table.append((seat, cid))
        bonus = BONUS[cid] + (magic_bonus(state, seat) if BONUS[cid] > 0 else 0)
        state.party_bonus += bonus
        state.run_bonus += RUN[cid]
        _log(state, "use", seat, cid, "party", bonus)
    elif kind == K_USE_MONSTER:
        state.hand[seat].remove(cid)
        state.table.append((seat, cid))
        bonus = BONUS[cid] + (magic_bonus(state, seat) if IS_ONE_SHOT[cid] and BONUS[cid] > 0 else 0)
        if state.classes[seat] == THIEF:
            bonus += 2  # backstab
        state.monster_bonus += bonus
        _log(state, "use", seat, cid, "monster", bonus)
    elif action in (A_SUMMON_AID, A_SUMMON_JOIN):
        summon = state.summon[seat]
        state.summon[seat] = -1
        state.table.append((seat, summon))
        if action == A_SUMMON_AID:
            state.party_bonus += LEVEL[summon]
        else:
            state.monster_bonus += LEVEL[summon]
        _log(state, "summon", seat, summon, "party" if action == A_SUMMON_AID else "monster", LEVEL[summon])
    elif kind in (K_OFFER, K_ASK):
        _propose(state, seat, action, kind)
        return
    elif kind == K_CURSE:
        target = _play_curse(state, seat, action, cid)
        if state.dying >= 0:
            if target == state.fighter:  # the fight is abandoned; the dead fighter's turn ends
                _clear_combat(state)
                _start_looting(state, RESUME_END_TURN, seat)
            else:
                _start_looting(state, WINDOW, seat)
            return
    _advance_window(state, seat)


def _advance_window(state: State, seat: int) -> None:
    if state.passes >= state.n - state.dead.count(True):  # every living player passed
        _close_window(state)
    else:
        state.to_act = _next_living(state, seat)


def _reset_negotiation(state: State) -> None:
    n = state.n
    state.offers_to, state.best_offer = [0] * n, [-1] * n
    state.asks_from, state.last_ask = [0] * n, [-1] * n


def _propose(state: State, seat: int, action: int, kind: int) -> None:
    """An offer (the fighter) or an ask (a would-be helper), in the window or answering in the talks."""
    if kind == K_OFFER:
        _make_offer(state, action)
    else:
        _make_ask(state, seat, ACTION_ARG[action])


def _make_offer(state: State, action: int) -> None:
    """The fighter offers ``k`` treasures to seat +r (a first offer, a new one, or an improved one)."""
    offset, split = divmod(ACTION_ARG[action], 100)
    other = (state.fighter + offset) % state.n
    state.offers_to[other] += 1
    state.best_offer[other] = split
    state.ask_seat, state.ask_split = other, split
    state.phase, state.to_act = ASK, other
    _log(state, "offer", state.fighter, other, split)


def _make_ask(state: State, seat: int, split: int) -> None:
    """A would-be helper asks the fighter for ``split`` treasures (unasked, or as a counter-offer)."""
    state.asks_from[seat] += 1
    state.last_ask[seat] = split
    state.ask_seat, state.bid = seat, split
    state.phase, state.to_act = COUNTER, state.fighter
    _log(state, "ask", seat, state.fighter, split)


def _negotiate(state: State, seat: int, action: int, kind: int) -> None:
    """ASK (the would-be helper answers an offer) and COUNTER (the fighter answers an ask)."""
    if kind in (K_OFFER, K_ASK):
        _propose(state, seat, action, kind)
        return
    other = state.ask_seat
    split = state.ask_split if state.phase == ASK else state.bid
    if action == A_ACCEPT:
        state.helper, state.split = other, split
        state.helped_by = other
        _log(state, "deal", state.fighter, other, split)
    else:
        _log(state, "no_deal", seat, other if seat == state.fighter else state.fighter)
    state.ask_seat = -1
    state.passes = 0  # a negotiation is a play: the window starts its round of passes again
    state.phase = WINDOW
    state.to_act = _next_living(state, state.fighter)


def _close_window(state: State) -> None:
    if party_wins(state):
        _win_combat(state)
    else:
        _run_away(state)


def _win_combat(state: State) -> None:
    fighter, helper, monster = state.fighter, state.helper, state.monster
    config = state.config
    gained = LEVELS[monster]
    state.level[fighter] = min(config.win_level, state.level[fighter] + gained)
    _log(state, "win", fighter, monster, party_strength(state), monster_strength(state), gained)
    if helper >= 0 and state.races[helper] == ELF:  # an elf gains a level for helping
        state.level[helper] = min(config.win_level - 1, state.level[helper] + 1)
    drawn = 0
    for number in range(TREASURES[monster]):
        receiver = helper if helper >= 0 and number < state.split else fighter
        if _draw_to_hand(state, receiver, from_deck_of=fighter) >= 0:
            drawn += 1
    _log(state, "treasure", fighter, drawn, min(state.split, drawn) if helper >= 0 else 0, helper)
    _clear_combat(state)
    if state.level[fighter] >= config.win_level:
        _end(state, fighter, WIN)
        return
    _after_combat(state)


def _run_away(state: State) -> None:
    fighter = state.fighter
    roll = state.chance.roll(6)
    total = roll + run_bonus(state, fighter) + state.run_bonus
    escaped = total >= state.config.run_target
    monster = state.monster
    _log(state, "run", fighter, monster, roll, total, escaped)
    if not escaped:
        _bad_stuff(state, fighter, monster)
    _clear_combat(state)
    if state.dying >= 0:
        _start_looting(state, RESUME_END_TURN, fighter)
    else:
        _after_combat(state)


def _clear_combat(state: State) -> None:
    """The monster, one-shots and summons on the table go to their owners' discard piles."""
    if state.monster >= 0:
        state.discard[state.fighter].append(state.monster)
    for owner, cid in state.table:
        state.discard[owner].append(cid)
    state.table = []
    state.monster = -1
    state.helper = state.ask_seat = -1
    state.monster_bonus = state.party_bonus = state.run_bonus = state.passes = state.split = 0
    _reset_negotiation(state)


def _after_combat(state: State) -> None:
    if state.source == FROM_DOOR:
        _end_turn(state, draw=state.config.draw_after_monster_door)
    else:
        state.phase, state.to_act = FREE, state.active


def _bad_stuff(state: State, seat: int, monster: int) -> None:
    bad = CATALOG[monster].bad
    _log(state, "bad_stuff", seat, monster, bad)
    if bad == "lose_levels":
        _lose_levels(state, seat, CATALOG[monster].amount)
    elif bad == "death":
        _kill(state, seat, DEATH_EATEN)
    elif bad == "lose_best":
        if state.equipped[seat]:
            best = max(state.equipped[seat], key=lambda cid: (BONUS[cid], GOLD[cid]))
            _discard_equipped(state, seat, [best])
    elif bad == "lose_all_items":
        _discard_equipped(state, seat, list(state.equipped[seat]))
    else:
        _lose_slot(state, seat, bad)


_SLOT_OF = {"lose_helm": "helm", "lose_armor": "armor", "lose_boots": "boots", "lose_weapons": "weapon"}


def _lose_slot(state: State, seat: int, effect: str) -> None:
    kind = _SLOT_OF[effect]
    _discard_equipped(state, seat, [cid for cid in state.equipped[seat] if KIND[cid] == kind])


def _lose_levels(state: State, seat: int, amount: int) -> None:
    state.level[seat] -= amount
    if state.level[seat] < 1:  # below level 1: death, restarting at level 1
        state.level[seat] = 1
        _kill(state, seat, DEATH_LEVELS)


def _play_curse(state: State, seat: int, action: int, cid: int) -> int:
    """``seat`` plays curse ``cid`` from its hand on the seat the action names; returns that seat."""
    target = (seat + ACTION_ARG[action]) % state.n
    state.hand[seat].remove(cid)
    state.discard[seat].append(cid)
    _curse(state, target, cid, by=seat)
    return target


def _curse(state: State, target: int, cid: int, by: int) -> None:
    """A curse takes effect at once on ``target``."""
    effect = CATALOG[cid].effect
    race = state.races[target]
    _log(state, "curse", by, cid, target)
    if effect == "lose_level":
        _lose_levels(state, target, CATALOG[cid].amount)
    elif effect == "lose_race":
        if race != HUMAN:  # humans are immune to "lose your race"
            state.races[target] = NO_RACE
            _fix_slots(state, target)
    elif effect in ("paralysis", "slow", "confusion"):
        if race == PIXIE:  # pixies are immune to paralysis, slow and confusion
            return
        if effect == "paralysis":
            state.paralyzed[target] = True
        elif effect == "slow":
            state.slow_turn[target] = state.turn
        else:
            state.confused_turn[target] = state.turn
    else:
        _lose_slot(state, target, effect)


def _fix_slots(state: State, seat: int) -> None:
    """After losing giant or dwarf powers: drop the weakest items that no longer fit."""
    equipped, race = state.equipped[seat], state.races[seat]
    weakest_first = sorted(equipped, key=lambda cid: (BONUS[cid], GOLD[cid]))
    for cid in weakest_first:
        if KIND[cid] == "weapon" and _hands_used(equipped, race) > 2:
            _discard_equipped(state, seat, [cid])
    bigs = [cid for cid in sorted(equipped, key=lambda cid: (BONUS[cid], GOLD[cid])) if BIG[cid]]
    if race != DWARF and len(bigs) > 1:
        _discard_equipped(state, seat, bigs[:-1])


# --- death and looting -------------------------------------------------------------------------------------


def _kill(state: State, seat: int, kind: int) -> None:
    if state.dying < 0:
        state.dying, state.death_kind = seat, kind
        _log(state, "death", seat, "levels" if kind == DEATH_LEVELS else "eaten")


def _start_looting(state: State, resume_phase: int, resume_seat: int) -> None:
    dying = state.dying
    state.resume_phase, state.resume_seat = resume_phase, resume_seat
    n = state.n
    state.looters = [(dying + k) % n for k in range(1, n) if not state.dead[(dying + k) % n]]
    _loot_continue(state)


def _loot_continue(state: State) -> None:
    dying = state.dying
    if state.looters and (state.equipped[dying] or state.hand[dying]):
        if len(state.looters) == 1:
            _loot_turn(state, state.looters.pop())
        else:
            state.phase, state.to_act = LOOT_ORDER, dying
        return
    _finish_death(state)


def _loot_turn(state: State, looter: int) -> None:
    """The looter "may" take one item in play, or with none in play draw two cards from the hand."""
    state.looter = looter
    state.phase, state.to_act = LOOT_PICK, looter


def _loot_hand(state: State, looter: int) -> None:
    dying = state.dying
    hand = state.hand[dying]
    taken = 0
    for _ in range(2):  # no items in play: draw two cards from the hand
        if hand:
            state.hand[looter].append(hand.pop(state.chance.below(len(hand))))
            taken += 1
    _log(state, "loot_hand", looter, dying, taken)


def _take_loot(state: State, looter: int, cid: int) -> None:
    state.equipped[state.dying].remove(cid)
    state.hand[looter].append(cid)
    _log(state, "loot", looter, state.dying, cid)


def _finish_death(state: State) -> None:
    seat = state.dying
    state.discard[seat].extend(state.hand[seat])
    state.discard[seat].extend(state.equipped[seat])
    state.hand[seat].clear()
    state.equipped[seat].clear()
    if state.summon[seat] >= 0:
        state.discard[seat].append(state.summon[seat])
        state.summon[seat] = -1
    state.dead[seat] = True
    state.paralyzed[seat] = False
    state.slow_turn[seat] = state.confused_turn[seat] = -1
    if state.helper == seat:
        state.helper = -1
    state.dying, state.looter, state.looters = -1, -1, []
    resume, actor = state.resume_phase, state.resume_seat
    if resume == RESUME_END_TURN:
        _end_turn(state, draw=False)
    elif resume == WINDOW:
        state.phase = WINDOW
        state.to_act = _next_living(state, actor)
    elif resume == SETUP:
        state.phase, state.to_act = SETUP, actor
    else:
        state.phase, state.to_act = resume, state.active


# --- the end -----------------------------------------------------------------------------------------------


def _end(state: State, winner: int, reason: str) -> None:
    state.phase = OVER
    state.winner = winner
    state.end_reason = reason
    state.to_act = -1
    _log(state, "end", winner, reason)


def is_terminal(state: State) -> bool:
    return state.phase == OVER


def is_truncated(state: State) -> bool:
    """True when the declared turn or step limit cut the game off (no winner)."""
    return state.end_reason in (TURN_LIMIT, STEP_LIMIT)


def returns(state: State) -> tuple[float, ...]:
    """Winner +1, every other seat -1/(N-1); 0 without a winner; plus the optional level reward."""
    n = state.n
    if state.phase != OVER:
        return (0.0,) * n
    values = [0.0] * n
    if state.winner >= 0:
        values = [-1.0 / (n - 1)] * n
        values[state.winner] = 1.0
    weight = state.config.level_reward
    if weight:
        span = state.config.win_level - 1
        values = [v + weight * (state.level[s] - 1) / span for s, v in enumerate(values)]
    return tuple(values)


# --- search: clone and determinize (agents/mcts.py; docs/search.md) ---------------------------------------

from ..core import copy_chance as _copy_chance  # noqa: E402 - kept with the section it serves
from ..core import redealt as _redealt  # noqa: E402

# Hidden from a seat: the other hands, the order of every deck (its own too) and what lies in the other
# discard piles (docs/rules/wyvern.md makes only pile sizes public: a dead player's hand is discarded
# unseen). Items in play, summons and the table are face up. A test fails for a State field not listed.
HIDDEN_FIELDS = frozenset(("hand", "deck", "discard"))
PUBLIC_FIELDS = frozenset((
    "config", "chance", "n", "races", "classes", "deck_names", "specialties", "static_bonus", "equipped",
    "summon", "level", "dead", "paralyzed", "slow_turn", "confused_turn", "phase", "to_act", "active", "turn",
    "steps", "order_rolls", "first_seat", "door_card", "gold", "halfling_sold", "helped_by", "monster", "source",
    "fighter", "helper", "split", "offers_to", "best_offer", "asks_from", "last_ask", "bid", "ask_seat",
    "ask_split", "monster_bonus", "party_bonus", "run_bonus", "table", "passes", "dying", "death_kind", "looters",
    "looter", "resume_phase", "resume_seat", "shed_phase", "shed_seat", "winner", "end_reason", "events",
    "events_logged", "step_first_event",
))


# The State's fields by how a copy treats them; the assertion below fails when a field is added to State
# and not listed here. Written out rather than generic (envs.core.clone_state): a search copies a state
# per simulation, and this is about three times faster.
_SHARED_FIELDS = (
    "config", "n", "deck_names", "specialties", "phase", "to_act", "active", "turn", "steps", "first_seat",
    "door_card", "gold", "halfling_sold", "helped_by", "monster", "source", "fighter", "helper", "split", "ask_seat",
    "ask_split", "bid", "monster_bonus", "party_bonus", "run_bonus", "passes", "dying", "death_kind", "looter",
    "resume_phase", "resume_seat", "shed_phase", "shed_seat", "winner", "end_reason", "events_logged",
    "step_first_event",
)  # immutable values (tuples of strings)
_FLAT_FIELDS = ("races", "classes", "static_bonus", "summon", "level", "dead", "paralyzed", "slow_turn",
                "confused_turn", "order_rolls", "offers_to", "best_offer", "asks_from", "last_ask", "table",
                "looters", "events")  # lists of immutable values (tuples, ints, bools)
_ZONE_FIELDS = ("equipped", "hand", "deck", "discard")  # lists of lists of card ids; the last three hidden
assert set(State.__dataclass_fields__) == {"chance", *_SHARED_FIELDS, *_FLAT_FIELDS, *_ZONE_FIELDS}


def _copier(zones: bool):
    """The body of :func:`_copy` for one value of ``zones``, written from the field lists above as plain
    assignments (a search copies a state per simulation; this is twice as fast as a loop of getattr and
    setattr over the names, and a field listed above is copied with no further code)."""
    lines = ["def copy(state, chance):", "    new = State.__new__(State)"]
    lines += [f"    new.{name} = state.{name}" for name in _SHARED_FIELDS]
    lines += [f"    new.{name} = state.{name}[:]" for name in _FLAT_FIELDS]
    lines += [f"    new.{name} = [cards[:] for cards in state.{name}]"
              for name in (_ZONE_FIELDS if zones else _ZONE_FIELDS[:1])]
    lines += ["    new.chance = chance", "    return new"]
    namespace = {"State": State}
    exec("\n".join(lines), namespace)  # the source is built from the constant field names above
    return namespace["copy"]


_COPY_ALL, _COPY_PUBLIC = _copier(True), _copier(False)


def _copy(state: State, chance: Chance | None = None, zones: bool = True) -> State:
    """A copy sharing nothing mutable; its Chance is ``chance``, or a copy of the state's. ``zones=False``
    leaves the hidden zones (hand, deck, discard) to the caller, which deals them itself."""
    return (_COPY_ALL if zones else _COPY_PUBLIC)(state, chance if chance is not None else _copy_chance(state.chance))


def clone(state: State) -> State:
    """A copy sharing nothing mutable (its Chance copied too: same generator state and log)."""
    return _copy(state)


def _redeal(state: State, seat: int, order) -> None:
    """Each other player's hand, deck and discard pile pooled, put in ``order`` (a shuffle, or ``list.sort``
    for the canonical form) and dealt back in the same numbers; ``seat``'s own deck put in ``order``.

    Pools are per player: a player's unseen cards are its own hand, deck and discard pile. Cards that
    moved unseen between players (a looter drawing from a dead player's hand) stay in the pool they
    moved to.
    """
    for who in range(state.n):
        if who == seat:
            order(state.deck[who])
            continue
        hand, deck, discard = state.hand[who], state.deck[who], state.discard[who]
        pool = hand + deck + discard
        order(pool)
        state.hand[who] = pool[:len(hand)]
        state.deck[who] = pool[len(hand):len(hand) + len(deck)]
        state.discard[who] = pool[len(hand) + len(deck):]


def determinize(state: State, seat: int, chance: Chance) -> State:
    """A full state consistent with what ``seat`` sees: the other hands and every deck's order dealt afresh
    from ``chance``, future dice from a fresh Chance.

    :func:`_redeal` on a copy (``envs.core.redealt``), the pools in the same order, with the copy and the
    deal in one pass: the other players' zones are dealt from their pools instead of being copied first and
    replaced (a search determinizes once per simulation). Each pool goes through ``chance.shuffle_deal``: a
    plain Chance's ``shuffle`` (so this deals what ``redealt`` deals), the search's dealer a uniform
    shuffle drawn faster (agents/mcts.py, ``SearchChance``); the sample's future dice come from
    ``chance.sample_chance()``: a plain Chance seeds a fresh one (``redealt`` again), the search's dealer
    rolls them itself."""
    new = _copy(state, state.chance, zones=False)
    shuffle = chance.shuffle_deal
    hands, decks, discards = state.hand, state.deck, state.discard
    new_hands, new_decks, new_discards = [], [], []
    for who in range(state.n):
        hand, deck, discard = hands[who], decks[who], discards[who]
        if who == seat:
            deck = deck[:]
            shuffle(deck)
            new_hands.append(hand[:])
            new_decks.append(deck)
            new_discards.append(discard[:])
            continue
        pool = hand + deck + discard
        shuffle(pool)
        held, left = len(hand), len(hand) + len(deck)
        new_hands.append(pool[:held])
        new_decks.append(pool[held:left])
        new_discards.append(pool[left:])
    new.hand, new.deck, new.discard = new_hands, new_decks, new_discards
    new.chance = chance.sample_chance()  # a plain Chance: as envs.core.redealt, a fresh one seeded from it
    return new


def information_state(state: State, seat: int) -> State:
    """What ``seat`` knows as a State: the unseen cards in a canonical (sorted) deal, the Chance blank.
    Two states ``seat`` cannot tell apart give equal information states."""
    return _redealt(state, seat, _redeal, None, _copy)


# --- search: beliefs (agents/belief.py; docs/search.md, "Beliefs") -----------------------------------------

PRIVATE_ACTIONS: frozenset[int] = frozenset()  # every choice is seen by the table (a discard names its card)


def hidden_holdings(state: State, seat: int) -> tuple:
    """What the other seats hold that ``seat`` may not see, as one hashable value: each seat's hand (its card
    ids sorted; ``()`` for ``seat`` itself). A belief keeps these per particle (:func:`determinize_holding`)."""
    return tuple(() if who == seat else tuple(sorted(state.hand[who])) for who in range(state.n))


def determinize_holding(state: State, seat: int, holdings: tuple, chance: Chance) -> State | None:
    """:func:`determinize` with the other hands given (``holdings``, :func:`hidden_holdings` of a state of this
    game: a belief's particle): each is dealt to its seat, and the rest of that seat's pool (deck and
    discard pile) and ``seat``'s own deck are shuffled from ``chance``. None when a hand cannot be dealt from
    its seat's unseen cards in ``state`` (another size, or a card its pool lacks)."""
    new = _copy(state, state.chance, zones=False)
    shuffle = chance.shuffle_deal
    new_hands, new_decks, new_discards = [], [], []
    for who in range(state.n):
        hand, deck, discard = state.hand[who], state.deck[who], state.discard[who]
        if who == seat:
            deck = deck[:]
            shuffle(deck)
            new_hands.append(hand[:])
            new_decks.append(deck)
            new_discards.append(discard[:])
            continue
        held = holdings[who]
        if len(held) != len(hand):
            return None
        rest = hand + deck + discard
        for card in held:
            try:
                rest.remove(card)
            except ValueError:
                return None
        shuffle(rest)
        new_hands.append(list(held))
        new_decks.append(rest[:len(deck)])
        new_discards.append(rest[len(deck):])
    new.hand, new.deck, new.discard = new_hands, new_decks, new_discards
    new.chance = chance.sample_chance()
    return new


_FROM_HAND = frozenset((K_EQUIP, K_USE_PARTY, K_USE_MONSTER, K_CURSE, K_FIGHT, K_SELL, K_DISCARD))


def cards_played_from_hand(action: int) -> tuple[int, ...]:
    """The cards ``action`` takes from its player's hand: a seat that sees the move learns the player held it."""
    return (ACTION_CARD[action],) if ACTION_KIND[action] in _FROM_HAND else ()


def hand_odds(state: State, seat: int, mover: int, card: int) -> tuple[int, int, int, int, int]:
    """What a belief's proposal (agents/belief.py, :func:`swap_into_hand`) weighs in a full ``state`` seen by
    ``seat``: copies of ``card`` in ``mover``'s hand that ``seat`` remembers (none: a seat remembers no hand
    here), those it does not, the hand's size, and the unseen rest of ``mover``'s cards (deck and discard
    pile, :func:`determinize_holding`): all of them, and the copies of ``card``."""
    rest = state.deck[mover] + state.discard[mover]
    return 0, state.hand[mover].count(card), len(state.hand[mover]), len(rest), rest.count(card)


def swap_into_hand(state: State, seat: int, mover: int, card: int, chance: Chance) -> None:
    """Put ``card`` into ``mover``'s hand in a full ``state`` (a belief's particle; the hand holds none): one
    of its copies in ``mover``'s deck or discard pile, drawn uniformly, changes places with a card of the
    hand drawn uniformly. What ``seat`` sees is unchanged."""
    hand = state.hand[mover]
    given = chance.below(len(hand))
    places = [(zone, i) for zone in (state.deck[mover], state.discard[mover]) for i, c in enumerate(zone) if c == card]
    zone, position = places[chance.below(len(places))]
    zone[position], hand[given] = hand[given], card


def determinize_near(state: State, seat: int, holdings: tuple, chance: Chance) -> State:
    """:func:`determinize_holding`, or where a hand in ``holdings`` cannot be dealt from its seat's unseen cards
    (a belief's particle that fell out of step with the game), the nearest hand that can: the given cards its
    seat's unseen pool still holds (at random, up to the hand's size), the rest drawn uniformly from the pool."""
    dealt = determinize_holding(state, seat, holdings, chance)
    if dealt is not None:
        return dealt
    near = []
    for who in range(state.n):
        if who == seat:
            near.append(())
            continue
        pool = state.hand[who] + state.deck[who] + state.discard[who]
        given = list(holdings[who]) if who < len(holdings) else []
        chance.shuffle(given)
        hand = []
        for card in given:
            if card in pool and len(hand) < len(state.hand[who]):
                pool.remove(card)
                hand.append(card)
        chance.shuffle(pool)
        hand += pool[:len(state.hand[who]) - len(hand)]
        near.append(tuple(sorted(hand)))
    return determinize_holding(state, seat, tuple(near), chance)


def merge_holdings(state: State, seat: int, parts: dict[int, tuple]) -> tuple:
    """One :func:`hidden_holdings` value from several: each other seat's hand from ``parts[who]`` (a belief
    resampling seat by seat; each seat draws from its own pool, so they never clash)."""
    return tuple(() if who == seat else parts[who][who] for who in range(state.n))
