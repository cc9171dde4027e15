"""Tiny Minotaur PvP — the rules engine (pure Python: no gymnasium, pettingzoo or torch).

The rulebook (shared/seeds/000_*.txt) in brief, as implemented here; docs/rules/tiny_minotaur.md marks
every interpretation:

* Two players, 100 HP each. Each picks a class (Sword, Magic, Cloak) and one of its archetypes (fighter
  or paladin, sorcerer or cleric, rogue or ranger) whose deck holds regular, middling and stronk attacks,
  dodges and, for Magic, heals (counts in ``ruleset.toml``; clerics hold 6 regular attacks, the rest 5;
  the config may deal classes and archetypes at random). A Boss/NPC card replaces the attack card its
  player chooses.
* Initiative: both roll a d20, equal rolls re-roll, the highest goes first. Each roll sets that player's
  tier (1: 1-6, 2: 7-13, 3: 14-20), and the tier sets the d20 window each card must roll inside (never
  narrower in a higher tier, in the standard ruleset).
* A turn: attack with one card. Regular (10) always hits; middling (30), stronk (50) and boss cards hit
  only on a roll inside the window. A miss keeps the card and passes the turn; a hit discards it.
* After a hit the defender may react with one Dodge or one Heal, rolled in its window, or take it.
  A dodge that succeeds nullifies the hit and is discarded; a heal that succeeds heals ``heal_amount``
  (net with the hit, capped at ``hp_cap``) and is discarded; a failed reaction card is kept.
  A defender holding neither card has no decision to make and takes the hit at once.
* A player without attack cards passes. Reaching 0 HP loses (+1/-1); when neither player can attack,
  or after ``max_turns`` turns, the game is a draw (0/0).

Actions (fixed indices, names in :mod:`.encode`): 0 ``attack:regular``, 1 ``attack:middling``,
2 ``attack:stronk``, 3 ``attack:boss``, 4 ``pass``, 5 ``react:dodge``, 6 ``react:heal``, 7 ``react:take``.
"""

from __future__ import annotations

import operator
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from ..core import Chance, IllegalActionError, check_choice, check_range, option
from ..shipped import local_path

MIN_PLAYERS = MAX_PLAYERS = 2

# Card slots in a deck (also the attack action indices for the first four).
REGULAR, MIDDLING, STRONK, BOSS, DODGE, HEAL = range(6)
CARD_NAMES = ("regular", "middling", "stronk", "boss", "dodge", "heal")
ATTACK_CARDS = (REGULAR, MIDDLING, STRONK, BOSS)

# Actions.
ATTACK_REGULAR, ATTACK_MIDDLING, ATTACK_STRONK, ATTACK_BOSS, PASS, REACT_DODGE, REACT_HEAL, REACT_TAKE = range(8)
NUM_ACTIONS = 8
# Their stable names, the index being the action (the encoder and records use these).
ACTION_NAMES = (
    "attack:regular",
    "attack:middling",
    "attack:stronk",
    "attack:boss",
    "pass",
    "react:dodge",
    "react:heal",
    "react:take",
)
assert len(ACTION_NAMES) == NUM_ACTIONS

# Phases.
ATTACK_PHASE, REACT_PHASE, GAME_OVER = range(3)

CLASSES = ("sword", "magic", "cloak")
# "Sword: Your Fighters and Paladins ... Magic: Your Sorcerers and Clerics ... Cloak: Your Rogues and Rangers"
ARCHETYPES = {"sword": ("fighter", "paladin"), "magic": ("sorcerer", "cleric"), "cloak": ("rogue", "ranger")}
CLASS_OF = {archetype: name for name, pair in ARCHETYPES.items() for archetype in pair}
ALL_ARCHETYPES = tuple(CLASS_OF)  # fighter, paladin, sorcerer, cleric, rogue, ranger
NO_BOSS = "none"
RANDOM = "random"

# Why a game ended.
KNOCKOUT, NO_ATTACKS_LEFT, TURN_LIMIT = "knockout", "no_attacks_left", "turn_limit"


# --- the ruleset: the numbers a house rule changes -------------------------------------------------------

Window = tuple[int, int]


@dataclass(frozen=True)
class Ruleset:
    """The tables of ``ruleset.toml``: damage, initiative tiers, d20 windows, decks and bosses."""

    damage: dict[str, int]
    tiers: tuple[Window, Window, Window]
    windows: tuple[dict[str, Window], ...]  # per tier (index 0 = tier 1): middling, stronk, dodge, heal
    decks: dict[str, tuple[int, int, int, int, int]]  # archetype -> regular, middling, stronk, dodge, heal
    bosses: dict[str, tuple[int, tuple[Window, Window, Window]]]  # name -> damage, window per tier

    def tier_of(self, roll: int) -> int:
        for tier, (low, high) in enumerate(self.tiers, start=1):
            if low <= roll <= high:
                return tier
        raise AssertionError(f"initiative tiers do not cover {roll}")


# Bundled rulesets by name (files next to this module). ``house_narrowing`` is the hit-window table of
# the first release, where each tier up narrows every window (docs/rules/tiny_minotaur.md).
BUNDLED_RULESETS = {"standard": "ruleset.toml", "house_narrowing": "ruleset_house_narrowing.toml"}


@cache
def load_ruleset(name_or_path: str) -> Ruleset:
    """Read a bundled ruleset by name or a house ruleset TOML by path, checking every table."""
    if name_or_path in BUNDLED_RULESETS:
        text = resources.files(__package__).joinpath(BUNDLED_RULESETS[name_or_path]).read_text()
        source = f"bundled ruleset {name_or_path!r}"
    else:
        path = Path(local_path(name_or_path))  # a copy shipped from a Ray driver, or the path itself
        if not path.is_file():
            raise ValueError(
                f"ruleset={name_or_path!r} is neither a bundled ruleset ({', '.join(BUNDLED_RULESETS)}) "
                "nor a readable TOML file"
            )
        with path.open("rb") as file:  # read, not stat: a device or /proc file reports no size
            data = file.read(1_000_001)
        if len(data) > 1_000_000:
            raise ValueError(f"ruleset file {path} is larger than 1 MB; a ruleset is a few dozen lines")
        text, source = data.decode("utf-8", errors="replace"), f"ruleset file {path}"
    try:
        data = tomllib.loads(text)
        return _parse_ruleset(data)
    except (KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{source} is not a valid Tiny Minotaur ruleset: {error}") from None


def _window(value: object, where: str) -> Window:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value)):
        raise ValueError(f"{where} must be [low, high] d20 faces, got {value!r}")
    low, high = value
    if not 1 <= low <= high <= 20:
        raise ValueError(f"{where}={value} must satisfy 1 <= low <= high <= 20")
    return low, high


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where} must be a card count (an integer >= 0), got {value!r}")
    return value


MAX_DAMAGE = 1_000_000
"""The most damage a card may deal (the bound every numeric game option has)."""


def _damage(value: object, where: str) -> int:
    # int() would turn 10.7 into 10 and true into 1; a negative hit would heal its target.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DAMAGE:
        raise ValueError(f"{where} must be a whole number of HP from 0 to {MAX_DAMAGE}, got {value!r}")
    return value


def _parse_ruleset(data: dict) -> Ruleset:
    damage = {card: _damage(data["damage"][card], f"damage.{card}") for card in ("regular", "middling", "stronk")}
    tiers = tuple(_window(data["initiative"][f"tier_{t}"], f"initiative.tier_{t}") for t in (1, 2, 3))
    covered = sorted(face for low, high in tiers for face in range(low, high + 1))
    if covered != list(range(1, 21)):
        raise ValueError("initiative tiers must cover the faces 1-20 exactly once")
    windows = tuple(
        {card: _window(data["ranges"][f"tier_{t}"][card], f"ranges.tier_{t}.{card}") for card in
         ("middling", "stronk", "dodge", "heal")}
        for t in (1, 2, 3)
    )
    decks = {}
    for name in CLASSES:
        deck = data["classes"][name]
        regular = deck["regular"]
        if not isinstance(regular, dict) or sorted(regular) != sorted(ARCHETYPES[name]):
            raise ValueError(f"classes.{name}.regular must give the regular attacks of each archetype: "
                             f"{{ {', '.join(f'{a} = N' for a in ARCHETYPES[name])} }}")
        rest = tuple(_count(deck[card], f"classes.{name}.{card}") for card in ("middling", "stronk", "dodge", "heal"))
        for archetype in ARCHETYPES[name]:
            decks[archetype] = (_count(regular[archetype], f"classes.{name}.regular.{archetype}"), *rest)
            if decks[archetype][0] + rest[0] + rest[1] == 0:
                # Two such decks face each other (any archetype may meet itself): the game would end
                # at the deal, with no decision (docs/rules/tiny_minotaur.md, "House rulesets").
                raise ValueError(f"classes.{name}: the {archetype} deck holds no attack card (regular, "
                                 "middling or stronk); every deck needs at least one, or nobody can play")
    bosses = {}
    for name, boss in data.get("bosses", {}).items():
        boss_windows = tuple(_window(boss[f"tier_{t}"], f"bosses.{name}.tier_{t}") for t in (1, 2, 3))
        bosses[name] = (_damage(boss["damage"], f"bosses.{name}.damage"), boss_windows)
    return Ruleset(damage, tiers, windows, decks, bosses)  # type: ignore[arg-type]


# --- configuration ---------------------------------------------------------------------------------------


def _per_seat(name: str, per_seat: object, valid: tuple[str, ...]) -> None:
    if not isinstance(per_seat, tuple) or len(per_seat) != 2:
        raise ValueError(f"{name} needs one entry per seat (2), got {per_seat!r}")
    for seat, value in enumerate(per_seat):
        check_choice(f"{name}[{seat}]", value, valid)


@dataclass(frozen=True)
class Config:
    """Options of one Tiny Minotaur game; every value is checked, bad ones raise ValueError."""

    num_players: int = option(2, "players at the table (Tiny Minotaur PvP is a duel)", choices=(2,))
    classes: tuple[str, str] = option(
        ("random", "random"), "class per seat: sword, magic, cloak, or random (dealt by chance at setup)"
    )
    archetypes: tuple[str, str] = option(
        ("random", "random"),
        "archetype per seat, one of its class's (sword: fighter, paladin; magic: sorcerer, cleric; cloak: "
        "rogue, ranger), or random (dealt by chance among the class's two); clerics have 6 regular attacks",
    )
    bosses: tuple[str, str] = option(
        (NO_BOSS, NO_BOSS), "Boss/NPC special attack card per seat: none or a name from the ruleset's catalog"
    )
    boss_replaces: tuple[str, str] = option(
        ("regular", "regular"), "per seat, the attack card its boss card replaces: regular, middling or stronk"
    )
    starting_hp: int = option(100, "hit points each player starts with")
    hp_cap: int = option(100, "a heal never lifts HP above this (at least starting_hp)")
    heal_amount: int = option(20, "HP a successful heal restores, net with the hit it answers")
    max_turns: int = option(200, "turns (attacks and passes) after which the game ends as a draw")
    ruleset: str = option("standard", "bundled ruleset (standard, house_narrowing) or path to a house-rules TOML",
                          names=lambda: BUNDLED_RULESETS)

    def __post_init__(self) -> None:
        check_choice("num_players", self.num_players, (2,))
        rules = load_ruleset(self.ruleset)
        _per_seat("classes", self.classes, (*CLASSES, RANDOM))
        _per_seat("archetypes", self.archetypes, (*CLASS_OF, RANDOM))
        _per_seat("bosses", self.bosses, (NO_BOSS, *rules.bosses))
        _per_seat("boss_replaces", self.boss_replaces, CARD_NAMES[:3])
        for seat, (class_name, archetype) in enumerate(zip(self.classes, self.archetypes, strict=True)):
            if archetype != RANDOM and class_name != CLASS_OF[archetype]:
                raise ValueError(
                    f"archetypes[{seat}]={archetype!r} is a {CLASS_OF[archetype]} archetype but classes[{seat}]="
                    f"{class_name!r}; set classes[{seat}]={CLASS_OF[archetype]} or archetypes[{seat}]=random"
                )
        check_range("starting_hp", self.starting_hp, 1)
        check_range("hp_cap", self.hp_cap, self.starting_hp)
        check_range("heal_amount", self.heal_amount, 0)
        check_range("max_turns", self.max_turns, 1)


def lay_out_deck(rules: Ruleset, archetype: str, boss: str | None, boss_replaces: str) -> list[int]:
    """The card counts (regular, middling, stronk, boss, dodge, heal) of an archetype's deck at the start:
    "You must replace one attack card (regular, middling or Stronk) with the BOSS/NPC card"."""
    regular, middling, stronk, dodge, heal = rules.decks[archetype]
    deck = [regular, middling, stronk, 0, dodge, heal]
    if boss is not None:
        replaced = CARD_NAMES.index(boss_replaces)
        if deck[replaced] == 0:
            raise ValueError(
                f"the {archetype} deck has no {boss_replaces} card for its boss card to replace; "
                "choose another boss_replaces"
            )
        deck[replaced] -= 1
        deck[BOSS] = 1
    return deck


# --- state -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class State:
    """Everything about one game. Both decks are public (the rulebook's deck check): nothing is hidden."""

    config: Config
    chance: Chance
    classes: tuple[str, str]
    archetypes: tuple[str, str]
    bosses: tuple[str | None, str | None]
    initiative_rolls: tuple[tuple[int, int], ...]  # every pair rolled, re-rolls included
    tiers: tuple[int, int]
    first_seat: int
    hp: list[int]
    cards: list[list[int]]  # per seat: regular, middling, stronk, boss, dodge, heal
    windows: tuple[tuple[Window, ...], tuple[Window, ...]]  # per seat, per card slot (regular: always hits)
    damage: tuple[tuple[int, ...], tuple[int, ...]]  # per seat, per attack slot
    to_act: int
    phase: int = ATTACK_PHASE
    turn: int = 0  # attack-phase decisions taken so far
    pending_card: int = -1  # the attack card of a hit awaiting the defender's reaction
    winner: int = -1  # seat, or -1 (none yet, or a draw)
    end_reason: str = ""
    # (seat, action, roll or 0, succeeded) of the last decision, of the reaction if one was rolled, and
    # (defender, REACT_TAKE, damage taken, True) when a hit lands; for renderers, not read by the rules.
    last_events: list[tuple[int, int, int, bool]] = field(default_factory=list)


def num_seats(config: Config) -> int:
    return 2


def max_game_length(config: Config) -> int:
    """The most decisions a game can take: every turn is one attack or pass plus at most one reaction."""
    return 2 * config.max_turns


def new_game(config: Config, chance: Chance) -> State:
    """Deal classes and archetypes (where random), roll initiative until the rolls differ, lay out the decks."""
    rules = load_ruleset(config.ruleset)
    classes, archetypes = [], []
    for class_name, archetype in zip(config.classes, config.archetypes, strict=True):
        if class_name == RANDOM:
            class_name = chance.choice(CLASSES)
        if archetype == RANDOM:
            archetype = chance.choice(ARCHETYPES[class_name])
        classes.append(class_name)
        archetypes.append(archetype)
    rolls = []
    while True:
        pair = (chance.roll(20), chance.roll(20))
        rolls.append(pair)
        if pair[0] != pair[1]:  # "If both players roll the same # --- Roll again!"
            break
    tiers = (rules.tier_of(pair[0]), rules.tier_of(pair[1]))
    first = 0 if pair[0] > pair[1] else 1
    bosses = tuple(None if b == NO_BOSS else b for b in config.bosses)
    cards, windows, damage = [], [], []
    for seat in (0, 1):
        try:
            deck = lay_out_deck(rules, archetypes[seat], bosses[seat], config.boss_replaces[seat])
        except ValueError as error:
            raise ValueError(f"seat {seat}: {error}") from None
        tier_windows = rules.windows[tiers[seat] - 1]
        boss_damage, boss_window = 0, (21, 21)  # an empty window: no boss card
        if bosses[seat] is not None:
            boss_damage, per_tier = rules.bosses[bosses[seat]]
            boss_window = per_tier[tiers[seat] - 1]
        cards.append(deck)
        windows.append(((1, 20), tier_windows["middling"], tier_windows["stronk"], boss_window,
                        tier_windows["dodge"], tier_windows["heal"]))
        damage.append((rules.damage["regular"], rules.damage["middling"], rules.damage["stronk"], boss_damage))
    state = State(
        config=config, chance=chance, classes=tuple(classes), archetypes=tuple(archetypes),  # type: ignore[arg-type]
        bosses=bosses, initiative_rolls=tuple(rolls), tiers=tiers, first_seat=first,
        hp=[config.starting_hp, config.starting_hp], cards=cards, windows=tuple(windows), damage=tuple(damage),
        to_act=first,
    )
    _begin_turn(state, first)
    return state


# --- the game's flow -------------------------------------------------------------------------------------


def current_seat(state: State) -> int:
    """The seat that decides next, or -1 once the game is over."""
    return -1 if state.phase == GAME_OVER else state.to_act


def has_attack(cards: list[int]) -> bool:
    return cards[REGULAR] > 0 or cards[MIDDLING] > 0 or cards[STRONK] > 0 or cards[BOSS] > 0


def legal_actions(state: State) -> list[int]:
    """Legal action indices for the seat to act, ascending; empty once the game is over."""
    phase = state.phase
    cards = state.cards[state.to_act]
    if phase == ATTACK_PHASE:
        attacks = [card for card in ATTACK_CARDS if cards[card]]
        return attacks or [PASS]
    if phase == REACT_PHASE:
        reactions = []
        if cards[DODGE]:
            reactions.append(REACT_DODGE)
        if cards[HEAL]:
            reactions.append(REACT_HEAL)
        reactions.append(REACT_TAKE)
        return reactions
    return []


def _action_index(state: State, action: object) -> int:
    try:
        return operator.index(action)
    except TypeError:
        legal = [ACTION_NAMES[a] for a in legal_actions(state)]
        raise IllegalActionError(action, legal, "not an action index") from None


def _is_legal(state: State, action: int) -> bool:
    """``action in legal_actions(state)``, without building the list (this runs on every step)."""
    cards = state.cards[state.to_act]
    if state.phase == ATTACK_PHASE:
        if 0 <= action < PASS:
            return cards[action] > 0
        return action == PASS and not has_attack(cards)
    if state.phase == REACT_PHASE:
        return (action == REACT_TAKE or (action == REACT_DODGE and cards[DODGE] > 0)
                or (action == REACT_HEAL and cards[HEAL] > 0))
    return False


def apply(state: State, action: int) -> None:
    """Play ``action`` for the seat to act; raises IllegalActionError for anything not legal now."""
    if action.__class__ is not int:  # numpy integers are welcome; anything else is not an action
        action = _action_index(state, action)
    if not _is_legal(state, action):
        name = ACTION_NAMES[action] if isinstance(action, int) and 0 <= action < NUM_ACTIONS else action
        raise IllegalActionError(name, [ACTION_NAMES[a] for a in legal_actions(state)])
    seat = state.to_act
    if state.phase == REACT_PHASE:
        _resolve_hit(state, defender=seat, reaction=action)
        return
    state.turn += 1
    if action == PASS:
        state.last_events = [(seat, PASS, 0, True)]
        _begin_turn(state, 1 - seat)
        return
    card = action  # attack actions share their index with the card slot
    if card == REGULAR:
        roll, hit = 0, True  # "Regular attack: 10 points of Damage and always hits."
    else:
        roll = state.chance.roll(20)
        low, high = state.windows[seat][card]
        hit = low <= roll <= high
    state.last_events = [(seat, action, roll, hit)]
    if not hit:  # the attacker keeps the card and the turn passes
        _begin_turn(state, 1 - seat)
        return
    state.cards[seat][card] -= 1  # "The successful card must be discarded."
    state.pending_card = card
    defender = 1 - seat
    defender_cards = state.cards[defender]
    if defender_cards[DODGE] or defender_cards[HEAL]:
        state.phase = REACT_PHASE
        state.to_act = defender
    else:
        _resolve_hit(state, defender, REACT_TAKE)


def _resolve_hit(state: State, defender: int, reaction: int) -> None:
    """The defender's one reaction to a hit (dodge, heal or take), then the defender's turn begins."""
    attacker = 1 - defender
    damage = state.damage[attacker][state.pending_card]
    state.pending_card = -1
    hp = state.hp[defender]
    if reaction == REACT_TAKE:
        hp -= damage
        state.last_events.append((defender, REACT_TAKE, damage, True))
    else:
        card = DODGE if reaction == REACT_DODGE else HEAL
        roll = state.chance.roll(20)
        low, high = state.windows[defender][card]
        success = low <= roll <= high
        state.last_events.append((defender, reaction, roll, success))
        if not success:  # a failed reaction card is kept; the hit lands
            hp -= damage
            state.last_events.append((defender, REACT_TAKE, damage, True))
        elif card == DODGE:  # nullified: the attack card stays discarded, so does the dodge
            state.cards[defender][DODGE] -= 1
        else:
            state.cards[defender][HEAL] -= 1
            hp = min(state.config.hp_cap, hp - damage + state.config.heal_amount)
    if hp <= 0:
        state.hp[defender] = 0
        _end(state, winner=attacker, reason=KNOCKOUT)
        return
    state.hp[defender] = hp
    _begin_turn(state, defender)


def _begin_turn(state: State, seat: int) -> None:
    if state.turn >= state.config.max_turns:
        _end(state, winner=-1, reason=TURN_LIMIT)
    elif not has_attack(state.cards[0]) and not has_attack(state.cards[1]):
        _end(state, winner=-1, reason=NO_ATTACKS_LEFT)
    else:
        state.phase = ATTACK_PHASE
        state.to_act = seat


def _end(state: State, winner: int, reason: str) -> None:
    state.phase = GAME_OVER
    state.winner = winner
    state.end_reason = reason
    state.to_act = -1


def is_terminal(state: State) -> bool:
    return state.phase == GAME_OVER


def is_truncated(state: State) -> bool:
    """True when the game was cut off by ``max_turns`` rather than ended by the rules."""
    return state.end_reason == TURN_LIMIT


def potential(state: State, seat: int) -> float:
    """The HP lead of ``seat`` as a fraction of the cap: the potential for training's optional reward
    shaping (potential-based shaping keeps the optimal policy; the rules never read it)."""
    return (state.hp[seat] - state.hp[1 - seat]) / state.config.hp_cap


def returns(state: State) -> tuple[float, float]:
    """+1 to the winner and -1 to the loser; 0 to both in a draw or while the game runs."""
    if state.winner < 0:
        return (0.0, 0.0)
    return (1.0, -1.0) if state.winner == 0 else (-1.0, 1.0)


# --- search: clone and determinize (agents/mcts.py; docs/search.md) ---------------------------------------

from ..core import clone_state as _clone_state  # noqa: E402 - kept with the section it serves

# Every State field is public in Tiny Minotaur: both decks are shown (the rulebook's deck check).
HIDDEN_FIELDS: frozenset[str] = frozenset()
PUBLIC_FIELDS = frozenset(("config", "chance", "classes", "archetypes", "bosses", "initiative_rolls", "tiers",
                           "first_seat", "hp", "cards", "windows", "damage", "to_act", "phase", "turn", "pending_card",
                           "winner", "end_reason", "last_events"))


def clone(state: State) -> State:
    """A copy sharing nothing mutable (its Chance copied too: same generator state and log)."""
    return _clone_state(state)


def determinize(state: State, seat: int, chance: Chance) -> State:
    """A full state consistent with what ``seat`` has seen. Nothing is hidden here but future dice, which
    come from a fresh Chance seeded from ``chance``."""
    return _clone_state(state, Chance(chance.below(2**31)))


def information_state(state: State, seat: int) -> State:
    """What ``seat`` knows as a State: hidden parts in a canonical order, the Chance blank (no future)."""
    return determinize(state, seat, Chance(0))
