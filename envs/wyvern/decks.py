"""Wyvern TCG: the card catalog, deck loading and the deck validator.

The catalog (``cards.toml``) is data; here it becomes :class:`Card` records and flat per-id tuples that
the rules read in their inner loops. A card in play is just its catalog id (an int).

Deck construction rules (rulebook, "Deck construction rules" and "Game quirks"), each checked by
:func:`validate_deck` with an error that names the rule:

* exactly 80 cards, 40 items and 40 monsters; at most 4 copies of a card; only catalog cards;
* a declared specialty holds for the whole deck: an element (``fire``, ``ice``) or alignment (``good``,
  ``evil``) specialty means every item card carries that tag; a weapon specialty (``whip``, ``melee``)
  means the deck has weapons and every one is of that kind (interpretation: specialties are about the
  items a deck brings; monsters are the enemies);
* at most two element/weapon specialties (a "dual specialty deck"), at most one alignment, no two
  elements or weapon kinds that exclude each other;
* the summon, if set, is a monster in the deck.

A deck file is TOML::

    name = "Inferno"
    specialty = ["fire"]        # optional; declared before the game
    summon = "salamander"       # optional; used when the game's `summons` option is on
    [cards]
    flame_whip = 4
    ...

``validate_main(argv)`` is the ``tavernzoo wyvern validate DECK_FILE`` command.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..shipped import local_path

DECK_SIZE, ITEMS_PER_DECK, MONSTERS_PER_DECK, MAX_COPIES = 80, 40, 40, 4

ITEM_KINDS = ("weapon", "helm", "armor", "boots", "big", "potion", "scroll", "wand", "enhancer", "curse")
EQUIPMENT_KINDS = ("weapon", "helm", "armor", "boots", "big")
ONE_SHOT_KINDS = ("potion", "scroll", "wand")
CURSE_EFFECTS = ("lose_level", "lose_helm", "lose_armor", "lose_boots", "lose_weapons", "lose_race",
                 "paralysis", "slow", "confusion")
BAD_STUFF = ("lose_levels", "lose_helm", "lose_armor", "lose_boots", "lose_weapons", "lose_best",
             "lose_all_items", "death")
ELEMENTS = ("fire", "ice")
WEAPON_KINDS = ("whip", "melee")
ALIGNMENTS = ("good", "evil")
SPECIALTIES = ELEMENTS + WEAPON_KINDS + ALIGNMENTS


@dataclass(frozen=True, slots=True)
class Card:
    """One catalog entry. Items use kind..effect, monsters level..tags; unused fields stay at their zero."""

    cid: int
    key: str
    name: str
    is_monster: bool
    kind: str = "monster"
    bonus: int = 0
    gold: int = 0
    hands: int = 0
    big: bool = False
    run: int = 0
    element: str = "none"
    alignment: str = "none"
    weapon: str = "none"
    effect: str = ""
    amount: int = 0
    level: int = 0
    levels: int = 0
    treasures: int = 0
    bad: str = ""
    tags: tuple[str, ...] = ()


_ITEM_FIELDS = {"name", "kind", "bonus", "gold", "hands", "big", "run", "element", "alignment", "weapon",
                "effect", "amount"}
_MONSTER_FIELDS = {"name", "level", "levels", "treasures", "bad", "amount", "tags"}


def _parse_catalog(data: dict[str, Any]) -> tuple[Card, ...]:
    cards: list[Card] = []
    for key, entry in data["items"].items():
        extra = set(entry) - _ITEM_FIELDS
        if extra:
            raise ValueError(f"item {key}: unknown field(s) {sorted(extra)}")
        kind = entry["kind"]
        if kind not in ITEM_KINDS:
            raise ValueError(f"item {key}: kind {kind!r} is not one of {ITEM_KINDS}")
        if kind == "weapon" and entry.get("hands") not in (1, 2):
            raise ValueError(f"item {key}: a weapon needs hands = 1 or 2")
        if kind == "curse" and entry.get("effect") not in CURSE_EFFECTS:
            raise ValueError(f"item {key}: a curse needs an effect from {CURSE_EFFECTS}")
        cards.append(Card(
            cid=len(cards), key=key, name=entry["name"], is_monster=False, kind=kind,
            bonus=int(entry.get("bonus", 0)), gold=int(entry.get("gold", 0)), hands=int(entry.get("hands", 0)),
            big=bool(entry.get("big", False)), run=int(entry.get("run", 0)),
            element=entry.get("element", "none"), alignment=entry.get("alignment", "none"),
            weapon=entry.get("weapon", "none"), effect=entry.get("effect", ""), amount=int(entry.get("amount", 0)),
        ))
    for key, entry in data["monsters"].items():
        extra = set(entry) - _MONSTER_FIELDS
        if extra:
            raise ValueError(f"monster {key}: unknown field(s) {sorted(extra)}")
        if entry["bad"] not in BAD_STUFF:
            raise ValueError(f"monster {key}: bad stuff {entry['bad']!r} is not one of {BAD_STUFF}")
        cards.append(Card(
            cid=len(cards), key=key, name=entry["name"], is_monster=True, level=int(entry["level"]),
            levels=int(entry["levels"]), treasures=int(entry["treasures"]), bad=entry["bad"],
            amount=int(entry.get("amount", 0)), tags=tuple(entry.get("tags", ())),
        ))
    return tuple(cards)


CATALOG: tuple[Card, ...] = _parse_catalog(
    tomllib.loads(resources.files(__package__).joinpath("cards.toml").read_text())
)
BY_KEY: dict[str, Card] = {card.key: card for card in CATALOG}
NUM_CARDS = len(CATALOG)
ITEMS = tuple(card.cid for card in CATALOG if not card.is_monster)
MONSTERS = tuple(card.cid for card in CATALOG if card.is_monster)
EQUIPMENT = tuple(cid for cid in ITEMS if CATALOG[cid].kind in EQUIPMENT_KINDS)
ONE_SHOTS = tuple(cid for cid in ITEMS if CATALOG[cid].kind in ONE_SHOT_KINDS)
ENHANCERS = tuple(cid for cid in ITEMS if CATALOG[cid].kind == "enhancer")
CURSES = tuple(cid for cid in ITEMS if CATALOG[cid].kind == "curse")
SELLABLE = tuple(cid for cid in ITEMS if CATALOG[cid].gold > 0)
MAX_TREASURES = max(CATALOG[cid].treasures for cid in MONSTERS)


# --- decks -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deck:
    """A validated deck: its 80 cards as catalog ids (sorted), declared specialties and summon (-1: none)."""

    name: str
    cards: tuple[int, ...]
    specialty: tuple[str, ...]
    summon: int = -1


_DECK_FIELDS = {"name", "specialty", "summon", "cards"}


def validate_deck(deck: Any) -> list[str]:
    """Every broken deck-construction rule of ``deck`` (a mapping as read from a deck TOML), as messages.

    An empty list means the deck is legal, specialties and summon included.
    """
    if not isinstance(deck, dict):
        return [f"a deck must be a table with a [cards] section, got {type(deck).__name__}"]
    errors: list[str] = []
    extra = sorted(set(deck) - _DECK_FIELDS)
    if extra:
        errors.append(f"unknown deck field(s) {', '.join(extra)}; valid: {', '.join(sorted(_DECK_FIELDS))}")
    cards = deck.get("cards")
    if not isinstance(cards, dict):
        errors.append("a deck needs a [cards] table of card = count")
        cards = {}
    counts: dict[int, int] = {}
    for key, count in cards.items():
        if key not in BY_KEY:
            errors.append(f"unknown card {key!r}: only catalog cards may be played")
            continue
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            errors.append(f"card count for {key} must be a positive whole number, got {count!r}")
            continue
        counts[BY_KEY[key].cid] = count
        if count > MAX_COPIES:
            errors.append(f"no more than {MAX_COPIES} of a particular card: {key} has {count}")
    total = sum(counts.values())
    items = sum(n for cid, n in counts.items() if not CATALOG[cid].is_monster)
    monsters = total - items
    if total != DECK_SIZE:
        errors.append(f"a deck has {DECK_SIZE} cards, no more, no less: this one has {total}")
    if items != ITEMS_PER_DECK:
        errors.append(f"a deck has {ITEMS_PER_DECK} item cards: this one has {items}")
    if monsters != MONSTERS_PER_DECK:
        errors.append(f"a deck has {MONSTERS_PER_DECK} monster cards: this one has {monsters}")
    specialty = deck.get("specialty", [])
    if isinstance(specialty, str):
        specialty = [specialty]
    if not isinstance(specialty, list) or not all(isinstance(s, str) for s in specialty):
        errors.append(f"specialty must be a list of names from {', '.join(SPECIALTIES)}, got {specialty!r}")
        specialty = []
    errors.extend(_specialty_errors(specialty, counts))
    summon = deck.get("summon")
    if summon is not None:
        card = BY_KEY.get(summon) if isinstance(summon, str) else None
        if card is None or not card.is_monster:
            errors.append(f"the summon must be a monster card, got {summon!r}")
        elif card.cid not in counts:
            errors.append(f"the summon {summon} must be a monster in the deck")
    name = deck.get("name", "")
    if not isinstance(name, str):
        errors.append(f"the deck name must be text, got {name!r}")
    return errors


def _specialty_errors(specialty: list[str], counts: dict[int, int]) -> list[str]:
    errors = []
    unknown = [s for s in specialty if s not in SPECIALTIES]
    for s in unknown:
        errors.append(f"unknown specialty {s!r}; valid: {', '.join(SPECIALTIES)}")
    if len(set(specialty)) != len(specialty):
        errors.append(f"a specialty is declared twice: {specialty}")
    known = [s for s in dict.fromkeys(specialty) if s in SPECIALTIES]
    themes = [s for s in known if s not in ALIGNMENTS]
    aligned = [s for s in known if s in ALIGNMENTS]
    if len(themes) > 2:
        errors.append(f"a deck has at most two element/weapon specialties (a dual specialty deck), got {themes}")
    if sum(s in ELEMENTS for s in themes) > 1:
        errors.append("a deck cannot specialise in two elements: every item would need both")
    if sum(s in WEAPON_KINDS for s in themes) > 1:
        errors.append("a deck cannot specialise in two weapon kinds: every weapon would need to be both")
    if len(aligned) > 1:
        errors.append("a deck is either a good or an evil specialty deck, not both")
    item_ids = [cid for cid in counts if not CATALOG[cid].is_monster]
    for s in known:
        if s in ELEMENTS or s in ALIGNMENTS:
            field = "element" if s in ELEMENTS else "alignment"
            broken = sorted(CATALOG[cid].key for cid in item_ids if getattr(CATALOG[cid], field) != s)
            if broken:
                errors.append(f"specialty {s}: every item must be {s}; not {s}: {', '.join(broken)}")
        else:
            weapons = [cid for cid in item_ids if CATALOG[cid].kind == "weapon"]
            if not weapons:
                errors.append(f"specialty {s}: the deck holds no weapons")
            broken = sorted(CATALOG[cid].key for cid in weapons if CATALOG[cid].weapon != s)
            if broken:
                errors.append(f"specialty {s}: every weapon must be a {s} weapon; not: {', '.join(broken)}")
    return errors


def deck_from_mapping(data: dict[str, Any], default_name: str) -> Deck:
    """A :class:`Deck` from a mapping; ValueError listing every broken rule if it is not legal."""
    errors = validate_deck(data)
    if errors:
        raise ValueError(f"deck {default_name!r} is not legal: " + "; ".join(errors))
    cards = tuple(sorted(BY_KEY[key].cid for key, n in data["cards"].items() for _ in range(n)))
    specialty = data.get("specialty", [])
    specialty = (specialty,) if isinstance(specialty, str) else tuple(specialty)
    summon = BY_KEY[data["summon"]].cid if data.get("summon") else -1
    return Deck(name=data.get("name", default_name), cards=cards, specialty=specialty, summon=summon)


@cache
def bundled_decks() -> dict[str, dict[str, Any]]:
    """The starter decks shipped in ``decks.toml``, by name, as raw mappings."""
    return tomllib.loads(resources.files(__package__).joinpath("decks.toml").read_text())


def read_deck_file(path: str | Path) -> dict[str, Any]:
    try:
        return tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not valid TOML: {error}") from None


@cache
def load_deck(name_or_path: str) -> Deck:
    """A bundled deck by name or a deck TOML file by path, validated (ValueError naming every broken rule)."""
    decks = bundled_decks()
    if name_or_path in decks:
        return deck_from_mapping(decks[name_or_path], name_or_path)
    path = Path(local_path(name_or_path))  # a copy shipped from a Ray driver, or the path itself
    if not path.is_file():
        raise ValueError(f"deck {name_or_path!r} is neither a bundled deck ({', '.join(decks)}) nor a readable file")
    return deck_from_mapping(read_deck_file(path), Path(name_or_path).stem)


def validate_main(argv: list[str]) -> int:
    """``tavernzoo wyvern validate DECK_FILE``: print the broken rules; exit 1 if the deck is not legal."""
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: tavernzoo wyvern validate DECK_FILE  (a deck TOML file or a bundled deck name: "
              f"{', '.join(bundled_decks())})", file=sys.stderr)
        return 2
    target = argv[0]
    try:
        data = bundled_decks()[target] if target in bundled_decks() and not Path(target).exists() \
            else read_deck_file(target)
    except (OSError, ValueError) as error:
        print(f"{target}: cannot read the deck: {error}")
        return 1
    errors = validate_deck(data)
    if errors:
        print(f"{target}: NOT a legal deck ({len(errors)} problem{'s' if len(errors) != 1 else ''})")
        for error in errors:
            print(f"  - {error}")
        return 1
    specialty = data.get("specialty", [])
    specialty = [specialty] if isinstance(specialty, str) else specialty
    declared = f", specialty: {', '.join(specialty)}" if specialty else ""
    print(f"{target}: legal deck ({DECK_SIZE} cards{declared})")
    return 0
