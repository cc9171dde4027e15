"""MiniSteel — the rules engine (pure Python: no gymnasium, pettingzoo or torch).

The rulebook (shared/seeds/001_*.txt) in brief, as implemented here; docs/rules/ministeel.md marks every
interpretation (``[I]`` below):

* 2-6 players, 10 HP each, one shared deck of 100 cards (``cards.toml``: the sheet's numbers in
  parentheses read as copies [I]), one six-sided die. Every player rolls; the highest roll starts, high
  ties re-roll among the tied. Six cards and two Card Draw tokens each; play goes up the seat order.
* A turn: take 1 HP per Poison token (never below 1 HP), draw up to 6 cards (7 with a Satchel), then two
  actions. An action plays one card, plays a combo (an attack with a Poison card [I]: the poison lands
  only if physical damage gets through), or is forfeited by discarding one card (a Dark card costs 1 HP).
  Equipping and Card Draw tokens (3 cards each) use no action. Tokens "at any time", never as a
  reaction [I]: in your own main phase, and (v2, ``token_timing=any_time``) in a Card Draw window after
  each completed action of another player and at each turn boundary, where every other seat in play
  holding a token is asked in seat order, draw or pass (``own_turn``: your own main phase only, as v1).
  An empty deck is reshuffled from the discard pile.
* Reactions are separate decisions: the defender of a blockable attack or Poison chooses a shield,
  Confusion Dust, Remedy or nothing; the attacker may answer a shield with a Hook Rope (taking it).
* A player at 0 HP is out unless a Resurrection Scepter in hand revives them [I]; 5 Poison tokens put a
  player out. The last player alive wins (+1); every other player gets -1/(N-1) the moment they are out.

Actions: one fixed table (``ACTIONS``, its stable names ``ACTION_NAMES``; the table is in
:mod:`.encode`'s docstring), by card kind and by target relative to the actor (``seat+1`` .. ``seat+5``),
the same for every table size; ``token:pass`` (index 140) exists only with ``token_timing=any_time``.
Cards are held as counts by kind.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from itertools import compress

from ..core import Chance, IllegalActionError, check_choice, check_range, option

MIN_PLAYERS, MAX_PLAYERS = 2, 6
MAX_TARGETS = MAX_PLAYERS - 1

# --- the cards -------------------------------------------------------------------------------------------

KINDS = (
    "dagger", "hatchet", "sword", "flame_shot", "scythe",
    "potion", "remedy", "poison",
    "magnifying_glass", "hook_rope", "swap_rope", "trip_rope",
    "wooden_shield", "steel_shield",
    "bladed_shield", "fate",
    "spiked_glove", "armor", "satchel",
    "confusion_dust", "resurrection_scepter",
    "plague_skull", "doom_dragon",
)  # fmt: skip
NUM_KINDS = len(KINDS)
(DAGGER, HATCHET, SWORD, FLAME_SHOT, SCYTHE, POTION, REMEDY, POISON, MAGNIFYING_GLASS, HOOK_ROPE, SWAP_ROPE,
 TRIP_ROPE, WOODEN_SHIELD, STEEL_SHIELD, BLADED_SHIELD, FATE, SPIKED_GLOVE, ARMOR, SATCHEL, CONFUSION_DUST,
 RESURRECTION_SCEPTER, PLAGUE_SKULL, DOOM_DRAGON) = range(NUM_KINDS)


def _load_sheet() -> dict:
    data = tomllib.loads(resources.files(__package__).joinpath("cards.toml").read_text())
    cards = data["cards"]
    if tuple(cards) != KINDS:
        raise ValueError(f"cards.toml must list exactly {KINDS} in that order, got {tuple(cards)}")
    return data


_SHEET = _load_sheet()
COUNTS = tuple(int(card["count"]) for card in _SHEET["cards"].values())
VALUES = tuple(int(card["value"]) for card in _SHEET["cards"].values())
CARD_TYPES = tuple(str(card["type"]) for card in _SHEET["cards"].values())
CARD_TEXT = tuple(str(card["text"]) for card in _SHEET["cards"].values())
DECK_SIZE = sum(COUNTS)
assert DECK_SIZE == 100, f"the MiniSteel deck holds 100 cards, cards.toml sums to {DECK_SIZE}"
FATE_ATTACK = frozenset(_SHEET["fate"]["attack_faces"])
FATE_POISON = frozenset(_SHEET["fate"]["poison_faces"])
FATE_HEAL_FACES = frozenset(_SHEET["fate"]["heal_faces"])
FATE_HEAL = int(_SHEET["fate"]["heal"])
assert sorted(FATE_ATTACK | FATE_POISON | FATE_HEAL_FACES) == [1, 2, 3, 4, 5, 6]

DARK = frozenset(k for k in range(NUM_KINDS) if CARD_TYPES[k] == "dark")
EQUIP_KINDS = (SPIKED_GLOVE, ARMOR, SATCHEL)  # equipment slots, in this order
EQUIP_CAPS = (2, 1, 1)  # "Only two Spiked Gloves ... Only 1 Armor ... Only 1 Satchel"
GLOVES, ARMOR_SLOT, SATCHEL_SLOT = range(3)
SLOT_OF = {kind: slot for slot, kind in enumerate(EQUIP_KINDS)}
SHIELDS = (WOODEN_SHIELD, STEEL_SHIELD, BLADED_SHIELD)

# --- the action table --------------------------------------------------------------------------------------

# Action types (NO_DRAW: v2's Card Draw window, "not now").
PLAY_AT, PLAY, EQUIP, COMBO, TOKEN, FORFEIT, FORFEIT_EMPTY, REACT, PICK, NO_DRAW = range(10)
TARGETED = (DAGGER, HATCHET, SWORD, FLAME_SHOT, POISON, HOOK_ROPE, SWAP_ROPE, TRIP_ROPE, BLADED_SHIELD)
UNTARGETED = (SCYTHE, POTION, REMEDY, MAGNIFYING_GLASS, PLAGUE_SKULL, DOOM_DRAGON)
COMBO_ATTACKS = (DAGGER, HATCHET, SWORD, FLAME_SHOT, BLADED_SHIELD)  # each "+ poison"
REACTIONS = (WOODEN_SHIELD, STEEL_SHIELD, BLADED_SHIELD, CONFUSION_DUST, REMEDY, HOOK_ROPE, -1)  # -1: none

ACTIONS: list[tuple[int, int, int]] = []  # (type, card kind or -1, target offset or -1)
for _card in TARGETED:
    ACTIONS += [(PLAY_AT, _card, k) for k in range(1, MAX_TARGETS + 1)]
ACTIONS += [(PLAY_AT, FATE, k) for k in range(0, MAX_TARGETS + 1)]  # offset 0: Fate on yourself
ACTIONS += [(PLAY, card, -1) for card in UNTARGETED]
ACTIONS += [(EQUIP, card, -1) for card in EQUIP_KINDS]
for _card in COMBO_ATTACKS:
    ACTIONS += [(COMBO, _card, k) for k in range(1, MAX_TARGETS + 1)]
ACTIONS.append((TOKEN, -1, -1))
ACTIONS += [(FORFEIT, card, -1) for card in range(NUM_KINDS)]
ACTIONS.append((FORFEIT_EMPTY, -1, -1))
ACTIONS += [(REACT, card, -1) for card in REACTIONS]
ACTIONS += [(PICK, card, -1) for card in range(NUM_KINDS)]
V1_NUM_ACTIONS = len(ACTIONS)  # 140: v1's table, and v2's with token_timing=own_turn
ACTIONS.append((NO_DRAW, -1, -1))  # appended, so every older index keeps its meaning
NUM_ACTIONS = len(ACTIONS)
ACTION_TYPE = tuple(a[0] for a in ACTIONS)
ACTION_CARD = tuple(a[1] for a in ACTIONS)
ACTION_OFFSET = tuple(a[2] for a in ACTIONS)
_INDEX = {a: i for i, a in enumerate(ACTIONS)}
PLAY_AT_INDEX = {(card, k): _INDEX[(PLAY_AT, card, k)] for (t, card, k) in ACTIONS if t == PLAY_AT}
PLAY_INDEX = {card: _INDEX[(PLAY, card, -1)] for card in UNTARGETED}
EQUIP_INDEX = {card: _INDEX[(EQUIP, card, -1)] for card in EQUIP_KINDS}
COMBO_INDEX = {(card, k): _INDEX[(COMBO, card, k)] for card in COMBO_ATTACKS for k in range(1, MAX_TARGETS + 1)}
TOKEN_DRAW = _INDEX[(TOKEN, -1, -1)]
FORFEIT_INDEX = tuple(_INDEX[(FORFEIT, card, -1)] for card in range(NUM_KINDS))
FORFEIT_NOTHING = _INDEX[(FORFEIT_EMPTY, -1, -1)]
REACT_INDEX = {card: _INDEX[(REACT, card, -1)] for card in REACTIONS}
REACT_NONE = REACT_INDEX[-1]
assert list(REACT_INDEX.values()) == sorted(REACT_INDEX.values())  # legal_actions lists reactions unsorted
PICK_INDEX = tuple(_INDEX[(PICK, card, -1)] for card in range(NUM_KINDS))
TOKEN_PASS = _INDEX[(NO_DRAW, -1, -1)]


def _action_name(kind: int, card: int, offset: int) -> str:
    target = "self" if offset == 0 else f"seat+{offset}"
    if kind == PLAY_AT:
        return f"play:{KINDS[card]}>{target}"
    if kind == PLAY:
        return f"play:{KINDS[card]}"
    if kind == EQUIP:
        return f"equip:{KINDS[card]}"
    if kind == COMBO:
        return f"combo:{KINDS[card]}+poison>{target}"
    if kind == TOKEN:
        return "token:draw"
    if kind == NO_DRAW:
        return "token:pass"
    if kind == FORFEIT:
        return f"forfeit:discard_{KINDS[card]}"
    if kind == FORFEIT_EMPTY:
        return "forfeit:empty_hand"
    if kind == REACT:
        return "react:none" if card < 0 else f"react:{KINDS[card]}"
    if kind == PICK:
        return f"pick:{KINDS[card]}"
    raise AssertionError(kind)


# The stable names (the action table is in encode.py's docstring); records and bots speak them.
ACTION_NAMES = tuple(_action_name(*action) for action in ACTIONS)
assert len(ACTION_NAMES) == NUM_ACTIONS == len(set(ACTION_NAMES))

# Phases: the seat to act chooses a main action, a reaction, an answer to a shield, a card to keep, or
# (v2) whether to use a Card Draw token in a window between other players' actions.
MAIN, REACT_PHASE, ANSWER, PICK_PHASE, GAME_OVER, DRAW_PHASE = range(6)
PHASE_NAMES = ("main", "react", "answer", "pick", "over", "draw")

# When Card Draw tokens may be used (docs/rules/ministeel.md, interpretation 20).
ANY_TIME, OWN_TURN = "any_time", "own_turn"
TOKEN_TIMINGS = (ANY_TIME, OWN_TURN)

# Why a game ended.
LAST_STANDING, ALL_OUT, TURN_LIMIT, DECISION_LIMIT = "last_standing", "all_out", "turn_limit", "decision_limit"

# --- configuration -------------------------------------------------------------------------------------------

BOOL = (True, False)


@dataclass(frozen=True)
class ConfigV1:
    """Options of one ``ministeel_v1`` game (Card Draw tokens only in your own main phase); every value
    is checked, bad ones raise ValueError. v2's :class:`Config` adds ``token_timing``."""

    num_players: int = option(4, "players at the table", choices=tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    starting_hp: int = option(10, "hit points each player starts with")
    hp_cap: int = option(10, "a heal never lifts HP above this (at least starting_hp)")
    hand_size: int = option(6, "cards dealt and drawn up to each turn (a Satchel adds one)")
    draw_tokens: int = option(2, "Card Draw tokens each player starts with")
    token_cards: int = option(3, "cards one Card Draw token draws")
    actions_per_turn: int = option(2, "actions in a turn (a combo counts as one)")
    poison_limit: int = option(5, "Poison tokens that remove a player from the game")
    steal_equipment: bool = option(True, "Hook Rope and Scythe steal from equipped cards too, not only the hand",
                                   choices=BOOL)
    armor_vs_unblockable: bool = option(False, "Armor also reduces unblockable damage (Scythe, Confusion Dust)",
                                        choices=BOOL)
    flame_needs_damage: bool = option(False, "Flame Shot destroys cards only if its damage gets through",
                                      choices=BOOL)
    fate_on_self: bool = option(False, "a player may also choose themselves as Fate's target (the rulebook says "
                                       "'your opponent')", choices=BOOL)
    skipped_turn_poison: bool = option(False, "a turn skipped by Trip Rope still takes poison damage",
                                       choices=BOOL)
    max_turns: int = option(200, "turns after which the game is cut off (truncated, no winner)")
    max_decisions: int = option(2000, "decisions after which the game is cut off (the declared maximum)")

    def __post_init__(self) -> None:
        check_choice("num_players", self.num_players, tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
        check_range("starting_hp", self.starting_hp, 1, 1000)
        check_range("hp_cap", self.hp_cap, self.starting_hp, 1000)
        check_range("hand_size", self.hand_size, 1, 20)  # 0: nobody ever holds a card, only passes are left
        check_range("draw_tokens", self.draw_tokens, 0, 20)
        check_range("token_cards", self.token_cards, 0, 20)
        check_range("actions_per_turn", self.actions_per_turn, 1, 10)
        check_range("poison_limit", self.poison_limit, 1, 100)
        for name in ("steal_equipment", "armor_vs_unblockable", "flame_needs_damage", "fate_on_self",
                     "skipped_turn_poison"):
            check_choice(name, getattr(self, name), BOOL)
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r} is not valid; choose one of: True, False")
        check_range("max_turns", self.max_turns, 1)
        check_range("max_decisions", self.max_decisions, 1)
        for name in ("starting_hp", "hp_cap", "hand_size", "draw_tokens", "token_cards", "actions_per_turn",
                     "poison_limit", "max_turns", "max_decisions"):
            if not isinstance(getattr(self, name), int):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")

    @property
    def draw_windows(self) -> bool:
        """True when token holders are asked between other players' actions (v2's ``any_time``)."""
        return False


@dataclass(frozen=True)
class Config(ConfigV1):
    """Options of one MiniSteel game (v2); every value is checked, bad ones raise ValueError."""

    token_timing: str = option(ANY_TIME, "when Card Draw tokens may be used: any_time (also between other "
                                         "players' actions and at turn boundaries) or own_turn (only in your "
                                         "own main phase, as in v1)", choices=TOKEN_TIMINGS)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("token_timing", self.token_timing, TOKEN_TIMINGS)

    @property
    def draw_windows(self) -> bool:
        return self.token_timing == ANY_TIME


# --- state ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class State:
    """Everything about one game. Hands are counts by card kind; the deck is a list of kinds (top last)."""

    config: Config
    chance: Chance
    n: int
    hp: list[int]
    poison: list[int]
    tokens: list[int]
    hands: list[list[int]]
    equipment: list[list[int]]  # per seat: Spiked Gloves, Armor, Satchel
    skips: list[int]  # turns to skip (Trip Rope)
    alive: list[bool]
    deck: list[int]
    discard: list[int]  # counts by kind; the discard pile is public
    initiative_rolls: list[list[int]]  # per round of rolling: the d6 of each seat (0: not rolling)
    first_seat: int
    turn_seat: int = 0  # whose turn it is
    to_act: int = 0  # who decides now (the defender during a reaction)
    phase: int = MAIN
    actions_left: int = 0
    turn: int = 0  # turns begun, skipped turns included
    decisions: int = 0
    # The attack waiting for a reaction or an answer.
    attacker: int = -1
    target: int = -1
    attack_card: int = -1  # the card kind attacking (FATE for a Fate attack or poison)
    damage: int = 0  # physical value before shields and armor (0: no physical part)
    poisons: bool = False  # the attack carries a Poison (solo Poison, combo, Fate's poison face)
    combo: bool = False
    shield: int = -1  # the shield the defender raised (answer phase)
    # Cards drawn or taken and waiting for the player to keep one (Magnifying Glass, Scythe).
    pick: list[int] = field(default_factory=lambda: [0] * NUM_KINDS)
    pick_source: int = -1
    # v2's Card Draw window (phase ``draw``): the seats still to be asked, in order (the first decides now),
    # and, at a turn boundary, the seat whose turn ``_start_turn`` begins when it closes (-1: between two
    # actions of ``turn_seat``).
    window: list[int] = field(default_factory=list)
    window_next: int = -1
    eliminated: list[int] = field(default_factory=list)  # seats in the order they went out
    out_at: list[int] = field(default_factory=list)  # per seat: the decision that put it out (-1: alive)
    finishing_order: list[int] = field(default_factory=list)  # at the end: first place to last
    winner: int = -1
    end_reason: str = ""
    # Since the last decision: (audience or None for everyone, text). For views; the rules never read it.
    log: list[tuple[tuple[int, ...] | None, str]] = field(default_factory=list)
    # known[observer][holder][kind]: cards of that kind ``observer`` knows ``holder`` holds in hand (a lower
    # bound, kept from what the observer saw: a hand it swapped away, a card stolen from it, a shield hooked
    # in public). For observations; the rules never read it.
    known: list[list[list[int]]] = field(default_factory=list)


class QuietLog(list):
    """The log of a search's determinized sample (:func:`determinize`): the rules format no line for it,
    since nobody shows a sample's events (the formatting was a sixteenth of a MiniSteel search), so after
    the sample's first decision it stays empty. A copy of it (``clone``, ``information_state``) is a plain
    list again, and logs."""

    __slots__ = ()

    def append(self, entry: object) -> None:
        pass  # the rules skip a QuietLog; this keeps it quiet for any other writer too


def _say(state: State, audience: tuple[int, ...] | None, template: str, *facts: object) -> None:
    """Log one line for ``audience`` (None: everyone): ``template`` filled with ``facts``. A search
    sample's :class:`QuietLog` keeps no lines, so for it the text is never even formatted."""
    if state.log.__class__ is not QuietLog:
        state.log.append((audience, template.format(*facts) if facts else template))


def num_seats(config: Config) -> int:
    return config.num_players


def max_game_length(config: Config) -> int:
    """The most decisions one game can take: the game is cut off at ``max_decisions``."""
    return config.max_decisions


def new_game(config: Config, chance: Chance) -> State:
    """Roll for the first player (high ties re-roll), shuffle the deck, deal six cards and two tokens each."""
    n = config.num_players
    rolling = list(range(n))
    rolls = []
    while True:
        faces = [0] * n
        for seat in rolling:
            faces[seat] = chance.roll(6)
        rolls.append(faces)
        best = max(faces)
        rolling = [seat for seat in rolling if faces[seat] == best]
        if len(rolling) == 1:
            break
    first = rolling[0]
    deck = [kind for kind in range(NUM_KINDS) for _ in range(COUNTS[kind])]
    chance.shuffle(deck)
    state = State(
        config=config, chance=chance, n=n, hp=[config.starting_hp] * n, poison=[0] * n,
        tokens=[config.draw_tokens] * n, hands=[[0] * NUM_KINDS for _ in range(n)],
        equipment=[[0, 0, 0] for _ in range(n)], skips=[0] * n, alive=[True] * n, deck=deck,
        discard=[0] * NUM_KINDS, initiative_rolls=rolls, first_seat=first, out_at=[-1] * n,
        known=[[[0] * NUM_KINDS for _ in range(n)] for _ in range(n)],
    )
    for i in range(n):
        _draw(state, (first + i) % n, config.hand_size)
    state.turn_seat = first
    if not (config.draw_windows and _open_window(state, first, first, first)):
        _start_turn(state, first)
    return state


# --- cards moving -----------------------------------------------------------------------------------------------


def _reshuffle(state: State) -> None:
    discard = state.discard
    deck = [kind for kind in range(NUM_KINDS) for _ in range(discard[kind])]
    state.discard = [0] * NUM_KINDS
    state.chance.shuffle(deck)
    state.deck = deck


def _draw_one(state: State) -> int:
    """The top card of the deck (reshuffling the discard pile into an empty deck), or -1 if none is left."""
    if not state.deck:
        _reshuffle(state)
        if not state.deck:
            return -1
    return state.deck.pop()


def _draw(state: State, seat: int, count: int) -> int:
    hand = state.hands[seat]
    drawn = 0
    for _ in range(count):
        card = _draw_one(state)
        if card < 0:
            break
        hand[card] += 1
        drawn += 1
    return drawn


def _nth_card(counts: list[int], index: int) -> int:
    """The kind of the ``index``-th card of a hand held as counts by kind."""
    for kind in range(NUM_KINDS):
        index -= counts[kind]
        if index < 0:
            return kind
    raise AssertionError("card index beyond the hand")


def _take_random(state: State, seat: int, equipment: bool, equipment_first: bool,
                 audience: tuple[int, ...] | None = None) -> tuple[int, bool]:
    """Remove a random card from ``seat``: ``(its kind, it came from the hand)``, kind -1 if there is none.

    ``equipment_first``: destroyed cards come from the equipment while any is left (the rulebook); else,
    with ``equipment``, the draw is uniform over the hand and the equipped cards together. ``audience``
    sees which card left the hand (None: everyone); equipment is public.
    """
    hand, worn = state.hands[seat], state.equipment[seat]
    held, wearing = sum(hand), (sum(worn) if equipment or equipment_first else 0)
    if equipment_first and wearing:
        held = 0
    if held + wearing == 0:
        return -1, False
    index = state.chance.below(held + wearing)
    if index < held:
        kind = _nth_card(hand, index)
        hand[kind] -= 1
        _forget(state, seat, kind, audience)
        return kind, True
    index -= held
    for slot in range(3):
        index -= worn[slot]
        if index < 0:
            worn[slot] -= 1
            return EQUIP_KINDS[slot], False
    raise AssertionError("equipment index beyond the equipment")


def _gain_stolen(state: State, seat: int, kind: int, audience: tuple[int, ...] | None = ()) -> None:
    """A stolen card: an Equippable is equipped at once when there is room (the rulebook allows it).
    ``audience`` knows which card went into the hand (None: everyone)."""
    slot = SLOT_OF.get(kind, -1)
    if slot >= 0 and state.equipment[seat][slot] < EQUIP_CAPS[slot]:
        state.equipment[seat][slot] += 1
    else:
        state.hands[seat][kind] += 1
        _learn(state, seat, kind, audience)


# --- what each seat knows of the others' hands -----------------------------------------------------------------


def _forget(state: State, holder: int, kind: int, audience: tuple[int, ...] | None = None) -> None:
    """A card of ``kind`` left ``holder``'s hand; ``audience`` (None: everyone) saw which. An observer who
    saw only that a card went can no longer count on any one card it knew of."""
    if audience is None:  # most plays: in front of everyone
        for rows in state.known:
            known = rows[holder]
            if known[kind]:
                known[kind] -= 1
        return
    for observer, rows in enumerate(state.known):
        known = rows[holder]
        if audience is None or observer in audience:
            if known[kind]:
                known[kind] -= 1
        elif any(known):
            rows[holder] = [count - 1 if count else 0 for count in known]


def _learn(state: State, holder: int, kind: int, audience: tuple[int, ...] | None) -> None:
    """A card of ``kind`` went into ``holder``'s hand in front of ``audience`` (None: everyone)."""
    for observer, rows in enumerate(state.known):
        if observer != holder and (audience is None or observer in audience):
            rows[holder][kind] += 1


def _forget_hand(state: State, holder: int) -> None:
    """``holder``'s whole hand is gone (a revival, an elimination): nothing known of it stays true."""
    for rows in state.known:
        rows[holder] = [0] * NUM_KINDS


def _destroy(state: State, seat: int, count: int) -> list[int]:
    destroyed = []
    for _ in range(count):
        kind, _ = _take_random(state, seat, equipment=True, equipment_first=True)
        if kind < 0:
            break
        state.discard[kind] += 1
        destroyed.append(kind)
    return destroyed


def _names(kinds: list[int]) -> str:
    return ", ".join(KINDS[k] for k in kinds) or "nothing"


# --- harm, death and the end ---------------------------------------------------------------------------------


def _hurt(state: State, seat: int, amount: int) -> None:
    if amount <= 0 or not state.alive[seat]:
        return
    state.hp[seat] -= amount
    if state.hp[seat] <= 0:
        _die(state, seat)


def _die(state: State, seat: int) -> None:
    hand = state.hands[seat]
    if hand[RESURRECTION_SCEPTER]:
        # "Upon death, revive yourself by rolling the die and setting your HP to the value of the roll.
        # Discard your hand, then draw six new cards and acquire one Card Draw token."
        roll = state.chance.roll(6)
        state.hp[seat] = min(roll, state.config.hp_cap)
        for kind in range(NUM_KINDS):
            state.discard[kind] += hand[kind]
            hand[kind] = 0
        _forget_hand(state, seat)
        _draw(state, seat, state.config.hand_size)
        state.tokens[seat] += 1
        _say(state, None, "player_{} dies and the Resurrection Scepter revives them with {} HP", seat, roll)
        return
    state.hp[seat] = 0
    _eliminate(state, seat, "is vanquished")


def _add_poison(state: State, seat: int) -> None:
    if not state.alive[seat]:
        return
    state.poison[seat] += 1
    if state.poison[seat] >= state.config.poison_limit:
        _eliminate(state, seat, f"holds {state.poison[seat]} Poison tokens and is removed")


def _eliminate(state: State, seat: int, why: str) -> None:
    state.alive[seat] = False
    hand, worn = state.hands[seat], state.equipment[seat]
    for kind in range(NUM_KINDS):
        state.discard[kind] += hand[kind]
        hand[kind] = 0
    for slot in range(3):
        state.discard[EQUIP_KINDS[slot]] += worn[slot]
        worn[slot] = 0
    _forget_hand(state, seat)
    state.skips[seat] = 0
    state.eliminated.append(seat)
    state.out_at[seat] = state.decisions
    _say(state, None, "player_{} {}", seat, why)


def _next_alive(state: State, seat: int) -> int:
    n, alive = state.n, state.alive
    seat = (seat + 1) % n
    while not alive[seat]:
        seat = (seat + 1) % n
    return seat


def _end(state: State, reason: str) -> None:
    state.phase = GAME_OVER
    state.to_act = -1
    state.end_reason = reason
    if any(state.pick):  # cards still waiting for a pick go to the discard pile
        for kind in range(NUM_KINDS):
            state.discard[kind] += state.pick[kind]
        state.pick = [0] * NUM_KINDS
    survivors = [seat for seat in range(state.n) if state.alive[seat]]
    if reason == LAST_STANDING:
        state.winner = survivors[0]
    # First place to last: the winner (or the survivors of a cut-off game), then the last out first.
    state.finishing_order = survivors + state.eliminated[::-1]


def _settle(state: State, completed: bool) -> None:
    """After every decision: end the game, or the turn, when the rules say so; with ``draw_windows``,
    open a Card Draw window when the decision ``completed`` an action (and so at a turn boundary)."""
    alive = state.alive.count(True)
    if alive <= 1:
        _end(state, LAST_STANDING if alive == 1 else ALL_OUT)
        return
    if state.decisions >= state.config.max_decisions:
        _end(state, DECISION_LIMIT)
        return
    if state.phase == DRAW_PHASE:
        return
    seat = state.turn_seat
    if not state.alive[seat] or (state.phase == MAIN and state.actions_left <= 0):
        state.phase = MAIN
        following = _next_alive(state, seat)
        if state.config.draw_windows and _open_window(state, seat + 1, _upcoming_seat(state, seat), following):
            return
        _start_turn(state, following)
    elif completed and state.phase == MAIN and state.config.draw_windows:
        _open_window(state, seat + 1, seat, -1)


# --- v2: Card Draw tokens between other players' actions (docs/rules/ministeel.md, interpretation 20) ---------


def _open_window(state: State, start: int, excluded: int, following: int) -> bool:
    """Ask every seat in play holding a token, in seat order from ``start``, except ``excluded`` (the
    seat to act next: it may draw in its own main phase, which is never worse), whether to draw now.
    ``following``: the seat whose turn begins when the window closes (-1: ``turn_seat`` acts on).
    False, and nothing changed, when nobody is to be asked."""
    n = state.n
    alive, tokens = state.alive, state.tokens
    if not any(tokens):  # every token used: after the first few turns, the usual case
        return False
    asked = [s for s in _SEAT_ORDERS[n][start % n] if s != excluded and alive[s] and tokens[s]]
    if not asked:
        return False
    state.window = asked
    state.window_next = following
    state.phase = DRAW_PHASE
    state.to_act = asked[0]
    return True


# _SEAT_ORDERS[n][first]: the seats of an n-player table in turn order from ``first``.
_SEAT_ORDERS = tuple(tuple(tuple((first + k) % n for k in range(n)) for first in range(n)) if n else ()
                     for n in range(MAX_PLAYERS + 1))


def _upcoming_seat(state: State, seat: int) -> int:
    """The seat whose turn comes after ``seat``'s, Trip Rope skips counted (what ``_start_turn`` will find,
    without changing anything)."""
    skips = state.skips[:]
    following = _next_alive(state, seat)
    while skips[following]:
        skips[following] -= 1
        following = _next_alive(state, following)
    return following


def _window_decision(state: State, draw: bool) -> None:
    """The seat asked draws (and is asked again while it holds a token) or passes; then the next is asked,
    and when nobody is left the game goes on: ``turn_seat``'s next action, or the next turn."""
    seat = state.to_act
    if draw:
        state.tokens[seat] -= 1
        drawn = _draw(state, seat, state.config.token_cards)
        _say(state, None, "player_{} uses a Card Draw token and draws {}", seat, drawn)
        if state.tokens[seat]:
            return
    else:
        _say(state, None, "player_{} keeps their Card Draw tokens for now", seat)
    window = state.window
    window.pop(0)
    if window:
        state.to_act = window[0]
        return
    state.phase = MAIN
    following, state.window_next = state.window_next, -1
    if following >= 0:
        _start_turn(state, following)
    else:
        state.to_act = state.turn_seat


def _start_turn(state: State, seat: int) -> None:
    config = state.config
    while True:
        if state.turn >= config.max_turns:
            _end(state, TURN_LIMIT)
            return
        state.turn += 1
        if state.skips[seat]:
            state.skips[seat] -= 1
            _say(state, None, "player_{}'s turn is skipped (Trip Rope)", seat)
            if config.skipped_turn_poison and state.poison[seat]:
                state.hp[seat] = max(1, state.hp[seat] - state.poison[seat])
            seat = _next_alive(state, seat)
            continue
        break
    if state.poison[seat]:  # "Players cannot be vanquished completely via poison damage"
        state.hp[seat] = max(1, state.hp[seat] - state.poison[seat])
    limit = config.hand_size + state.equipment[seat][SATCHEL_SLOT]
    missing = limit - sum(state.hands[seat])
    if missing > 0:
        _draw(state, seat, missing)
    state.turn_seat = state.to_act = seat
    state.phase = MAIN
    state.actions_left = config.actions_per_turn


# --- whose decision, and which ---------------------------------------------------------------------------------


def current_seat(state: State) -> int:
    """The seat that decides next, or -1 once the game is over."""
    return state.to_act


def seats_out(state: State) -> list[int]:
    """Seats already out of the game, in the order they went out."""
    return state.eliminated


def _can_be_robbed(state: State, seat: int) -> bool:
    return sum(state.hands[seat]) > 0 or (state.config.steal_equipment and sum(state.equipment[seat]) > 0)


def _reactions(state: State) -> list[int]:
    """The reaction cards the defender of the pending attack may play (not counting 'none')."""
    hand = state.hands[state.target]
    options = []
    if state.damage > 0:
        for card in (WOODEN_SHIELD, STEEL_SHIELD, BLADED_SHIELD, CONFUSION_DUST):
            if hand[card]:
                options.append(card)
    if state.poisons and hand[REMEDY]:
        options.append(REMEDY)
    return options


def legal_actions(state: State) -> list[int]:
    """Legal action indices for the seat to act, ascending; empty once the game is over."""
    phase = state.phase
    if phase == MAIN:
        return _main_actions(state)
    if phase == REACT_PHASE:
        # Ascending without a sort: _reactions keeps REACTIONS order, whose indices ascend (asserted above).
        return [REACT_INDEX[card] for card in _reactions(state)] + [REACT_NONE]
    if phase == ANSWER:
        return [REACT_INDEX[HOOK_ROPE], REACT_NONE]
    if phase == PICK_PHASE:
        return [PICK_INDEX[kind] for kind in range(NUM_KINDS) if state.pick[kind]]
    if phase == DRAW_PHASE:
        return [TOKEN_DRAW, TOKEN_PASS]
    return []


# Per card, its action index by target offset (0: Fate on oneself; -1 where no such action): the legal
# list is built from these rows, not from dictionary look-ups by (card, offset), the engine's hot loop.
_PLAY_AT_ROWS = tuple(tuple(PLAY_AT_INDEX.get((card, k), -1) for k in range(MAX_PLAYERS))
                      for card in range(NUM_KINDS))
_COMBO_ROWS = tuple(tuple(COMBO_INDEX.get((card, k), -1) for k in range(MAX_PLAYERS)) for card in range(NUM_KINDS))
_UNTARGETED_PLAYS = tuple((card, PLAY_INDEX[card]) for card in UNTARGETED)
_EQUIP_SLOTS = tuple((EQUIP_KINDS[slot], EQUIP_CAPS[slot], EQUIP_INDEX[EQUIP_KINDS[slot]]) for slot in range(3))


def _main_actions(state: State) -> list[int]:
    seat, n = state.turn_seat, state.n
    hand = state.hands[seat]
    alive = state.alive
    everyone = False not in alive  # then the targets are offsets 1..n-1: a slice of each row
    offsets = range(1, n) if everyone else [k for k in range(1, n) if alive[(seat + k) % n]]
    legal = []
    for card in TARGETED:
        if hand[card]:
            row = _PLAY_AT_ROWS[card]
            if card == HOOK_ROPE:
                legal += [row[k] for k in offsets if _can_be_robbed(state, (seat + k) % n)]
            else:
                legal += row[1:n] if everyone else [row[k] for k in offsets]
    if hand[FATE]:
        row = _PLAY_AT_ROWS[FATE]
        if state.config.fate_on_self:
            legal.append(row[0])
        legal += row[1:n] if everyone else [row[k] for k in offsets]
    for card, action in _UNTARGETED_PLAYS:
        if hand[card] and (card != REMEDY or state.poison[seat]):
            legal.append(action)
    worn = state.equipment[seat]
    for slot, (card, cap, action) in enumerate(_EQUIP_SLOTS):
        if hand[card] and worn[slot] < cap:
            legal.append(action)
    if hand[POISON]:
        for card in COMBO_ATTACKS:
            if hand[card]:
                row = _COMBO_ROWS[card]
                legal += row[1:n] if everyone else [row[k] for k in offsets]
    if state.tokens[seat]:
        legal.append(TOKEN_DRAW)
    before = len(legal)
    legal += compress(FORFEIT_INDEX, hand)
    if len(legal) == before:
        legal.append(FORFEIT_NOTHING)
    return legal


def is_legal(state: State, action: int) -> bool:
    """``action in legal_actions(state)``, checked directly (the step function's fast path)."""
    if type(action) is not int:  # numpy integers are welcome, bools and floats are not
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            return False
        action = action.__index__()
    if not 0 <= action < NUM_ACTIONS:
        return False
    phase, kind, card = state.phase, ACTION_TYPE[action], ACTION_CARD[action]
    if phase == MAIN:
        seat = state.turn_seat
        hand = state.hands[seat]
        if kind == PLAY_AT or kind == COMBO:
            offset = ACTION_OFFSET[action]
            if not hand[card] or (kind == COMBO and not hand[POISON]):
                return False
            if offset == 0:
                return state.config.fate_on_self
            target = (seat + offset) % state.n
            if offset >= state.n or not state.alive[target]:
                return False
            return card != HOOK_ROPE or kind == COMBO or _can_be_robbed(state, target)
        if kind == PLAY:
            return hand[card] > 0 and (card != REMEDY or state.poison[seat] > 0)
        if kind == EQUIP:
            slot = SLOT_OF[card]
            return hand[card] > 0 and state.equipment[seat][slot] < EQUIP_CAPS[slot]
        if kind == TOKEN:
            return state.tokens[seat] > 0
        if kind == FORFEIT:
            return hand[card] > 0
        if kind == FORFEIT_EMPTY:
            return sum(hand) == 0
        return False
    if phase == REACT_PHASE:
        return kind == REACT and (card < 0 or card in _reactions(state))
    if phase == ANSWER:
        return kind == REACT and (card < 0 or card == HOOK_ROPE)
    if phase == PICK_PHASE:
        return kind == PICK and state.pick[card] > 0
    if phase == DRAW_PHASE:
        return kind == TOKEN or kind == NO_DRAW
    return False


# --- playing ---------------------------------------------------------------------------------------------------


def apply(state: State, action: int) -> None:
    """Play ``action`` for the seat to act; raises IllegalActionError for anything not legal now."""
    if type(action) is not int and not isinstance(action, bool) and hasattr(action, "__index__"):
        action = action.__index__()
    if not is_legal(state, action):
        name = ACTION_NAMES[action] if isinstance(action, int) and 0 <= action < NUM_ACTIONS else action
        raise IllegalActionError(name, [ACTION_NAMES[a] for a in legal_actions(state)])
    apply_legal(state, action)


def apply_legal(state: State, action: int) -> None:
    """``apply`` for a caller that took ``action`` (a Python int) from ``legal_actions(state)`` itself: no
    check (search plays only such actions, agents/mcts.py). Anything else must go through ``apply``."""
    state.log = [] if state.log.__class__ is not QuietLog else QuietLog()  # this decision's lines only
    state.decisions += 1
    phase = state.phase
    # An action is complete when its card has resolved: a main-phase play, combo or forfeit that needs
    # no further decision, or the reaction, answer or pick that finishes it. Equipping and tokens are not
    # actions.
    completed = True
    if phase == MAIN:
        completed = ACTION_TYPE[action] != TOKEN and ACTION_TYPE[action] != EQUIP
        _main(state, action)
    elif phase == REACT_PHASE:
        _react(state, ACTION_CARD[action])
    elif phase == ANSWER:
        _answer(state, ACTION_CARD[action])
    elif phase == DRAW_PHASE:
        completed = False
        _window_decision(state, action == TOKEN_DRAW)
    else:
        _keep(state, ACTION_CARD[action])
    _settle(state, completed)


def _main(state: State, action: int) -> None:
    seat = state.turn_seat
    kind, card, offset = ACTION_TYPE[action], ACTION_CARD[action], ACTION_OFFSET[action]
    hand = state.hands[seat]
    if kind == TOKEN:
        state.tokens[seat] -= 1
        drawn = _draw(state, seat, state.config.token_cards)
        _say(state, None, "player_{} uses a Card Draw token and draws {}", seat, drawn)
        return
    if kind == EQUIP:
        hand[card] -= 1
        _forget(state, seat, card)
        state.equipment[seat][SLOT_OF[card]] += 1
        _say(state, None, "player_{} equips {}", seat, KINDS[card])
        return
    state.actions_left -= 1
    if kind == FORFEIT_EMPTY:
        _say(state, None, "player_{} forfeits an action with an empty hand", seat)
        return
    hand[card] -= 1
    _forget(state, seat, card)
    state.discard[card] += 1
    if kind == FORFEIT:
        _say(state, None, "player_{} forfeits an action, discarding {}", seat, KINDS[card])
        if card in DARK:  # "Players must take 1 HP of damage if they choose to discard a Dark card."
            _hurt(state, seat, 1)
        return
    if kind == PLAY:
        _play_untargeted(state, seat, card)
        return
    target = (seat + offset) % state.n
    gloves = state.equipment[seat][GLOVES]
    if kind == COMBO:
        hand[POISON] -= 1
        _forget(state, seat, POISON)
        state.discard[POISON] += 1
        damage = _attack_value(state, card) + gloves
        _say(state, None, "player_{} attacks player_{} with {} + poison ({})", seat, target, KINDS[card], damage)
        _begin_attack(state, seat, target, card, damage, poisons=True, combo=True)
        return
    if card in (DAGGER, HATCHET, SWORD, FLAME_SHOT, BLADED_SHIELD):
        damage = _attack_value(state, card) + gloves
        _say(state, None, "player_{} attacks player_{} with {} ({})", seat, target, KINDS[card], damage)
        _begin_attack(state, seat, target, card, damage, poisons=False, combo=False)
    elif card == POISON:
        _say(state, None, "player_{} poisons player_{}", seat, target)
        _begin_attack(state, seat, target, POISON, 0, poisons=True, combo=False)
    elif card == FATE:
        roll = state.chance.roll(6)
        if roll in FATE_ATTACK:
            damage = VALUES[FATE] + gloves
            _say(state, None, "player_{} plays fate on player_{}: {}, attack ({})", seat, target, roll, damage)
            if target == seat:
                _resolve(state, seat, FATE, damage, False, seat, -1, unblockable=False)
            else:
                _begin_attack(state, seat, target, FATE, damage, poisons=False, combo=False)
        elif roll in FATE_POISON:
            _say(state, None, "player_{} plays fate on player_{}: {}, poison", seat, target, roll)
            if target == seat:
                _add_poison(state, seat)
            else:
                _begin_attack(state, seat, target, FATE, 0, poisons=True, combo=False)
        else:
            _say(state, None, "player_{} plays fate on player_{}: {}, heal", seat, target, roll)
            state.hp[target] = min(state.config.hp_cap, state.hp[target] + FATE_HEAL)
    elif card == HOOK_ROPE:
        stolen, from_hand = _take_random(state, target, state.config.steal_equipment, equipment_first=False,
                                         audience=(seat, target))
        _gain_stolen(state, seat, stolen, (seat, target) if from_hand else None)
        _say(state, None, "player_{} hooks a card from player_{}", seat, target)
        _say(state, (seat, target), "player_{} hooks {} from player_{}", seat, KINDS[stolen], target)
    elif card == SWAP_ROPE:
        hands = state.hands
        for observer, rows in enumerate(state.known):
            if observer == seat or observer == target:  # each now knows the hand it gave away
                rows[target if observer == seat else seat] = hands[observer][:]
            else:
                rows[seat], rows[target] = rows[target], rows[seat]
        hands[seat], hands[target] = hands[target], hands[seat]
        _say(state, None, "player_{} swaps hands with player_{}", seat, target)
    elif card == TRIP_ROPE:
        state.skips[target] += 1
        _say(state, None, "player_{} trips player_{}: their next turn is skipped", seat, target)
    else:
        raise AssertionError(f"unhandled card {KINDS[card]}")


def _attack_value(state: State, card: int) -> int:
    if card == BLADED_SHIELD:  # "Shake the die to determine the attack/defense value."
        return state.chance.roll(6)
    return VALUES[card]


def _play_untargeted(state: State, seat: int, card: int) -> None:
    config = state.config
    if card == POTION:
        state.hp[seat] = min(config.hp_cap, state.hp[seat] + VALUES[POTION])
        _draw(state, seat, 1)
        _say(state, None, "player_{} drinks a potion", seat)
    elif card == REMEDY:
        state.poison[seat] -= 1
        _say(state, None, "player_{} cures a Poison token", seat)
    elif card == MAGNIFYING_GLASS:
        roll = state.chance.roll(6)
        drawn = [0] * NUM_KINDS
        for _ in range(roll):
            kind = _draw_one(state)
            if kind < 0:
                break
            drawn[kind] += 1
        _say(state, None, "player_{} rolls {} for the magnifying glass", seat, roll)
        _offer(state, seat, drawn, MAGNIFYING_GLASS)
    elif card == SCYTHE:
        # "Attack each opponent for 1 HP and take one card from each at random": in that order, so a card
        # comes from the hand a victim holds after the hit (a revived one's new hand; none from the fallen).
        victims = [s % state.n for s in range(seat + 1, seat + state.n) if state.alive[s % state.n]]
        damage = VALUES[SCYTHE] + state.equipment[seat][GLOVES]
        _say(state, None, "player_{} swings the scythe at every opponent ({})", seat, damage)
        for victim in victims:
            armor = state.equipment[victim][ARMOR_SLOT] if config.armor_vs_unblockable else 0
            _hurt(state, victim, damage - armor)
        taken = [0] * NUM_KINDS
        for victim in victims:
            if not state.alive[victim]:
                continue
            kind, _ = _take_random(state, victim, config.steal_equipment, equipment_first=False,
                                   audience=(seat, victim))
            if kind >= 0:
                taken[kind] += 1
                _say(state, (seat, victim), "player_{} takes {} from player_{}", seat, KINDS[kind], victim)
        _offer(state, seat, taken, SCYTHE)
    elif card == PLAGUE_SKULL:
        _say(state, None, "player_{} raises the plague skull: a Poison token for everyone", seat)
        for s in range(seat, seat + state.n):
            _add_poison(state, s % state.n)
    elif card == DOOM_DRAGON:
        for s in range(seat + 1, seat + state.n):
            victim = s % state.n
            if state.alive[victim]:
                lost = _destroy(state, victim, 2)
                _say(state, None, "the doom dragon destroys player_{}'s {}", victim, _names(lost))
        left = _next_alive(state, seat)
        lost = _destroy(state, seat, 2)
        _say(state, None, "player_{} destroys player_{}'s {}", left, seat, _names(lost))
    else:
        raise AssertionError(f"unhandled card {KINDS[card]}")


def _offer(state: State, seat: int, cards: list[int], source: int) -> None:
    """Keep one of ``cards`` and discard the rest: a decision when they are of more than one kind."""
    kinds = [kind for kind in range(NUM_KINDS) if cards[kind]]
    if len(kinds) > 1 and state.alive[seat]:
        state.pick = cards
        state.pick_source = source
        state.phase = PICK_PHASE
        state.to_act = seat
        _say(state, (seat,), "player_{} may keep one of {}", seat, _names(_expand(cards)))
        return
    if kinds:
        state.pick = cards
        state.pick_source = source
        _keep(state, kinds[0])


def _expand(counts: list[int]) -> list[int]:
    """The kinds of a hand of counts, each repeated as often as held, in kind order."""
    cards = []
    for kind in compress(_KIND_RANGE, counts):  # a hand holds a few of the 23 kinds, mostly one of each
        count = counts[kind]
        if count == 1:
            cards.append(kind)
        else:
            cards += [kind] * count
    return cards


_KIND_RANGE = range(NUM_KINDS)


def _keep(state: State, kind: int) -> None:
    seat, cards = state.turn_seat, state.pick
    cards[kind] -= 1
    if state.pick_source == SCYTHE:
        _gain_stolen(state, seat, kind)
    else:
        state.hands[seat][kind] += 1
    for other in range(NUM_KINDS):
        state.discard[other] += cards[other]
    _say(state, (seat,), "player_{} keeps {}", seat, KINDS[kind])
    _say(state, None, "player_{} keeps one card and discards {}", seat, _names(_expand(cards)))
    state.pick = [0] * NUM_KINDS
    state.pick_source = -1
    state.phase = MAIN
    state.to_act = seat


def _begin_attack(state: State, attacker: int, target: int, card: int, damage: int, poisons: bool,
                  combo: bool) -> None:
    state.attacker, state.target, state.attack_card = attacker, target, card
    state.damage, state.poisons, state.combo, state.shield = damage, poisons, combo, -1
    if _reactions(state):
        state.phase = REACT_PHASE
        state.to_act = target
    else:
        _finish_attack(state, target, -1, unblockable=False)


def _react(state: State, card: int) -> None:
    defender, attacker = state.target, state.attacker
    if card < 0:
        _say(state, None, "player_{} does not react", defender)
        _finish_attack(state, defender, -1, unblockable=False)
        return
    state.hands[defender][card] -= 1
    _forget(state, defender, card)
    state.discard[card] += 1
    _say(state, None, "player_{} reacts with {}", defender, KINDS[card])
    if card == CONFUSION_DUST:  # the whole attack, combo included, turns on its attacker; unblockable
        _finish_attack(state, attacker, -1, unblockable=True)
    elif card == REMEDY:  # blocks the Poison; a combo's physical part still strikes
        state.poisons = False
        _finish_attack(state, defender, -1, unblockable=False)
    elif state.hands[attacker][HOOK_ROPE]:
        state.shield = card
        state.phase = ANSWER
        state.to_act = attacker
    else:
        _finish_attack(state, defender, card, unblockable=False)


def _answer(state: State, card: int) -> None:
    attacker, shield = state.attacker, state.shield
    if card == HOOK_ROPE:  # "remove and keep an opponent's Shield if they attempt to defend"
        hand = state.hands[attacker]
        hand[HOOK_ROPE] -= 1
        _forget(state, attacker, HOOK_ROPE)
        state.discard[HOOK_ROPE] += 1
        state.discard[shield] -= 1
        hand[shield] += 1
        _learn(state, attacker, shield, None)
        _say(state, None, "player_{} hooks away the {}", attacker, KINDS[shield])
        shield = -1
    _finish_attack(state, state.target, shield, unblockable=False)


def _finish_attack(state: State, victim: int, shield: int, unblockable: bool) -> None:
    _resolve(state, state.attacker, state.attack_card, state.damage, state.poisons, victim, shield, unblockable)
    state.attacker = state.target = state.attack_card = state.shield = -1
    state.damage, state.poisons, state.combo = 0, False, False
    state.phase = MAIN
    state.to_act = state.turn_seat


def _resolve(state: State, attacker: int, card: int, damage: int, poisons: bool, victim: int, shield: int,
             unblockable: bool) -> None:
    """The attack lands on ``victim``: shields and armor reduce physical damage; a combo's (or Fate's)
    poison lands only if physical damage got through; a solo Poison always lands."""
    config = state.config
    if damage > 0:
        block = 0
        if shield == BLADED_SHIELD:
            block = state.chance.roll(6)
            _say(state, None, "player_{}'s bladed shield rolls {}", victim, block)
        elif shield >= 0:
            block = VALUES[shield]
        if not unblockable or config.armor_vs_unblockable:
            block += state.equipment[victim][ARMOR_SLOT]
        dealt = max(0, damage - block)
        _say(state, None, "player_{} takes {} damage", victim, dealt)
        _hurt(state, victim, dealt)
        if card == FLAME_SHOT and state.alive[victim] and (dealt > 0 or not config.flame_needs_damage):
            lost = _destroy(state, victim, 2)
            _say(state, None, "the flame shot destroys player_{}'s {}", victim, _names(lost))
        if poisons and dealt > 0:
            _add_poison(state, victim)
    elif poisons:
        _add_poison(state, victim)


# --- the end -------------------------------------------------------------------------------------------------


def is_terminal(state: State) -> bool:
    return state.phase == GAME_OVER


def is_truncated(state: State) -> bool:
    """True when the game was cut off by ``max_turns`` or ``max_decisions`` rather than ended by the rules."""
    return state.end_reason in (TURN_LIMIT, DECISION_LIMIT)


def returns(state: State) -> tuple[float, ...]:
    """-1/(N-1) for every seat from the moment it is out; +1 to the winner at the end.

    Seats put out by the very decision that leaves nobody alive tie for first place and get 0 (a draw
    among them); the survivors of a cut-off game get 0.
    """
    n = state.n
    loss = -1.0 / (n - 1)
    values = [0.0] * n
    over = state.phase == GAME_OVER
    last = state.out_at[state.eliminated[-1]] if state.eliminated else -1
    for seat in state.eliminated:
        if not (over and state.end_reason == ALL_OUT and state.out_at[seat] == last):
            values[seat] = loss
    if state.winner >= 0:
        values[state.winner] = 1.0
    return tuple(values)


def card_total(state: State) -> int:
    """Cards in the deck, the discard pile, every hand and equipment and a pending pick: always 100."""
    return (len(state.deck) + sum(state.discard) + sum(map(sum, state.hands)) + sum(map(sum, state.equipment))
            + sum(state.pick))


# --- search: clone and determinize (agents/mcts.py; docs/search.md) ---------------------------------------

from ..core import copy_chance as _copy_chance  # noqa: E402 - kept with the section it serves
from ..core import redealt as _redealt  # noqa: E402

# Hidden from a seat: the other hands, the deck's order, cards offered to another seat (``pick``), log
# lines addressed to others, and what the other seats remember of hands (``known``: a seat sees only its own
# row). Everything else is on the table. A test fails when a new field is not listed.
HIDDEN_FIELDS = frozenset(("hands", "deck", "pick", "log", "known"))
# Lists whose order no seat has seen: the deck is drawn from its end, and until a card is drawn its place in the
# deck is chance still to come. Luck measured at chance events (eval/luck.py) shuffles them to weigh each draw.
UNSEEN_ORDER_FIELDS = ("deck",)
PUBLIC_FIELDS = frozenset(("config", "chance", "n", "hp", "poison", "tokens", "equipment", "skips", "alive",
                           "discard", "initiative_rolls", "first_seat", "turn_seat", "to_act", "phase",
                           "actions_left", "turn", "decisions", "attacker", "target", "attack_card", "damage",
                           "poisons", "combo", "shield", "pick_source", "window", "window_next", "eliminated",
                           "out_at", "finishing_order", "winner", "end_reason"))


# The State's fields by how a copy treats them; the assertion below fails when a field is added to State
# and not listed here. Written out rather than generic (envs.core.clone_state): a search clones a state per
# simulation, and this is three times faster.
_SHARED_FIELDS = ("config", "n", "first_seat", "turn_seat", "to_act", "phase", "actions_left", "turn", "decisions",
                  "attacker", "target", "attack_card", "damage", "poisons", "combo", "shield", "pick_source",
                  "window_next", "winner", "end_reason")  # immutable values
_FLAT_FIELDS = ("hp", "poison", "tokens", "skips", "alive", "discard", "pick", "window", "eliminated", "out_at",
                "finishing_order")  # lists of immutable values
_NESTED_FIELDS = ("equipment", "initiative_rolls")  # lists of lists of ints
_DEALT_FIELDS = ("hands", "deck", "known", "log")  # what a determinization deals afresh (all but the seat's own)
assert set(State.__dataclass_fields__) == {"chance", *_SHARED_FIELDS, *_FLAT_FIELDS, *_NESTED_FIELDS,
                                           *_DEALT_FIELDS}


def _copy(state: State, chance: Chance | None = None, seat: int = -1) -> State:
    """A copy sharing nothing mutable; its Chance is ``chance``, or a copy of the state's. With a ``seat``,
    the copy :func:`_redeal` deals into for that seat: the other hands, the deck, the others' memories
    and the log stay shared, since it reads them once and replaces each (a search copies a state per
    simulation)."""
    new = State.__new__(State)
    for name in _SHARED_FIELDS:
        setattr(new, name, getattr(state, name))
    for name in _FLAT_FIELDS:
        setattr(new, name, getattr(state, name)[:])
    for name in _NESTED_FIELDS:
        setattr(new, name, [row[:] for row in getattr(state, name)])
    if seat < 0:
        new.hands = [row[:] for row in state.hands]
        new.deck = state.deck[:]
        new.known = [[row[:] for row in rows] for rows in state.known]
        new.log = state.log[:]
    else:
        new.hands = [row[:] if who == seat else row for who, row in enumerate(state.hands)]
        new.deck = state.deck
        new.known = [[row[:] for row in rows] if who == seat else rows for who, rows in enumerate(state.known)]
        new.log = state.log
    new.chance = chance if chance is not None else _copy_chance(state.chance)
    return new


def clone(state: State) -> State:
    """A copy sharing nothing mutable (its Chance copied too: same generator state and log)."""
    return _copy(state)


def _shown_to_hold(state: State, seat: int) -> tuple[int, ...]:
    """Kinds of which the seat to act, when that is not ``seat``, is seen to hold at least one: the table
    sees a defender asked to react (a reaction in hand) and an attacker asked to answer (a Hook Rope)."""
    if state.to_act == seat:
        return ()
    if state.phase == REACT_PHASE:
        kinds = (WOODEN_SHIELD, STEEL_SHIELD, BLADED_SHIELD, CONFUSION_DUST) if state.damage > 0 else ()
        return kinds + ((REMEDY,) if state.poisons else ())
    if state.phase == ANSWER:
        return (HOOK_ROPE,)
    return ()


def _redeal(state: State, seat: int, order) -> None:
    """Pool every card ``seat`` cannot see (other hands, the deck, a pick offered to another seat), put the
    pool in ``order`` (a shuffle, or ``list.sort`` for the canonical form) and deal it back into the same
    places in the same numbers. Cards ``seat`` remembers in another hand (its row of ``known``) stay there;
    the other seats' memories are not ``seat``'s to see and start empty. A seat the table sees being asked
    to react or answer gets a hand that can (:func:`_shown_to_hold`). Log lines addressed to others are
    dropped."""
    others = [who for who in range(state.n) if who != seat]
    remembered = state.known[seat]
    pick_hidden = state.turn_seat != seat and any(state.pick)
    pool = list(state.deck)
    unseen = {}
    for who in others:
        kept = remembered[who]
        # Mostly nothing is remembered: the hand itself is unseen (read here, replaced below).
        unseen[who] = ([held - k for held, k in zip(state.hands[who], kept, strict=True)] if any(kept)
                       else state.hands[who])
        pool.extend(_expand(unseen[who]))
    if pick_hidden:
        pool.extend(_expand(state.pick))
    order(pool)
    needed = _shown_to_hold(state, seat)
    actor = state.to_act
    if needed and not any(remembered[actor][kind] for kind in needed):
        start = sum(sum(unseen[who]) for who in others if who < actor) if actor in unseen else 0
        segment = range(start, start + sum(unseen.get(actor, ())))
        for _ in range(64):  # rejection keeps the deal uniform among those the table allows
            if any(pool[i] in needed for i in segment) or order is list.sort:
                break
            order(pool)
        if segment and not any(pool[i] in needed for i in segment):
            swap = next(i for i in range(len(pool)) if pool[i] in needed and i not in segment)
            pool[segment.start], pool[swap] = pool[swap], pool[segment.start]
    cursor = 0
    for who in others:
        hand = list(remembered[who])
        size = sum(unseen[who])
        for kind in pool[cursor:cursor + size]:
            hand[kind] += 1
        state.hands[who] = hand
        cursor += size
    if pick_hidden:
        size = sum(state.pick)
        pick = [0] * NUM_KINDS
        for kind in pool[cursor:cursor + size]:
            pick[kind] += 1
        state.pick = pick
        cursor += size
    state.deck = pool[cursor:]
    state.known = [rows if observer == seat else [[0] * NUM_KINDS for _ in range(state.n)]
                   for observer, rows in enumerate(state.known)]
    state.log = [entry for entry in state.log if entry[0] is None or seat in entry[0]]


def determinize(state: State, seat: int, chance: Chance) -> State:
    """A full state consistent with what ``seat`` sees: the unseen cards (other hands, the deck, a pick
    offered to another) dealt afresh from ``chance`` in the same numbers, future dice from
    ``chance.sample_chance()``: a plain Chance seeds a fresh one (what ``envs.core.redealt`` gives), the
    search's dealer (agents/mcts.py ``SearchChance``) rolls them itself, one stream for the deals and the
    dice of all its samples (seeding a generator per sample was a third of a compiled simulation:
    envs/ministeel/kernel.py ``determinize`` draws exactly these values).

    Cards the seat remembers in another hand (``known``, the observation's memory) stay in that hand; the
    rest is uniform over the cards it cannot see now. Its log is a :class:`QuietLog` (the lines the seat
    saw, then none): a search plays the sample on, and nobody reads the lines it would write.
    """
    new = _copy(state, state.chance, seat)  # the Chance is shared only until replaced below, after the deal
    _redeal(new, seat, chance.shuffle)
    new.chance = chance.sample_chance()
    new.log = QuietLog(new.log)
    return new


def information_state(state: State, seat: int) -> State:
    """What ``seat`` knows as a State: the unseen cards in a canonical (sorted) deal, the Chance blank.
    Two states ``seat`` cannot tell apart give equal information states."""
    return _redealt(state, seat, _redeal, None, lambda state, chance: _copy(state, chance, seat))


# --- search: beliefs (agents/belief.py; docs/search.md, "Beliefs") -----------------------------------------

# Actions the table sees only as "a pick was made": which card a Magnifying Glass or Scythe pick kept is the
# picker's (the others see the cards discarded). A history handed to another seat shows these as -1.
PRIVATE_ACTIONS = frozenset(PICK_INDEX)


def hidden_holdings(state: State, seat: int) -> tuple:
    """What the other seats hold that ``seat`` may not see, as one hashable value: each seat's hand (counts by
    kind; ``()`` for ``seat`` itself) and the cards offered to another seat's pick (``()``: none hidden). A
    belief keeps these per particle (:func:`determinize_holding` deals a state around them)."""
    hands = tuple(() if who == seat else tuple(state.hands[who]) for who in range(state.n))
    pick = tuple(state.pick) if state.turn_seat != seat and any(state.pick) else ()
    return hands, pick


def determinize_holding(state: State, seat: int, holdings: tuple, chance: Chance) -> State | None:
    """:func:`determinize` with the other seats' hidden cards given (``holdings``, :func:`hidden_holdings` of a
    state of this game: a belief's particle): they are dealt where they were, and only the deck is shuffled
    from ``chance``. None when ``holdings`` cannot be what ``seat`` sees in ``state``: a hand of another size,
    one without the cards ``seat`` remembers in it, more of a kind than ``seat`` cannot see, or a seat the
    table sees asked to react or answer that could not (:func:`_shown_to_hold`)."""
    hands, pick = holdings
    remembered = state.known[seat]
    pick_hidden = state.turn_seat != seat and any(state.pick)
    if pick_hidden != bool(pick) or (pick_hidden and sum(pick) != sum(state.pick)):
        return None
    left = [0] * NUM_KINDS  # the unseen cards not yet placed: the deck's, the other hands' unremembered, the pick's
    for kind in state.deck:
        left[kind] += 1
    if pick_hidden:
        for kind in range(NUM_KINDS):
            left[kind] += state.pick[kind] - pick[kind]
    for who in range(state.n):
        if who == seat:
            continue
        hand, held, kept = hands[who], state.hands[who], remembered[who]
        if sum(hand) != sum(held):
            return None
        for kind in range(NUM_KINDS):
            if hand[kind] < kept[kind]:
                return None
            left[kind] += held[kind] - hand[kind]
    if any(count < 0 for count in left):
        return None
    needed = _shown_to_hold(state, seat)
    if needed and not any(hands[state.to_act][kind] for kind in needed):
        return None
    new = _copy(state, chance.__class__(chance.below(2**31)), seat)
    new.hands = [new.hands[who] if who == seat else list(hands[who]) for who in range(state.n)]
    if pick_hidden:
        new.pick = list(pick)
    deck = _expand(left)
    chance.shuffle(deck)
    new.deck = deck
    new.known = [rows if observer == seat else [[0] * NUM_KINDS for _ in range(state.n)]
                 for observer, rows in enumerate(new.known)]  # the seat's own rows: the copy's
    new.log = QuietLog(entry for entry in state.log if entry[0] is None or seat in entry[0])
    return new


def cards_played_from_hand(action: int) -> tuple[int, ...]:
    """The kinds ``action`` takes from its player's hand (a combo: its attack and a Poison): a seat that sees
    the move learns the player held them. A pick takes from the cards offered, not the hand."""
    kind, card = ACTION_TYPE[action], ACTION_CARD[action]
    if kind == COMBO:
        return card, POISON
    if kind in (PLAY_AT, PLAY, EQUIP, FORFEIT) or (kind == REACT and card >= 0):
        return (card,)
    return ()


def hand_odds(state: State, seat: int, mover: int, kind: int) -> tuple[int, int, int, int, int]:
    """What a belief's proposal (agents/belief.py, :func:`swap_into_hand`) weighs in a full ``state`` seen by
    ``seat``: the cards of ``kind`` in ``mover``'s hand that ``seat`` remembers there, those it does not, all the
    cards of that hand it does not remember, and the cards ``seat`` cannot see outside that hand and its own
    (the deck, the other hands less what it remembers; not a pick): all of them, and those of ``kind``."""
    remembered = state.known[seat]
    free = [held - kept for held, kept in zip(state.hands[mover], remembered[mover], strict=True)]
    outside = len(state.deck)
    outside_kind = state.deck.count(kind)
    for who in range(state.n):
        if who not in (seat, mover):
            outside += sum(state.hands[who]) - sum(remembered[who])
            outside_kind += state.hands[who][kind] - remembered[who][kind]
    return remembered[mover][kind], free[kind], sum(free), outside, outside_kind


def swap_into_hand(state: State, seat: int, mover: int, kind: int, chance: Chance) -> None:
    """Put a card of ``kind`` into ``mover``'s hand in a full ``state`` (a belief's particle; ``mover`` holds
    none ``seat`` does not remember): one of the copies ``seat`` cannot see outside that hand (:func:`hand_odds`),
    drawn uniformly, changes places with a card of the hand ``seat`` does not remember, drawn uniformly. Both
    cards were unseen by ``seat``, so what it sees is unchanged."""
    remembered = state.known[seat]
    hand = state.hands[mover]
    free = _expand([held - kept for held, kept in zip(hand, remembered[mover], strict=True)])
    given = free[chance.below(len(free))]
    places = [(None, i) for i, card in enumerate(state.deck) if card == kind]
    for who in range(state.n):
        if who not in (seat, mover):
            places += [(who, -1)] * (state.hands[who][kind] - remembered[who][kind])
    who, position = places[chance.below(len(places))]
    if who is None:
        state.deck[position] = given
    else:
        state.hands[who][kind] -= 1
        state.hands[who][given] += 1
    hand[kind] += 1
    hand[given] -= 1


def determinize_near(state: State, seat: int, holdings: tuple, chance: Chance) -> State:
    """:func:`determinize_holding`, or where ``holdings`` cannot be what ``seat`` sees in ``state`` (a belief's
    particle that fell out of step with the game: its dice differed, or ``seat`` has since seen a card it gave
    another hand), the nearest deal that can be: each hand keeps the given cards the unseen ones allow (copies
    over what is unseen, and cards over the hand's size, dropped at random), ``seat``'s memory of it is put
    back, and the rest is dealt uniformly from the unseen cards left."""
    dealt = determinize_holding(state, seat, holdings, chance)
    if dealt is not None:
        return dealt
    hands, pick = holdings
    remembered = state.known[seat]
    others = [who for who in range(state.n) if who != seat]
    pick_hidden = state.turn_seat != seat and any(state.pick)
    left = [0] * NUM_KINDS  # every card seat cannot see
    for kind in state.deck:
        left[kind] += 1
    for who in others:
        for kind in range(NUM_KINDS):
            left[kind] += state.hands[who][kind] - remembered[who][kind]
    if pick_hidden:
        for kind in range(NUM_KINDS):
            left[kind] += state.pick[kind]
    places = others + (["pick"] if pick_hidden else [])
    sizes = {who: sum(state.hands[who]) - sum(remembered[who]) for who in others}
    guesses = {who: [max(0, held - kept) for held, kept in zip(hands[who], remembered[who], strict=True)]
               if len(hands[who]) == NUM_KINDS else [0] * NUM_KINDS for who in others}
    if pick_hidden:
        sizes["pick"] = sum(state.pick)
        guesses["pick"] = list(pick) if len(pick) == NUM_KINDS else [0] * NUM_KINDS
    kept_cards = {}
    for place in places:
        cards = _expand(guesses[place])
        chance.shuffle(cards)
        kept_cards[place] = cards[:sizes[place]]
    for kind in range(NUM_KINDS):  # copies over what is unseen leave the hands holding them at random
        holders = [place for place in places for card in kept_cards[place] if card == kind]
        chance.shuffle(holders)
        for place in holders[left[kind]:]:
            kept_cards[place].remove(kind)
    for cards in kept_cards.values():
        for kind in cards:
            left[kind] -= 1
    rest = _expand(left)
    chance.shuffle(rest)
    new_hands = [()] * state.n
    for place in places:
        cards = kept_cards[place]
        while len(cards) < sizes[place]:
            cards.append(rest.pop())
        counts = [0] * NUM_KINDS
        for kind in cards:
            counts[kind] += 1
        if place == "pick":
            pick = tuple(counts)
        else:
            new_hands[place] = tuple(c + k for c, k in zip(counts, remembered[place], strict=True))
    needed = _shown_to_hold(state, seat)
    actor = state.to_act
    if needed and not any(new_hands[actor][kind] for kind in needed):
        spare = [kind for kind in needed if kind in rest]
        free = [kind for kind in range(NUM_KINDS) if new_hands[actor][kind] > remembered[actor][kind]]
        if spare and free:  # the table saw the actor asked: a card that lets it be asked, for one of its own
            hand = list(new_hands[actor])
            hand[spare[0]] += 1
            hand[free[chance.below(len(free))]] -= 1
            new_hands[actor] = tuple(hand)
    return determinize_holding(state, seat, (tuple(new_hands), pick if pick_hidden else ()), chance) or \
        determinize(state, seat, chance)


def merge_holdings(state: State, seat: int, parts: dict[int, tuple]) -> tuple:
    """One :func:`hidden_holdings` value from several: each other seat's hand from ``parts[who]`` (a belief
    resampling seat by seat), the cards offered to the turn's player with its hand. It may hold more copies
    of a kind than are unseen: :func:`determinize_near` deals it."""
    hands = tuple(() if who == seat else parts[who][0][who] for who in range(state.n))
    return hands, parts[state.turn_seat][1] if state.turn_seat in parts else ()
