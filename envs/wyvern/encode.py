"""Wyvern TCG — what a seat sees: action names, the observation vector, the view and a rendering.

Hidden information: every hand is private to its holder (the others see its size) and no one sees any
deck's order. Public: levels, races, classes, decks and their declared specialties, items in play,
summons set aside, hand/deck/discard sizes, the face-up door card, everything on the combat table and
every event that the table saw (treasure and hand loot are counted, not shown).

Actions
=======
One fixed Discrete space (``NUM_ACTIONS`` = 295 with the bundled catalog); ``+r`` is the seat ``r`` places
after the acting one in play order; ``<card>`` is a catalog key from ``cards.toml``; ``k`` is a number of
the monster's treasures (0-5). :func:`describe_action` with the state names the players (``at player_2``).

==========================  ===================================================================
name                        when legal
==========================  ===================================================================
``pass``                    setup / re-entry: done playing; your turn: end it (draw face down);
                            combat window: pass (the window closes after everyone passes in a row)
``run``                     you fight and are not winning: roll now (d6 + bonuses >= 5 escapes)
``accept``                  help talks: take the offer (ask phase) or the ask (counter phase): a deal
``decline``                 help talks: break them off; looting: take nothing from the body
``summon:aid``              combat: add your summon's level to your party (fighter or helper)
``summon:join``             combat of another: add your summon's level to the monster
``summon:fight``            your turn: fight your own summon (it gets +5 and leaves your control)
``equip:<card>``            setup, re-entry, your turn out of combat: the item fits a free slot
``use:<card>:party``        combat: a potion, scroll or wand for the fighting party
``use:<card>:monster``      combat of another: a one-shot or an enhancer on the monster
``curse:<card>:+r``         setup, re-entry, your turn, or any combat window: curse a living player
``fight:<card>``            your turn out of combat: fight a monster from your hand
``sell:<card>``             your turn out of combat: sell an item from your hand
``sell_equipped:<card>``    your turn out of combat: sell an item you have in play
``discard:<card>``          end of your turn, over the hand limit
``loot:<card>``             take this item from a dead player's body
``loot:hand``               nothing in play on the body: draw two cards at random from its hand
``offer:+r:k``              you fight without a helper: offer seat +r k treasures for its help (a first
                            offer, or more than you offered it before; answering an ask: below the ask)
``ask:k``                   combat of another, no helper yet: offer to help for k treasures; or answer
                            an offer with a counter-offer (k above the offer); never above your last ask
``loot_order:+r``           you died: seat +r loots next
==========================  ===================================================================

Observation (float32, all in [0, 1])
====================================
Six player blocks of ``PLAYER_BLOCK`` (66) slots, egocentric: block 0 is me, block r the seat r places
after me in play order (blocks past the table size are all zero); then my hand; then the table.

======  =======================================================================
offset  player block (block r starts at r * 66)
======  =======================================================================
0       present at this table
1       alive (not waiting to re-enter)
2       level / win_level
3       combat level out of combat (level + items + race + deck bonuses) / 50, clipped
4       hand size / 10, clipped
5-6     deck size / 80, discard pile size / 80, clipped
7       it is this player's turn
8-16    race one-hot (human, elf, halfling, naga, rakshasa, giant, pixie, dwarf, none)
17-21   class one-hot (paladin, warrior, wizard, thief, cleric)
22-24   paralysed, slowed, confused
25      deck (specialty) bonus / 10
26      summon set aside: its level / 25 (0: none)
27      run-away bonus from items, race, class and statuses: (bonus + 3) / 8, clipped
28-33   is the fighter, the helper, in help talks now, dying, looting now, helped this turn
34-39   declared specialties (fire, ice, whip, melee, good, evil)
40-61   items in play: copies of each equipment card (catalog order of ``EQUIPMENT``) / 2
62-63   this combat's help talks: offers the fighter made this player / help_rounds, its best offer
        to it (k + 1) / 6 (0: none)
64-65   asks this player made / help_rounds, its last ask (k + 1) / 6 (0: none)
======  =======================================================================

==========  ====================================================================
index       rest
==========  ====================================================================
396-459     my hand: copies of each catalog card / 4
460-469     phase one-hot (setup, reenter, free, window, ask, counter, loot_order, loot_pick, discard,
            over)
470         I am to act
471-534     the face-up door card of this turn, one-hot by catalog id
535-554     the monster being fought, one-hot in ``MONSTERS`` order
555-571     combat numbers (see ``COMBAT`` below)
572-579     the monster's Bad Stuff one-hot (lose_levels, helm, armor, boots, weapons, best, all, death)
580-581     death by levels, death by being eaten (while looting)
582-585     turn / max_turns, decisions / max_steps, gold sold this turn / gold_per_level, halfling sold
586         my hand size over my hand limit (the cards to discard) / 5, clipped
==========  ====================================================================

``COMBAT`` (index 555 + k): 0 in combat, 1 monster level / 30, 2 monster bonus / 30, 3 monster strength
/ 100, 4 party strength / 100, 5 party bonus / 30, 6 party wins now, 7 treasures / 5, 8 promised split / 5,
9 the fighter's pending offer (phase ask) / 5, 10 levels granted / 3, 11 one-shot run bonus / 6, 12 the
fighter's chance to escape, 13-15 source one-hot (door, hand, summon), 16 the would-be helper's pending
ask (phase counter) / 5. All clipped to [0, 1].
"""

from __future__ import annotations

from functools import cache
from itertools import compress, count
from operator import ne
from typing import Any

import numpy as np

from .decks import (
    ALIGNMENTS,
    BAD_STUFF,
    CATALOG,
    ELEMENTS,
    EQUIPMENT,
    MONSTERS,
    NUM_CARDS,
    WEAPON_KINDS,
    bundled_decks,
    load_deck,
)
from .rules import (
    ACTION_ARG,
    ACTION_CARD,
    ACTION_KIND,
    ACTION_NAMES,
    ASK,
    CLASSES,
    COUNTER,
    K_ASK,
    K_CURSE,
    K_LOOT_ORDER,
    K_OFFER,
    LEVEL,
    LEVELS,
    LOOT_ORDER,
    LOOT_PICK,
    MAX_PLAYERS,
    NUM_ACTIONS,
    OVER,
    PHASE_NAMES,
    RACE_NAMES,
    SOURCE_NAMES,
    TREASURES,
    WINDOW,
    Config,
    State,
    combat_level,
    hand_limit,
    monster_strength,
    party_beats,
    party_strength,
    party_wins,
    run_bonus,
)

_FLOAT32 = np.dtype(np.float32)  # a dtype object: numpy parses a dtype= string or type on every call
SPECIALTY_ORDER = ELEMENTS + WEAPON_KINDS + ALIGNMENTS
_SPECIALTY_SLOT = {name: i for i, name in enumerate(SPECIALTY_ORDER)}
EQUIP_SLOT = {cid: i for i, cid in enumerate(EQUIPMENT)}
MONSTER_SLOT = {cid: i for i, cid in enumerate(MONSTERS)}

# Player block offsets.
P_PRESENT, P_ALIVE, P_LEVEL, P_COMBAT, P_HAND, P_DECK, P_DISCARD, P_ACTIVE = range(8)
P_RACE, P_CLASS = 8, 17
P_PARALYZED, P_SLOW, P_CONFUSED, P_STATIC, P_SUMMON, P_RUN = 22, 23, 24, 25, 26, 27
P_FIGHTER, P_HELPER, P_ASKED, P_DYING, P_LOOTER, P_HELPED = 28, 29, 30, 31, 32, 33
P_SPECIALTY, P_EQUIPPED = 34, 40
P_OFFERS = P_EQUIPPED + len(EQUIPMENT)
P_BEST_OFFER, P_ASKS, P_LAST_ASK = P_OFFERS + 1, P_OFFERS + 2, P_OFFERS + 3
PLAYER_BLOCK = P_OFFERS + 4
HAND = slice(MAX_PLAYERS * PLAYER_BLOCK, MAX_PLAYERS * PLAYER_BLOCK + NUM_CARDS)
PHASE = slice(HAND.stop, HAND.stop + len(PHASE_NAMES))
MY_TURN = PHASE.stop
DOOR = slice(MY_TURN + 1, MY_TURN + 1 + NUM_CARDS)
MONSTER = slice(DOOR.stop, DOOR.stop + len(MONSTERS))
COMBAT = slice(MONSTER.stop, MONSTER.stop + 17)
(C_IN, C_MLEVEL, C_MBONUS, C_MSTRENGTH, C_PSTRENGTH, C_PBONUS, C_WINNING, C_TREASURES, C_SPLIT, C_ASK_SPLIT,
 C_LEVELS, C_RUN, C_ESCAPE, C_SOURCE) = range(14)
C_BID = C_SOURCE + 3
BAD = slice(COMBAT.stop, COMBAT.stop + len(BAD_STUFF))
DEATH = slice(BAD.stop, BAD.stop + 2)
TURN, STEPS, GOLD_SOLD, HALFLING_SOLD = DEATH.stop, DEATH.stop + 1, DEATH.stop + 2, DEATH.stop + 3
OVER_LIMIT = HALFLING_SOLD + 1
OBSERVATION_SIZE = OVER_LIMIT + 1
IN_COMBAT_PHASES = (WINDOW, ASK, COUNTER)

assert len(ACTION_NAMES) == NUM_ACTIONS


def action_names(config: Config) -> tuple[str, ...]:
    return ACTION_NAMES


def observation_size(config: Config) -> int:
    return OBSERVATION_SIZE


def _treasures(k: int | str) -> str:
    return f"{k} treasure" + ("" if str(k) == "1" else "s")


def describe_action(action: int, state: State | None = None) -> str:
    """A sentence for a person choosing among the legal actions. Given the state (the chooser is the seat to
    act), every seat offset is named as the player it means and offers say what is on the table."""
    name = ACTION_NAMES[action]
    verb, _, rest = name.partition(":")
    kind = ACTION_KIND[action]
    seat = state.to_act if state is not None else -1
    phase = state.phase if state is not None else -1

    def player(offset: int) -> str:
        if state is None:
            return f"the player {offset} seat(s) after you"
        return f"player_{(seat + offset) % state.n}"

    if state is not None and phase in (ASK, COUNTER) and name in ("accept", "decline"):
        other = state.ask_seat
        if phase == ASK:
            deal = f"player_{state.fighter}'s offer of {_treasures(state.ask_split)}"
            return f"accept {deal} and help fight" if name == "accept" else f"turn down {deal}"
        deal = f"player_{other}'s ask of {_treasures(state.bid)}"
        return f"accept {deal}: they help you fight" if name == "accept" else f"refuse {deal}"
    if state is not None and phase == LOOT_PICK:
        body = f"player_{state.dying}"
        if name == "decline":
            return f"take nothing from {body}'s body"
        if name == "loot:hand":
            return f"draw two cards at random from {body}'s hand"
        return f"take {CATALOG[ACTION_CARD[action]].name} from {body}'s body"
    fixed = {
        "pass": "pass (in a combat window) or finish playing cards (out of combat: ends your turn)",
        "run": "run away now: roll a d6 plus your run bonuses, 5 or more escapes",
        "accept": "accept the offer or ask on the table: the deal is made",
        "decline": "break off the help talks, or take nothing from a dead player's body",
        "summon:aid": "bring your summon to your side of the fight",
        "summon:join": "send your summon against the fighting party",
        "summon:fight": "fight your own summon (it gets +5 out of anger)",
        "loot:hand": "draw two cards at random from the dead player's hand",
    }
    if name in fixed:
        return fixed[name]
    if kind == K_OFFER:
        offset, split = divmod(ACTION_ARG[action], 100)
        return f"offer {_treasures(split)} to {player(offset)} for help"
    if kind == K_ASK:
        fighter = f"player_{state.fighter}" if state is not None else "the fighter"
        if phase == ASK:
            return f"counter: ask {fighter} for {_treasures(rest)} instead"
        return f"offer to help {fighter} for {_treasures(rest)}"
    if kind == K_LOOT_ORDER:
        return f"{player(ACTION_ARG[action])} loots your body next"
    card = CATALOG[ACTION_CARD[action]]
    if verb == "use":
        return f"play {card.name} on {'your party' if rest.endswith(':party') else 'the monster'}"
    if kind == K_CURSE:
        return f"play {card.name} at {player(ACTION_ARG[action])}"
    return f"{verb.replace('_', ' ')} {card.name}"


def action_parts(action: int, state: State) -> tuple[str | None, int | None]:
    """What a board drawing needs to offer ``action`` as "a card, then its target": the card it plays, sells,
    discards, equips or loots (its catalog key, as the view names cards) and the seat it aims at (a curse's
    victim, the player offered a deal, the next looter), each None where the action has none."""
    kind, arg = ACTION_KIND[action], ACTION_ARG[action]
    card = _key(ACTION_CARD[action])
    if kind == K_CURSE or kind == K_LOOT_ORDER:
        return card, (state.to_act + arg) % state.n
    if kind == K_OFFER:
        return None, (state.to_act + arg // 100) % state.n
    return card, None


@cache
def _escape_chance(bonus: int, target: int) -> float:
    return sum(1 for face in range(1, 7) if face + bonus >= target) / 6.0


def _player_block(state: State, who: int) -> np.ndarray:
    """The 66 slots of ``who``'s player block (offsets in the module docstring), as float32, with the role
    flags (P_ACTIVE, P_FIGHTER, P_HELPER, P_ASKED, P_DYING, P_LOOTER, P_HELPED), the pile sizes (P_HAND,
    P_DECK, P_DISCARD: they change with nearly every card played or drawn) and the help talks (P_OFFERS to
    P_LAST_ASK, in combat) left at 0: :func:`encode` writes them."""
    config = state.config
    block = np.zeros(PLAYER_BLOCK, _FLOAT32)
    v = memoryview(block)  # a float stored here is rounded to float32 as numpy rounds it
    v[0] = 1.0
    if not state.dead[who]:
        v[P_ALIVE] = 1.0
    v[P_LEVEL] = state.level[who] / config.win_level
    x = combat_level(state, who) / 50.0
    v[P_COMBAT] = _clip(x)
    v[P_RACE + state.races[who]] = 1.0
    v[P_CLASS + state.classes[who]] = 1.0
    if state.paralyzed[who]:
        v[P_PARALYZED] = 1.0
    if state.slow_turn[who] >= 0:
        v[P_SLOW] = 1.0
    if state.confused_turn[who] >= 0:
        v[P_CONFUSED] = 1.0
    x = state.static_bonus[who] / 10.0
    v[P_STATIC] = x if x < 1.0 else 1.0
    if state.summon[who] >= 0:
        v[P_SUMMON] = LEVEL[state.summon[who]] / 25.0
    x = (run_bonus(state, who) + 3) / 8.0
    v[P_RUN] = _clip(x)
    for specialty in state.specialties[who]:
        v[P_SPECIALTY + _SPECIALTY_SLOT[specialty]] = 1.0
    for cid in state.equipped[who]:
        i = P_EQUIPPED + EQUIP_SLOT[cid]
        v[i] = 1.0 if v[i] else 0.5
    return block


@cache
def _monster_slots(monster: int) -> memoryview:
    """What the fight's slots show of ``monster`` alone: its one-hot, level, treasures, levels granted and
    Bad Stuff (and "in combat"); the rest 0. Float32, read-only: it is copied, never written."""
    v = [0.0] * (BAD.stop - MONSTER.start)
    v[MONSTER_SLOT[monster]] = 1.0
    c = COMBAT.start - MONSTER.start
    v[c + C_IN] = 1.0
    v[c + C_MLEVEL] = min(1.0, LEVEL[monster] / 30.0)
    v[c + C_TREASURES] = TREASURES[monster] / 5.0
    v[c + C_LEVELS] = min(1.0, LEVELS[monster] / 3.0)
    v[BAD.start - MONSTER.start + BAD_STUFF.index(CATALOG[monster].bad)] = 1.0
    return memoryview(np.array(v, dtype=np.float32)).toreadonly()


def _clip(x: float) -> float:
    return 0.0 if x < 0.0 else x if x < 1.0 else 1.0


def _write_fight(state: State, v: memoryview) -> None:
    """Write the slots ``MONSTER.start:BAD.stop`` of a fight (the monster, ``COMBAT``, the Bad Stuff) into
    ``v`` (float32), but the help talks' numbers (C_SPLIT, C_ASK_SPLIT, C_BID: :func:`encode` writes them)
    left at 0."""
    v[:] = _monster_slots(state.monster)
    c = COMBAT.start - MONSTER.start
    party, monster = party_strength(state), monster_strength(state)
    v[c + C_MBONUS] = _clip(state.monster_bonus / 30.0)
    v[c + C_MSTRENGTH] = _clip(monster / 100.0)
    v[c + C_PSTRENGTH] = _clip(party / 100.0)
    v[c + C_PBONUS] = _clip(state.party_bonus / 30.0)
    if party_beats(state, party, monster):
        v[c + C_WINNING] = 1.0
    v[c + C_RUN] = _clip(state.run_bonus / 6.0)
    v[c + C_ESCAPE] = _escape_chance(run_bonus(state, state.fighter) + state.run_bonus, state.config.run_target)
    v[c + C_SOURCE + state.source] = 1.0


def _fight_slots(state: State) -> np.ndarray:
    """:func:`_write_fight` into a new array."""
    slots = np.empty(BAD.stop - MONSTER.start, np.float32)
    _write_fight(state, memoryview(slots))
    return slots


# How :func:`encode` avoids recomputing what did not change. Most decisions change little that is public:
# three quarters of a random game's decisions are taken in a fight, mostly passes and help talks.
#
# * Per game, in each :class:`Observer` (an env's, a search's: ``tables``, by the id of the State; the state
#   encoded last is checked first, by identity): a
#   :class:`_Table` keeps copies of every input of the player blocks and the blocks made from them, in seat
#   order and then again (so that every rotation to an observer is one slice), without the role flags; each
#   seat's hand; the fight's slots. Each call compares the state's lists with the copies (a few list
#   compares, done in C) and rewrites only the slots whose inputs differ; the observation is then the
#   table's blocks rotated to the observer (one slice copy), the hand and the rest of the vector (one
#   copy), the role flags and the few slots that change with every decision. The blocks' inputs come in
#   three groups: the public lists (:func:`_public`: level, items, statuses...), which change rarely and
#   rewrite a seat's whole block; the pile sizes (:func:`_sizes`), which change with nearly every card
#   played or drawn; the help talks (:func:`_talks`), which change with every offer and ask. Sizes and talks
#   rewrite one slot each. The fight's slots are rewritten when any of their inputs changes (the fighter's
#   and helper's ``_rest`` standing for what the party's strength reads). A table holds for whatever state
#   has equal inputs: a reused id, a clone or a state changed by hand costs a rewrite, never a wrong
#   observation.
# * Across games, per config (``_CACHES``): a player's block without its numbers and role flags, keyed by
#   :func:`_rest` (every per-player input it reads); about half the rewrites find theirs there. Bounded:
#   emptied when grown past the limit. Cached blocks are never written to once stored. (The fight's slots
#   were cached across games too, until a count showed 95% misses: every game deals new players.)
#
# Writes go through memoryviews of the float32 arrays: a Python float stored in a 'f' memoryview is rounded
# to float32 as numpy's assignment rounds it, at half the cost of a numpy item write.
#
# Threads (the web server plays each table in one of its own): every consumer has its own Observer, so a
# table is written and copied only by the one consumer that owns it. ``_CACHES`` is shared: its blocks are
# never written once stored.
_CACHES: dict[tuple, dict] = {}
_CACHE_LIMIT = 20_000
_TABLES_LIMIT = 256  # tables an observer keeps (emptied when full; a search encodes many short-lived copies)
_STALE = object()  # a saved input that equals nothing: the slots it feeds are rewritten
# The block slots filled from the numbers (the pile sizes, then the talks), one kind per n numbers: the slot,
# what is added to the number and what the sum is divided by (None: the config's help_rounds), capped at 1.
_NUMBER_SLOTS = ((P_HAND, 0, 10.0), (P_DECK, 0, 80.0), (P_DISCARD, 0, 80.0), (P_OFFERS, 0, None),
                 (P_BEST_OFFER, 1, 6.0), (P_ASKS, 0, None), (P_LAST_ASK, 1, 6.0))
# Out of combat the help talks' slots are 0: the talks' numbers that give 0 (no offer, no ask), per table size.
_NO_TALKS = {n: ([0] * n, [-1] * n, [0] * n, [-1] * n) for n in range(1, MAX_PLAYERS + 1)}
# The spans of a player block that its base block fills: all but the numbers' slots (P_HAND..P_DISCARD and
# P_OFFERS..P_LAST_ASK, the block's end), which the numbers fill.
_BASE_SPANS = ((0, P_HAND), (P_DISCARD + 1, P_OFFERS))
_ZEROS = memoryview(np.zeros(OBSERVATION_SIZE, np.float32))
# Where seat ``who``'s block starts in the observation of ``seat`` at an n-seat table: _BLOCK_AT[n][seat][who].
_BLOCK_AT = {n: [[(who - seat) % n * PLAYER_BLOCK for who in range(n)] for seat in range(n)]
             for n in range(1, MAX_PLAYERS + 1)}
_VIEWS_LIMIT = 256  # out arrays an observer keeps views of (emptied when full)


class _Table:
    """One game's player blocks as :func:`encode` wrote them last, in seat order (role flags left out), each
    seat's hand and the fight's slots, with copies of the inputs they were made from."""

    __slots__ = ("config", "n", "bases", "number_slots", "public", "rests", "sizes", "talks", "written",
                 "array", "blocks", "rotated", "fight_key", "fight", "hands", "tails")

    def __init__(self, config: Config, n: int, like: _Table | None = None):
        """A table with nothing written (every slot to be written on first use), or a copy of ``like``, the
        table of another state at the same config and table size: a search's copies of a game start from
        the table of the game they were copied from, and the first encoding rewrites only what differs."""
        self.config, self.n = config, n
        caches_key = (config.win_level, config.help_rounds, config.run_target, config.paladin_helper_wins_ties)
        self.bases = _CACHES.setdefault(caches_key, {})
        # Per number (:data:`_NUMBER_SLOTS` spelled out per seat): where in ``blocks`` it goes (twice), what is
        # added, what divides.
        self.number_slots = _number_slots(n, config.help_rounds)
        # The blocks twice over (seat order, then again: every rotation is one slice), then per seat the
        # vector's tail from HAND.start with that seat's hand in it (zeros elsewhere: encode writes the rest
        # of the tail over it), then the fight's slots, in one array.
        tail, fight = OBSERVATION_SIZE - HAND.start, BAD.stop - MONSTER.start
        if like is None:
            self.array = np.zeros(n * (2 * PLAYER_BLOCK + tail) + fight, np.float32)
            self.public: Any = _STALE  # copies of the lists of _public(state)
            self.rests: list[Any] = [_STALE] * n  # per seat, the _rest its base block was made from
            self.sizes: Any = _STALE  # the pile sizes (_sizes(state)) last compared
            self.talks: Any = _STALE  # copies of the help talks' lists (_talks(state)) last compared
            self.written: list[Any] = [None] * len(_NUMBER_SLOTS) * n  # every number as written in the blocks
            self.hands: list[Any] = [_STALE] * n  # per seat, the hand its tail holds
            self.fight_key: Any = _STALE  # the inputs of the fight's slots as written
        else:  # the saved lists are replaced, never changed in place, once stored: shallow copies suffice
            self.array = like.array.copy()
            self.public = like.public if like.public is _STALE else like.public[:]
            self.rests = like.rests[:]
            self.sizes, self.talks, self.written = like.sizes, like.talks, like.written[:]
            self.hands = like.hands[:]
            self.fight_key = like.fight_key
        memory = memoryview(self.array)
        end = n * PLAYER_BLOCK  # where the blocks' second copy starts: every write to the blocks goes to both
        self.blocks = memory[:2 * end]
        self.rotated = [memory[seat * PLAYER_BLOCK:seat * PLAYER_BLOCK + end] for seat in range(n)]  # block 0 is seat
        self.tails = [memory[2 * end + seat * tail:2 * end + (seat + 1) * tail] for seat in range(n)]
        self.fight = memory[2 * end + n * tail:]  # the fight's slots (MONSTER.start:BAD.stop)


@cache
def _number_slots(n: int, help_rounds: int) -> list[tuple[int, int, int, float | int]]:
    """For each number at an ``n``-seat table (``_NUMBER_SLOTS`` spelled out per seat: the pile sizes as
    :func:`_sizes` lists them, then the talks as :func:`_talks` does): its index in the blocks and in their
    second copy, what is added to it and what divides the sum."""
    return [(who * PLAYER_BLOCK + slot, (n + who) * PLAYER_BLOCK + slot, add, help_rounds if by is None else by)
            for slot, add, by in _NUMBER_SLOTS for who in range(n)]


def _public(state: State) -> list:
    """The per-seat lists a player's base block reads (through :func:`_rest`), as one list to compare."""
    return [state.level, state.equipped, state.dead, state.paralyzed, state.slow_turn, state.confused_turn,
            state.summon, state.races, state.classes, state.static_bonus, state.specialties]


def _rest(state: State, who: int) -> tuple:
    """Every per-player input of ``who``'s base block (:func:`_player_block`, with the rules'
    ``combat_level`` and ``run_bonus`` it calls): the key of ``bases``."""
    return (state.dead[who], state.level[who], state.races[who], state.classes[who], state.paralyzed[who],
            state.slow_turn[who] >= 0, state.confused_turn[who] >= 0, state.static_bonus[who], state.summon[who],
            tuple(state.equipped[who]), state.specialties[who])


def _sizes(state: State) -> list[int]:
    """Every seat's hand, then deck, then discard pile size: the first 3n numbers."""
    return list(map(len, state.hand + state.deck + state.discard))


def _talks(state: State, in_combat: bool) -> tuple[list[int], ...]:
    """The help talks' lists (offers, best offers, asks, last asks; the numbers after the sizes), or in
    effect none out of combat."""
    if in_combat:
        return state.offers_to, state.best_offer, state.asks_from, state.last_ask
    return _NO_TALKS[state.n]


def _write_bases(state: State, table: _Table) -> None:
    """Rewrite the base block of every seat whose entry in a public list changed (and whose ``rest`` did),
    with its numbers; keep copies of the lists that changed."""
    public, saved, n = _public(state), table.public, table.n
    if saved is _STALE:
        changed: Any = range(len(public))
        seats: Any = range(n)
        saved = table.public = [None] * len(public)
    else:
        changed = [*compress(count(), map(ne, public, saved))]
        seats = set()
        for k in changed:
            seats.update(compress(count(), map(ne, public[k], saved[k])))
    for k in changed:
        now = public[k]
        saved[k] = [cards[:] for cards in now] if now is state.equipped else now[:]
    bases, blocks, rests, end = table.bases, table.blocks, table.rests, n * PLAYER_BLOCK
    for who in seats:
        rest = _rest(state, who)
        if rest == rests[who]:
            continue  # e.g. a status's start turn moved, not whether it is on
        rests[who] = rest
        base = bases.get(rest)
        if base is None:
            if len(bases) >= _CACHE_LIMIT:
                bases.clear()
            base = bases[rest] = memoryview(_player_block(state, who))
        # Around the numbers' slots (the base block has 0 there; the table keeps this seat's numbers as written).
        start = who * PLAYER_BLOCK
        for first, stop in _BASE_SPANS:
            blocks[start + first:start + stop] = blocks[start + end + first:start + end + stop] = base[first:stop]


def _write_numbers(table: _Table, numbers: list[int], first: int) -> None:
    """Write ``numbers`` (the numbers from index ``first`` on) where they differ from what was written, into
    both copies of the blocks."""
    written, blocks, slots, stop = table.written, table.blocks, table.number_slots, first + len(numbers)
    old = written[first:stop]
    written[first:stop] = numbers
    for i in compress(count(first), map(ne, numbers, old)):
        at, twin, add, by = slots[i]
        x = (written[i] + add) / by
        blocks[at] = blocks[twin] = x if x < 1.0 else 1.0


def _write_hand(table: _Table, seat: int, hand: list[int]) -> None:
    """My hand in ``seat``'s tail: a quarter per copy of each card, at most 1."""
    tail = table.tails[seat]
    tail[:] = _ZEROS[HAND.start:]
    for cid in hand:
        x = tail[cid]
        tail[cid] = x + 0.25 if x < 1.0 else 1.0
    table.hands[seat] = list(hand)


class Observer:
    """One consumer's encoder (an env's, a search's): :func:`encode`'s observations, rewriting only what
    changed since this observer's last call for the same game (see the comment above ``_CACHES``).

    ``tables``: each game's :class:`_Table`, by the id of its State; ``last_table``: the state encoded last
    and its table (a new state's table starts as a copy of it; holding the state keeps its id from being
    reused, so the next call with the same state skips the lookup). ``views``: per ``out`` array (an env
    passes the same one every time) the array, a memoryview of it and views of its head (the first k
    blocks, for every k) and of its tail (from HAND.start), by the id of the array; ``last_view``: the one
    used last. The views keep their arrays alive (an id is not reused while its entry lasts) and numpy
    will not resize them in place."""

    __slots__ = ("tables", "last_table", "views", "last_view")

    def __init__(self) -> None:
        self.tables: dict[int, _Table] = {}
        self.last_table: list[Any] = [None, None]
        self.views: dict[int, tuple] = {}
        self.last_view: list[Any] = [None, None, None, None]

    def _table_of(self, state: State, config: Config, n: int, like: _Table | None) -> _Table:
        """The table of ``state`` (made on its first call, as a copy of ``like``, the table used last, when
        that has the same config and table size), remembered as the table used last."""
        tables = self.tables
        table = tables.get(id(state))
        if table is None or table.config is not config or table.n != n:
            if len(tables) >= _TABLES_LIMIT:
                tables.clear()
            if like is not None and (like.config is not config or like.n != n):
                like = None
            table = tables[id(state)] = _Table(config, n, like)
        self.last_table[:] = state, table
        return table

    def _views_of(self, out: np.ndarray) -> tuple:
        """``out`` with its views (see the class docstring), made on first use; remembered as the array
        used last."""
        views = self.views.get(id(out))
        if views is None or views[0] is not out:
            try:
                view = memoryview(out)
                heads, tail = [view[:k * PLAYER_BLOCK] for k in range(MAX_PLAYERS + 1)], view[HAND.start:]
            except (TypeError, ValueError, NotImplementedError):
                raise ValueError(f"out must be a float32 array of shape ({OBSERVATION_SIZE},), "
                                 f"got {out!r:.60}") from None
            if len(self.views) >= _VIEWS_LIMIT:
                self.views.clear()
            views = self.views[id(out)] = out, view, heads, tail
        self.last_view[:] = views
        return views

    def encode(self, state: State, seat: int, out: np.ndarray) -> None:
        """Fill ``out`` (float32[OBSERVATION_SIZE]) with the observation of ``seat``: what
        :func:`encode_uncached` writes, without recomputing what did not change since this game's last
        call here."""
        last_out, view, heads, tail = self.last_view
        if out is not last_out:
            _, view, heads, tail = self._views_of(out)
        n = state.n
        if not 0 <= seat < n:
            raise ValueError(f"seat {seat!r} is not at this table: valid seats are 0..{n - 1}")
        config = state.config
        phase = state.phase
        in_combat = state.monster >= 0 and phase in IN_COMBAT_PHASES
        last_state, table = self.last_table
        if state is not last_state or table.config is not config or table.n != n:
            table = self._table_of(state, config, n, table)
        if _public(state) != table.public:
            _write_bases(state, table)
        sizes = _sizes(state)
        if sizes != table.sizes:
            _write_numbers(table, sizes, 0)
            table.sizes = sizes
        talks = _talks(state, in_combat)
        if talks != table.talks:
            offers, best, asks, last = talks
            _write_numbers(table, [*offers, *best, *asks, *last], 3 * n)
            table.talks = offers[:], best[:], asks[:], last[:]
        hand = state.hand[seat]
        if hand != table.hands[seat]:
            _write_hand(table, seat, hand)
        # The blocks in egocentric order: seats seat..n-1, then 0..seat-1; no blocks past the table. Then my
        # hand, and zeros for the rest.
        try:  # a memoryview copies only between equal formats and shapes: float32[OBSERVATION_SIZE]
            heads[n][:] = table.rotated[seat]
            if n < MAX_PLAYERS:
                view[n * PLAYER_BLOCK:HAND.start] = _ZEROS[n * PLAYER_BLOCK:HAND.start]
            tail[:] = table.tails[seat]
        except (ValueError, TypeError, NotImplementedError):
            raise ValueError(f"out must be a float32 array of shape ({OBSERVATION_SIZE},), "
                             f"got {getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}") from None
        # The role flags, each in the block of the one seat it marks (block r is seat + r).
        at = _BLOCK_AT[n][seat]
        if phase != OVER and state.active >= 0:
            view[at[state.active] + P_ACTIVE] = 1.0
        if in_combat:
            if state.fighter >= 0:
                view[at[state.fighter] + P_FIGHTER] = 1.0
            if state.helper >= 0:
                view[at[state.helper] + P_HELPER] = 1.0
            if state.ask_seat >= 0:
                view[at[state.ask_seat] + P_ASKED] = 1.0
        dying = state.dying
        if dying >= 0:
            view[at[dying] + P_DYING] = 1.0
        if phase == LOOT_PICK and state.looter >= 0:
            view[at[state.looter] + P_LOOTER] = 1.0
        if state.helped_by >= 0:
            view[at[state.helped_by] + P_HELPED] = 1.0
        # The rest is sparse: only its non-zero slots are written.
        view[PHASE.start + phase] = 1.0
        if phase != OVER and state.to_act == seat:
            view[MY_TURN] = 1.0
        if state.door_card >= 0:
            view[DOOR.start + state.door_card] = 1.0
        if in_combat:
            fighter, helper, rests = state.fighter, state.helper, table.rests
            key = (state.monster, state.monster_bonus, state.party_bonus, state.run_bonus, state.source,
                   rests[fighter], rests[helper] if helper >= 0 else None)
            if key != table.fight_key:
                _write_fight(state, table.fight)
                table.fight_key = key
            view[MONSTER.start:BAD.stop] = table.fight
            # The help talks' numbers, which change with nearly every offer and ask, are written here.
            if helper >= 0:
                view[COMBAT.start + C_SPLIT] = state.split / 5.0
            if phase == ASK:
                view[COMBAT.start + C_ASK_SPLIT] = state.ask_split / 5.0
            elif phase == COUNTER:
                view[COMBAT.start + C_BID] = state.bid / 5.0
        if dying >= 0:
            view[DEATH.start + state.death_kind - 1] = 1.0
        x = state.turn / config.max_turns
        view[TURN] = x if x < 1.0 else 1.0
        x = state.steps / config.max_steps
        view[STEPS] = x if x < 1.0 else 1.0
        if state.gold:
            x = state.gold / config.gold_per_level
            view[GOLD_SOLD] = x if x < 1.0 else 1.0
        if state.halfling_sold:
            view[HALFLING_SOLD] = 1.0
        if len(hand) > config.hand_limit:  # the seat's own limit is never below the config's
            over = len(hand) - hand_limit(state, seat)
            if over > 0:
                view[OVER_LIMIT] = over / 5.0 if over < 5 else 1.0


def encode(state: State, seat: int, out: np.ndarray) -> None:
    """Fill ``out`` (float32[OBSERVATION_SIZE]) with the observation of ``seat``, keeping nothing between
    calls (a fresh :class:`Observer` each time): a consumer that encodes again and again has its own
    Observer (``Game.make_observer``), as every env and search does."""
    Observer().encode(state, seat, out)


def encode_uncached(state: State, seat: int, out: np.ndarray) -> None:
    """:func:`encode` computed from the state alone, nothing kept between calls: the layout of the module
    docstring written out plainly. Slower; the tests hold :func:`encode` to it, decision by decision."""
    config = state.config
    n, phase = state.n, state.phase
    in_combat = state.monster >= 0 and phase in IN_COMBAT_PHASES
    out.fill(0.0)
    for r in range(n):
        who = (seat + r) % n
        block = _player_block(state, who)
        block[P_HAND] = min(1.0, len(state.hand[who]) / 10.0)
        block[P_DECK] = min(1.0, len(state.deck[who]) / 80.0)
        block[P_DISCARD] = min(1.0, len(state.discard[who]) / 80.0)
        block[P_ACTIVE] = phase != OVER and state.active == who
        block[P_FIGHTER] = in_combat and state.fighter == who
        block[P_HELPER] = in_combat and state.helper == who
        block[P_ASKED] = in_combat and state.ask_seat == who
        block[P_DYING] = state.dying == who
        block[P_LOOTER] = phase == LOOT_PICK and state.looter == who
        block[P_HELPED] = state.helped_by == who
        if in_combat:
            block[P_OFFERS] = min(1.0, state.offers_to[who] / config.help_rounds)
            block[P_BEST_OFFER] = (state.best_offer[who] + 1) / 6.0
            block[P_ASKS] = min(1.0, state.asks_from[who] / config.help_rounds)
            block[P_LAST_ASK] = (state.last_ask[who] + 1) / 6.0
        out[r * PLAYER_BLOCK:(r + 1) * PLAYER_BLOCK] = block
    for cid in set(state.hand[seat]):
        out[HAND.start + cid] = min(1.0, state.hand[seat].count(cid) / 4.0)
    out[PHASE.start + phase] = 1.0
    out[MY_TURN] = phase != OVER and state.to_act == seat
    if state.door_card >= 0:
        out[DOOR.start + state.door_card] = 1.0
    if in_combat:
        out[MONSTER.start:BAD.stop] = _fight_slots(state)
        out[COMBAT.start + C_SPLIT] = state.split / 5.0 if state.helper >= 0 else 0.0
        out[COMBAT.start + C_ASK_SPLIT] = state.ask_split / 5.0 if phase == ASK else 0.0
        out[COMBAT.start + C_BID] = state.bid / 5.0 if phase == COUNTER else 0.0
    if state.dying >= 0:
        out[DEATH.start + state.death_kind - 1] = 1.0
    out[TURN] = min(1.0, state.turn / config.max_turns)
    out[STEPS] = min(1.0, state.steps / config.max_steps)
    out[GOLD_SOLD] = min(1.0, state.gold / config.gold_per_level)
    out[HALFLING_SOLD] = state.halfling_sold
    out[OVER_LIMIT] = min(1.0, max(0, len(state.hand[seat]) - hand_limit(state, seat)) / 5.0)


# --- views -------------------------------------------------------------------------------------------------


def _key(cid: int) -> str | None:
    return CATALOG[cid].key if cid >= 0 else None


def _player_view(state: State, who: int) -> dict[str, Any]:
    return {
        "seat": who,
        "level": state.level[who],
        "race": RACE_NAMES[state.races[who]],
        "class": CLASSES[state.classes[who]],
        "deck": state.deck_names[who],
        "specialty": list(state.specialties[who]),
        "deck_bonus": state.static_bonus[who],
        "combat_level": combat_level(state, who),
        "run_bonus": run_bonus(state, who),
        "equipped": sorted(CATALOG[cid].key for cid in state.equipped[who]),
        "summon": _key(state.summon[who]),
        "hand_size": len(state.hand[who]),
        "hand_limit": hand_limit(state, who),
        "deck_size": len(state.deck[who]),
        "discard_size": len(state.discard[who]),
        "dead": state.dead[who],
        "paralyzed": state.paralyzed[who],
        "slowed": state.slow_turn[who] >= 0,
        "confused": state.confused_turn[who] >= 0,
    }


def event_text(event: tuple) -> str:
    """One public event as a sentence."""
    kind, seat, *rest = event
    who = f"player_{seat}"
    name = {cid: card.name for cid, card in enumerate(CATALOG)}.get
    if kind == "door":
        return f"{who} kicks open the door: {name(rest[0]) if rest[0] >= 0 else 'no card left'}"
    if kind == "fight":
        return f"{who} fights {name(rest[0])} (from {rest[1]})"
    if kind == "use":
        return f"{who} plays {name(rest[0])} on the {rest[1]} ({rest[2]:+d})"
    if kind == "summon":
        return f"{who} sends the summon {name(rest[0])} to the {rest[1]} side ({rest[2]:+d})"
    if kind == "offer":
        return f"{who} offers player_{rest[0]} {_treasures(rest[1])} for help"
    if kind == "ask":
        return f"{who} asks player_{rest[0]} for {_treasures(rest[1])} to help"
    if kind == "deal":
        return f"deal: player_{rest[0]} helps {who} for {_treasures(rest[1])}"
    if kind == "no_deal":
        return f"{who} breaks off the help talks with player_{rest[0]}"
    if kind == "loot_none":
        return f"{who} takes nothing from player_{rest[0]}'s body"
    if kind == "win":
        return f"{who} defeats {name(rest[0])} ({rest[1]} vs {rest[2]}) and gains {rest[3]} level(s)"
    if kind == "treasure":
        shared = f", {rest[1]} to player_{rest[2]}" if rest[2] >= 0 else ""
        return f"{who} draws {rest[0]} treasure(s){shared}"
    if kind == "run":
        return f"{who} runs from {name(rest[0])}: rolls {rest[1]} (total {rest[2]}): " + \
            ("escapes" if rest[3] else "caught")
    if kind == "bad_stuff":
        return f"{who} suffers the Bad Stuff of {name(rest[0])}: {rest[1].replace('_', ' ')}"
    if kind == "curse":
        return f"{who} plays {name(rest[0])} on player_{rest[1]}"
    if kind == "lose_item":
        return f"{who} loses {name(rest[0])}"
    if kind == "death":
        return f"{who} dies ({rest[0]})"
    if kind == "loot":
        return f"{who} loots {name(rest[1])} from player_{rest[0]}"
    if kind == "loot_hand":
        return f"{who} draws {rest[1]} card(s) from player_{rest[0]}'s hand"
    if kind == "equip":
        return f"{who} equips {name(rest[0])}"
    if kind == "sell":
        return f"{who} sells {name(rest[0])} for {rest[1]} gp" + (f" and gains {rest[2]} level(s)" if rest[2] else "")
    if kind == "discard":
        return f"{who} discards {name(rest[0])}"
    if kind == "first":
        return f"{who} rolled highest and goes first"
    if kind == "reenter":
        return f"{who} re-enters the game with a new hand"
    if kind == "paralyzed":
        return f"{who} is paralysed and loses the turn"
    if kind == "reshuffle":
        return f"{who} shuffles the discard pile into the deck"
    if kind == "end":
        return f"game over: player_{seat} wins" if seat >= 0 else f"game over: {rest[0].replace('_', ' ')}"
    return " ".join(map(str, event))


def events(state: State, seat: int) -> tuple[int, list[str]]:
    """``(decisions played, the public events of the latest one)``: a frontend (``tavernzoo play``) prints
    each decision's events once, when the count moves, and so keeps the whole history. Every Wyvern event
    is public, so ``seat`` changes nothing; before the first decision: the deal."""
    new = min(state.events_logged - state.step_first_event, len(state.events))
    return state.steps, [event_text(event) for event in state.events[len(state.events) - new:]]


VIEW_FIELDS = {
    "players": "one entry per seat, in seat order; > marks you",
    "phase": "setup, reenter (a dead player comes back), free (out of combat), window (a combat: anyone may "
             "play cards), ask / counter (help talks), loot_order / loot_pick (looting a dead player), discard "
             "(down to the hand limit), over",
    "to_act": "the seat that decides now",
    "active": "whose turn it is",
    "specialty": "the deck's declared specialties (their combat bonuses apply)",
    "deck_bonus": "the deck's standing combat bonus (specialty and good-versus-evil)",
    "combat_level": "level plus equipped bonuses: the player's strength in a fight",
    "run_bonus": "added to the d6 when running away",
    "equipped": "cards in play for that player",
    "summon": "the player's summon monster, if set aside",
    "hand_limit": "cards the player may hold",
    "dead": "dead until their next turn",
    "paralyzed": "loses their next turn",
    "slowed": "slowed by a curse this turn",
    "confused": "confused by a curse this turn",
    "hand": "your cards",
    "offsets": "which player each seat offset in action names (+1, +2, ...) means",
    "door_card": "the card kicked open from the door this turn",
    "combat": "the fight: the monster, its level, the fighter and helper, the treasure split, the talks, the "
              "bonuses played on each side, both strengths and whether the party wins now",
    "looting": "a dead player's items being looted: who is dead, who picks now, who still may",
    "gold_this_turn": "gold from items sold this turn (levels bought at the table's price per level)",
    "order_rolls": "the opening d6 rolls for the turn order, one list per round of rolling, by seat",
    "first_seat": "the seat that took the first turn",
    "events": "the table's latest events",
}
"""What the view's less obvious entries mean (shown to language models beside the view)."""

EVENT_COUNTED_FIELDS = ("deck_size", "discard_size", "door_card", "talks", "combat.talking_with",
                        "combat.pending_offer", "combat.pending_ask", "combat.fighter", "combat.source",
                        "combat.helper", "combat.split", "combat.table")
"""Entries of the view that event lines move or state word for word (a kick and its door card, a draw, a sale; each
offer and ask of the help talks, so who talks and what is offered or asked now; who fights what from where, the
deal that makes a helper, each card played in the fight): a language model's view of what changed
(agents/text_views.py ``view_changes``) leaves them out, its whole view shows them."""

CARD_TEXT_FIELDS = ("combat.level", "combat.levels", "combat.treasures", "combat.bad_stuff")
"""A fight's numbers that its monster's card text gives (level, reward, Bad Stuff): a language model is told every
card's text, so its view of what changed names the monster and leaves these out; its whole view shows them."""


def view(state: State, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may see, JSON-serialisable: the public table and its own hand."""
    combat = None
    if state.monster >= 0 and state.phase in IN_COMBAT_PHASES:
        monster = state.monster
        combat = {
            "monster": CATALOG[monster].key,
            "level": LEVEL[monster],
            "levels": LEVELS[monster],
            "treasures": TREASURES[monster],
            "bad_stuff": CATALOG[monster].bad,
            "source": SOURCE_NAMES[state.source],
            "fighter": state.fighter,
            "helper": state.helper if state.helper >= 0 else None,
            "split": state.split,
            "talking_with": state.ask_seat if state.ask_seat >= 0 else None,
            "pending_offer": state.ask_split if state.phase == ASK else None,
            "pending_ask": state.bid if state.phase == COUNTER else None,
            "talks": {f"player_{who}": {"offers": state.offers_to[who], "best_offer": state.best_offer[who],
                                        "asks": state.asks_from[who], "last_ask": state.last_ask[who]}
                      for who in range(state.n) if state.offers_to[who] or state.asks_from[who]},
            "monster_bonus": state.monster_bonus,
            "party_bonus": state.party_bonus,
            "monster_strength": monster_strength(state),
            "party_strength": party_strength(state),
            "party_wins": party_wins(state),
            "table": [[owner, CATALOG[cid].key] for owner, cid in state.table],
        }
    looting = None
    if state.phase in (LOOT_ORDER, LOOT_PICK):
        looting = {"dead": state.dying, "kind": "levels" if state.death_kind == 1 else "eaten",
                   "looter": state.looter if state.phase == LOOT_PICK else None,
                   "still_to_loot": sorted(state.looters)}
    return {
        "you": seat,
        "num_players": state.n,
        "phase": PHASE_NAMES[state.phase],
        "to_act": state.to_act if state.phase != OVER else None,
        "active": state.active,
        "turn": state.turn,
        "max_turns": state.config.max_turns,
        "win_level": state.config.win_level,
        "players": [_player_view(state, who) for who in range(state.n)],
        "hand": sorted(CATALOG[cid].key for cid in state.hand[seat]),
        "offsets": {f"+{r}": f"player_{(seat + r) % state.n}" for r in range(1, state.n)},
        "door_card": _key(state.door_card),
        "combat": combat,
        "looting": looting,
        "gold_this_turn": state.gold,
        "order_rolls": [list(r) for r in state.order_rolls],
        "first_seat": state.first_seat if state.first_seat >= 0 else None,
        "events": [event_text(e) for e in state.events[-12:]],
        "winner": state.winner if state.phase == OVER and state.winner >= 0 else None,
        "end_reason": state.end_reason or None,
    }


LEGEND = ("legend: > decides now, * has the turn, L level, (combat N) combat level out of combat, "
          "hand n/m cards held and the hand limit, † dead until their next turn, P paralysed, S slowed, "
          "C confused")


def render(state: State, seat: int | None = None) -> str:
    """The table as text. ``seat=None`` shows everything, every hand included (logs, replays); a seat sees
    only its own hand, as in play."""
    title = f"Wyvern TCG — turn {state.turn}/{state.config.max_turns}, phase {PHASE_NAMES[state.phase]}"
    lines = [title + (f", you are player_{seat}" if seat is not None else "")]
    for who in range(state.n):
        p = _player_view(state, who)
        marker = ">" if state.phase != OVER and state.to_act == who else " "
        marker += "*" if state.phase != OVER and state.active == who else " "
        status = "".join(flag for flag, on in (("†", p["dead"]), ("P", p["paralyzed"]), ("S", p["slowed"]),
                                                 ("C", p["confused"])) if on)
        worn = ", ".join(p["equipped"]) or "nothing"
        held = f"hand {p['hand_size']}/{p['hand_limit']}"
        if seat is None or seat == who:
            held += ": " + (", ".join(sorted(CATALOG[cid].key for cid in state.hand[who])) or "-")
        you = " (you)" if seat == who else ""
        lines.append(f"{marker}player_{who}{you} L{p['level']:>2} (combat {p['combat_level']:>2}) "
                     f"{p['race']}/{p['class']} {status} deck {p['deck']} | {held} | in play: {worn}")
    if state.monster >= 0 and state.phase in IN_COMBAT_PHASES:
        helper = f" + player_{state.helper} (for {_treasures(state.split)})" if state.helper >= 0 else ""
        lines.append(f"  combat: player_{state.fighter}{helper} ({party_strength(state)}) vs "
                     f"{CATALOG[state.monster].name} ({monster_strength(state)}), "
                     f"{_treasures(TREASURES[state.monster])} at stake")
        if state.phase == ASK:
            lines.append(f"  talks: player_{state.fighter} offers player_{state.ask_seat} "
                         f"{_treasures(state.ask_split)} for help")
        elif state.phase == COUNTER:
            lines.append(f"  talks: player_{state.ask_seat} asks player_{state.fighter} for "
                         f"{_treasures(state.bid)} to help")
    for event in state.events[-6:]:
        lines.append(f"  {event_text(event)}")
    lines.append(LEGEND)
    if seat is not None:
        lines.append("seat offsets in action names: " + ", ".join(
            f"+{r} = player_{(seat + r) % state.n}" for r in range(1, state.n)))
    return "\n".join(lines)


# --- card texts: what a frontend shows beside a card -----------------------------------------------------

_CURSE_TEXT = {
    "lose_level": "the victim loses {amount} level{s}",
    "lose_helm": "the victim loses the helm they wear",
    "lose_armor": "the victim loses the armor they wear",
    "lose_boots": "the victim loses the boots they wear",
    "lose_weapons": "the victim loses every weapon they hold",
    "lose_race": "the victim loses their race (humans are immune)",
    "paralysis": "the victim loses their next turn (pixies are immune)",
    "slow": "-2 to run away until the end of the victim's next turn (pixies are immune)",
    "confusion": "-3 combat level until the end of the victim's next turn (pixies are immune)",
}
_BAD_TEXT = {
    "lose_levels": "lose {amount} level{s}",
    "lose_helm": "lose your helm",
    "lose_armor": "lose your armor",
    "lose_boots": "lose your boots",
    "lose_weapons": "lose your weapons",
    "lose_best": "lose your best item in play",
    "lose_all_items": "lose every item in play",
    "death": "death: you are eaten (you keep your level; the others may loot your body)",
}
_KIND_TEXT = {"weapon": "weapon", "helm": "helm", "armor": "armor", "boots": "boots", "big": "big item",
              "potion": "potion (one use)", "scroll": "scroll (one use)", "wand": "wand (one use)",
              "enhancer": "monster enhancer", "curse": "curse"}


def card_text(key: str) -> str:
    """One catalog card in words (after its name): an item's kind, slot and bonuses, a monster's level,
    reward and Bad Stuff, what a curse does (docs/rules/wyvern.md), by the card's key."""
    card = CATALOG[_CID_OF[key]]
    amount = {"amount": card.amount, "s": "" if card.amount == 1 else "s"}
    if card.is_monster:
        reward = f"{card.levels} level{'' if card.levels == 1 else 's'}, {card.treasures} treasure" + (
            "" if card.treasures == 1 else "s")
        undead = "; undead (a cleric fights it at +3)" if "undead" in card.tags else ""
        return (f"level {card.level} monster; beaten: {reward}; Bad Stuff: "
                f"{_BAD_TEXT[card.bad].format(**amount)}{undead}")
    if card.kind == "curse":
        return _CURSE_TEXT[card.effect].format(**amount)
    parts = []
    if card.kind == "weapon":
        parts.append(f"{'one' if card.hands == 1 else 'two'}-handed {card.weapon} weapon")
    else:
        parts.append(_KIND_TEXT[card.kind])
    if card.kind == "enhancer":
        parts.append(f"+{card.bonus} to a monster in combat")
    elif card.kind in ("potion", "scroll", "wand"):
        parts.append(f"+{card.bonus} to the side it is played on, this combat" if card.bonus else "")
    elif card.bonus:
        parts.append(f"+{card.bonus} combat level while in play")
    if card.run:
        parts.append(f"+{card.run} to run away")
    if card.big and card.kind != "big":
        parts.append("big (only a dwarf may have two in play)")
    flavour = [word for word in (card.element, card.alignment) if word != "none"]
    if flavour:
        parts.append(" and ".join(flavour))
    parts.append(f"sells for {card.gold} gp" if card.gold else "cannot be sold")
    return ", ".join(part for part in parts if part)


_CID_OF = {card.key: card.cid for card in CATALOG}


def trait_texts(config: Config | None = None) -> dict[str, str]:
    """Each race's and class's ability under ``config`` (docs/rules/wyvern.md, "Races and classes"), by the
    names the view shows; "magic" is added to every potion, scroll or wand its player plays."""
    config = config if config is not None else Config()
    tie = "wins ties as the fighter" + (" or a helper" if config.paladin_helper_wins_ties else "")
    return {
        "human": "race: +1 combat, +1 magic, immune to Lose your race",
        "elf": "race: +1 to run away, +1 level for helping win a fight",
        "halfling": "race: -1 to run away, one sale a turn at double value",
        "naga": "race: -1 to run away, +1 combat, +1 magic",
        "rakshasa": "race: +1 combat, and +1 more for every 5 levels after level 1",
        "giant": "race: +1 combat, two-handed weapons in one hand",
        "pixie": "race: +1 magic, immune to paralysis, slow and confusion",
        "dwarf": f"race: hand limit {config.hand_limit + 1} (one more than others), any number of big items",
        "paladin": f"class: {tie}",
        "warrior": "class: +2 combat when fighting alone",
        "wizard": "class: +1 magic, +1 to run away",
        "thief": "class: +2 to every card played on the monster (backstab)",
        "cleric": "class: +3 combat against undead",
    }


def card_texts(config: Config | None = None) -> dict[str, str]:
    """:func:`card_text` of every catalog card, by key (the web page shows them beside the cards)."""
    return {card.key: card_text(card.key) for card in CATALOG}


def table_cards(config: Config) -> frozenset[str]:
    """The cards that can come into play at a table under ``config``: those of the decks its seats bring (the
    adventurer deck where ``decks`` names none, as the rules deal; every bundled deck where a seat's is random).
    A language model is told these cards' texts (agents/text_views.py ``SeatView.all_cards``), not the whole
    catalog's: a card that no deck at the table holds never shows."""
    names = config.decks or ("adventurer",) * config.num_players
    if "random" in names:
        names = (*names, *bundled_decks())
    keys: set[str] = set()
    for name in dict.fromkeys(name for name in names if name != "random"):
        keys.update(CATALOG[cid].key for cid in load_deck(name).cards)
    return frozenset(keys)
