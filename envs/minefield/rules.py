"""Minefield — the rules engine (pure Python: no gymnasium, pettingzoo or torch).

The rulebook (shared/seeds/002_*.txt) is a chat game run by a host; here the host is automated and
every host step happens inside :func:`apply_joint`. docs/rules/minefield.md marks every interpretation.

* 2 to 20 players; the last player standing wins.
* A round: every living player secretly picks one living opponent to attack (simultaneous moves).
  Then the host rolls the mine numbers: a d10 and a pick of *beginning* or *end*
  (:func:`mine_numbers`: exactly 10 numbers in 1-100), and carries out the attacks one by one, in a
  random order (``attack_order="random"``) or in seat order.
* A battle is d100 vs d100. The attacker rolls first; a mine eliminates the attacker at once and the
  defender does not roll. Otherwise the defender rolls; a mine eliminates the defender whatever the
  attacker rolled. Otherwise (``roll_battle="loser_out"``, the default interpretation) the lower roll is
  eliminated and a tie is re-rolled by both, mines applying to the re-rolls; with
  ``roll_battle="mines_only"`` only mines eliminate. An attack whose attacker or defender was eliminated
  earlier in the round is void.
* Finals: with two players left, the round is a battle that goes on until one of them is eliminated;
  its mines follow ``finals_mines`` (roll as any round, a fresh set, or keep the last round's).
* Variants: ``variant="simple"`` (mines rolled once, at game start), ``"stacked"`` (each round's roll is
  added to the mines already there), ``double_whammy=True`` (every mine roll is two rolls, their
  union; overlapping numbers count once).

Actions: ``target:<seat>`` is action ``<seat>`` (:func:`action_names`), legal for a living player
against any other living player.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from ..core import Chance, IllegalActionError, check_choice, check_range, option

MIN_PLAYERS, MAX_PLAYERS = 2, 20

VARIANTS = ("standard", "simple", "stacked")
ATTACK_ORDERS = ("random", "seat")
ROLL_BATTLES = ("loser_out", "mines_only")
FINALS_MINES = ("round", "new", "keep")
REWARD_SCHEMES = ("winner", "placement")

# How the host's ".pick beginning, end" came out.
BEGINNING, END = 0, 1
SIDE_NAMES = ("beginning", "end")

# What became of one attack.
VOID, ATTACKER_MINE, DEFENDER_MINE, ATTACKER_WON, DEFENDER_WON, STANDOFF = range(6)
OUTCOME_NAMES = ("void", "attacker_mine", "defender_mine", "attacker_won", "defender_won", "standoff")

# Why a game ended.
LAST_STANDING, ROUND_LIMIT = "last_standing", "round_limit"


# --- mine numbers ------------------------------------------------------------------------------------


def mine_numbers(d: int, side: int) -> tuple[int, ...]:
    """The 10 mine numbers for a d10 showing ``d`` and the pick ``side`` (BEGINNING or END), ascending.

    Beginning with d (1-9): 10d..10d+9; beginning with 10: 1-9 and 100.
    End with d (1-9): d, 10+d, ..., 90+d; end with 10: 10, 20, ..., 100.
    """
    if not 1 <= d <= 10 or side not in (BEGINNING, END):
        raise ValueError(f"no mine set for d10={d!r}, side={side!r}")
    if side == BEGINNING:
        return (*range(1, 10), 100) if d == 10 else tuple(range(10 * d, 10 * d + 10))
    return tuple(range(10, 101, 10)) if d == 10 else tuple(range(d, 100, 10))


def _bits(numbers: tuple[int, ...]) -> int:
    value = 0
    for number in numbers:
        value |= 1 << number
    return value


# Mine sets as bit masks (bit k set: number k is a mine), by (d, side).
MINE_BITS = {(d, side): _bits(mine_numbers(d, side)) for d in range(1, 11) for side in (BEGINNING, END)}


def mines_as_numbers(mines: int) -> list[int]:
    """The numbers of a mine bit mask, ascending."""
    return [number for number in range(1, 101) if mines >> number & 1]


# --- configuration -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Options of one Minefield game; every value is checked, bad ones raise ValueError."""

    num_players: int = option(8, "players at the table (2-20)")
    variant: str = option(
        "standard", "mines: new each round (standard), rolled once at game start (simple), or each "
        "round's roll added to the ones already there (stacked)", choices=VARIANTS,
    )
    double_whammy: bool = option(
        False, "Double Whammy: every mine roll is two rolls, their union (with variant=simple: at game "
        "start only; otherwise every round)", choices=(False, True),
    )
    attack_order: str = option("random", "order the host carries out a round's attacks in", choices=ATTACK_ORDERS)
    roll_battle: str = option(
        "loser_out", "without a mine the lower roll is eliminated and ties re-roll (loser_out), or only mines "
        "eliminate (mines_only); the rulebook's text on this is missing", choices=ROLL_BATTLES,
    )
    finals_mines: str = option(
        "round", "the finals' mines: rolled as for any round of the variant (round), a fresh roll (new), "
        "or the last round's kept (keep)", choices=FINALS_MINES,
    )
    rewards: str = option(
        "winner", "winner: +1 to the winner, -1/(N-1) to everyone else; placement: 1 - 2(place-1)/(N-1)",
        choices=REWARD_SCHEMES,
    )
    max_rounds: int = option(100, "rounds after which the game is cut off (matters with roll_battle=mines_only)")

    def __post_init__(self) -> None:
        if isinstance(self.num_players, bool) or not isinstance(self.num_players, int):
            raise ValueError(f"num_players must be an integer, got {self.num_players!r}")
        check_range("num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        check_choice("variant", self.variant, VARIANTS)
        if not isinstance(self.double_whammy, bool):
            raise ValueError(f"double_whammy={self.double_whammy!r} is not valid; choose one of: False, True")
        check_choice("attack_order", self.attack_order, ATTACK_ORDERS)
        check_choice("roll_battle", self.roll_battle, ROLL_BATTLES)
        check_choice("finals_mines", self.finals_mines, FINALS_MINES)
        check_choice("rewards", self.rewards, REWARD_SCHEMES)
        if isinstance(self.max_rounds, bool) or not isinstance(self.max_rounds, int):
            raise ValueError(f"max_rounds must be an integer, got {self.max_rounds!r}")
        check_range("max_rounds", self.max_rounds, 1)


# --- state -------------------------------------------------------------------------------------------

# One resolved attack: (attacker, defender, outcome, rolls); rolls holds one (attacker's d100,
# defender's d100) pair per attempt, the defender's 0 when it did not roll; () for a void attack.
Battle = tuple[int, int, int, tuple[tuple[int, int], ...]]


@dataclass(slots=True)
class State:
    """Everything about one game. Nothing is hidden: the only secret is a round's moves, not yet made."""

    config: Config
    chance: Chance
    alive: list[bool]
    num_alive: int
    mines: int = 0  # bit mask of the mine numbers in effect (bit k: number k); 0 before any roll
    round: int = 0  # rounds played
    out_order: list[int] = field(default_factory=list)  # seats in the order they were eliminated
    values: list[float] = field(default_factory=list)  # each seat's return, set when its place is known
    over: bool = False
    truncated: bool = False
    winner: int = -1
    end_reason: str = ""
    # The last round, as the host announced it (read by observations, views and renderers):
    last_targets: tuple[int, ...] = ()  # per seat: whom it attacked, -1 if it did not attack
    last_order: tuple[int, ...] = ()  # attackers in the order their attacks were carried out
    last_battles: tuple[Battle, ...] = ()  # in that order
    last_mine_rolls: tuple[tuple[int, int], ...] = ()  # (d10, side) rolled for that round (or at start)
    last_eliminated: tuple[int, ...] = ()


def num_seats(config: Config) -> int:
    return config.num_players


@cache
def action_names(config: Config) -> tuple[str, ...]:
    """The actions' stable names: ``target:<seat>`` is action ``<seat>``."""
    return tuple(f"target:{seat}" for seat in range(config.num_players))


def round_limit(config: Config) -> int:
    """The most rounds a game can last: each loser_out round eliminates at least one player."""
    if config.roll_battle == "loser_out":
        return min(config.max_rounds, config.num_players - 1)
    return config.max_rounds


def max_game_length(config: Config) -> int:
    """The most decisions (agent steps) in one game: every living player decides once per round."""
    n, rounds = config.num_players, round_limit(config)
    if config.roll_battle == "loser_out":  # round r has at most n - r + 1 players alive
        return sum(n - r + 1 for r in range(1, rounds + 1))
    return rounds * n


def new_game(config: Config, chance: Chance) -> State:
    """Seat everyone; under the Simple variant the host rolls the game's mines now."""
    n = config.num_players
    state = State(config=config, chance=chance, alive=[True] * n, num_alive=n, values=[0.0] * n,
                  last_targets=(-1,) * n)
    if config.variant == "simple":
        state.mines, state.last_mine_rolls = _roll_mines(state)
    return state


# --- the game's flow ---------------------------------------------------------------------------------


def acting_seats(state: State) -> tuple[int, ...]:
    """The seats that choose a target this round (every living player), empty once the game is over."""
    if state.over:
        return ()
    return tuple(seat for seat, living in enumerate(state.alive) if living)


def legal_actions(state: State, seat: int) -> list[int]:
    """Targets ``seat`` may attack (every other living player), ascending; empty if it does not act."""
    alive = state.alive
    if state.over or not alive[seat]:
        return []
    return [other for other, living in enumerate(alive) if living and other != seat]


def seats_out(state: State) -> tuple[int, ...]:
    """Seats eliminated so far, in order."""
    return tuple(state.out_order)


def apply_joint(state: State, joint: dict[int, int]) -> None:
    """Play one round: ``joint`` maps every living seat to its target. The host then rolls the mines
    and carries out the attacks. Raises IllegalActionError, changing nothing, for a missing or extra
    seat or an illegal target."""
    _check_joint(state, joint)
    config, chance, alive = state.config, state.chance, state.alive
    n = config.num_players
    attackers = [seat for seat in range(n) if alive[seat]]
    targets = [-1] * n
    for seat in attackers:
        targets[seat] = int(joint[seat])
    finals = state.num_alive == 2

    # Phase 1: the mine numbers.
    rolls: tuple[tuple[int, int], ...] = ()
    if finals and config.finals_mines != "round":
        if config.finals_mines == "new" or state.mines == 0:  # nothing to keep in a two-player game
            state.mines, rolls = _roll_mines(state)
    elif config.variant == "standard":
        state.mines, rolls = _roll_mines(state)
    elif config.variant == "stacked":
        fresh, rolls = _roll_mines(state)
        state.mines |= fresh
    # simple: the mines rolled at game start stay

    # Phase 2: the attacks, one by one.
    order = attackers[:]
    if config.attack_order == "random":
        chance.shuffle(order)
    loser_out = config.roll_battle == "loser_out"
    mines = state.mines
    battles = []
    eliminated = []
    for attacker in order:
        defender = targets[attacker]
        if not (alive[attacker] and alive[defender]):
            battles.append((attacker, defender, VOID, ()))
            continue
        outcome, battle_rolls = resolve_battle(chance, mines, loser_out, until_elimination=finals)
        battles.append((attacker, defender, outcome, battle_rolls))
        if outcome == ATTACKER_MINE or outcome == DEFENDER_WON:
            _eliminate(state, attacker)
            eliminated.append(attacker)
        elif outcome == DEFENDER_MINE or outcome == ATTACKER_WON:
            _eliminate(state, defender)
            eliminated.append(defender)

    state.round += 1
    state.last_targets = tuple(targets)
    state.last_order = tuple(order)
    state.last_battles = tuple(battles)
    state.last_mine_rolls = rolls if rolls or config.variant != "simple" else state.last_mine_rolls
    state.last_eliminated = tuple(eliminated)
    if state.num_alive == 1:
        state.winner = alive.index(True)
        state.values[state.winner] = place_value(config, 1)
        state.over, state.end_reason = True, LAST_STANDING
    elif state.round >= config.max_rounds:
        # Cut off: the survivors share the values of the places still open.
        survivors = state.num_alive
        shared = sum(place_value(config, place) for place in range(1, survivors + 1)) / survivors
        for seat in attackers:
            if alive[seat]:
                state.values[seat] = shared
        state.over, state.truncated, state.end_reason = True, True, ROUND_LIMIT


def resolve_battle(chance: Chance, mines: int, loser_out: bool = True,
                   until_elimination: bool = False) -> tuple[int, tuple[tuple[int, int], ...]]:
    """One battle, d100 vs d100, under the mine bit mask ``mines``: ``(outcome, rolls)``.

    The attacker rolls first: a mine eliminates it and the defender does not roll. Then the defender:
    a mine eliminates it whatever the attacker rolled. Otherwise, with ``loser_out``, the lower roll is
    eliminated and a tie is re-rolled by both (mines apply to re-rolls); without it only mines
    eliminate, and the battle ends in a STANDOFF unless ``until_elimination`` (the finals) re-rolls it.
    """
    rolls = []
    while True:
        attack = chance.below(100) + 1
        if mines >> attack & 1:
            rolls.append((attack, 0))
            return ATTACKER_MINE, tuple(rolls)
        defence = chance.below(100) + 1
        rolls.append((attack, defence))
        if mines >> defence & 1:
            return DEFENDER_MINE, tuple(rolls)
        if loser_out:
            if attack > defence:
                return ATTACKER_WON, tuple(rolls)
            if defence > attack:
                return DEFENDER_WON, tuple(rolls)
        elif not until_elimination:
            return STANDOFF, tuple(rolls)


def _roll_mines(state: State) -> tuple[int, tuple[tuple[int, int], ...]]:
    """The host's ``.roll 10`` and ``.pick beginning, end`` (twice with Double Whammy): (mask, rolls)."""
    chance = state.chance
    rolls = []
    mines = 0
    for _ in range(2 if state.config.double_whammy else 1):
        d = chance.below(10) + 1
        side = chance.below(2)
        rolls.append((d, side))
        mines |= MINE_BITS[d, side]
    return mines, tuple(rolls)


def _eliminate(state: State, seat: int) -> None:
    state.alive[seat] = False
    state.num_alive -= 1
    state.out_order.append(seat)
    # Everyone still alive finishes ahead of this seat.
    state.values[seat] = place_value(state.config, state.num_alive + 1)


def place_value(config: Config, place: int) -> float:
    """The return for finishing in ``place`` (1 = the winner)."""
    n = config.num_players
    if config.rewards == "winner":
        return 1.0 if place == 1 else -1.0 / (n - 1)
    return 1.0 - 2.0 * (place - 1) / (n - 1)


def _check_joint(state: State, joint: dict[int, int]) -> None:
    acting = acting_seats(state)
    if len(joint) != len(acting) or any(seat not in joint for seat in acting):
        missing = [seat for seat in acting if seat not in joint]
        extra = sorted(seat for seat in joint if seat not in acting)
        raise IllegalActionError(
            joint, [f"seat {seat}" for seat in acting],
            f"a round needs one target from each living seat; missing seats {missing}, extra seats {extra}",
        )
    alive, n = state.alive, state.config.num_players
    for seat in acting:
        target = joint[seat]
        if isinstance(target, bool) or not isinstance(target, int) or not (
            0 <= target < n and alive[target] and target != seat
        ):
            # (a bool target is named as written, target:True: it is no seat)
            name = f"target:{target}" if isinstance(target, int) and 0 <= target < n else target
            names = action_names(state.config)
            raise IllegalActionError(
                name, [names[other] for other in legal_actions(state, seat)], f"seat {seat}"
            )


def is_terminal(state: State) -> bool:
    return state.over


def is_truncated(state: State) -> bool:
    """True when ``max_rounds`` cut the game off with more than one player standing."""
    return state.truncated


def returns(state: State) -> tuple[float, ...]:
    """Each seat's return: set the moment its place is known (an eliminated seat's at once), else 0."""
    return tuple(state.values)


# --- search: clone and determinize (agents/mcts.py; docs/search.md) ---------------------------------------

from ..core import clone_state as _clone_state  # noqa: E402 - kept with the section it serves

# Nothing is hidden in Minefield but the round's moves (not yet made) and future dice.
HIDDEN_FIELDS: frozenset[str] = frozenset()
PUBLIC_FIELDS = frozenset(("config", "chance", "alive", "num_alive", "mines", "round", "out_order", "values", "over",
                           "truncated", "winner", "end_reason", "last_targets", "last_order", "last_battles",
                           "last_mine_rolls", "last_eliminated"))


def clone(state: State, chance: Chance | None = None) -> State:
    """A copy sharing nothing mutable (its Chance copied too, or ``chance`` in its place)."""
    return _clone_state(state, chance)


def determinize(state: State, seat: int, chance: Chance) -> State:
    """A full state consistent with what ``seat`` has seen: only future dice differ, drawn from a fresh
    Chance seeded from ``chance``."""
    return clone(state, Chance(chance.below(2**31)))


def information_state(state: State, seat: int) -> State:
    """What ``seat`` knows as a State (here everything but future dice: the Chance is blank)."""
    return determinize(state, seat, Chance(0))
