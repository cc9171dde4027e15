"""``mcts`` in compiled code: the search tree as arrays, its walk, backup and choice, for any game with a kernel.

A game whose kernel (``envs/<game>/kernel.py``) can determinize, list legal actions and play them declares a
compiled search in its bots' kernel module (``SEARCH_KERNEL``, a :class:`GameSearchKernel`; the game's
``SEARCH`` hooks name that module: agents/search_hooks.py ``kernel``). Its simulation loop is a few lines
of the game's own (sample, walk, roll out, score, back up: agents/ministeel_kernel.py
``ministeel_simulations``) around the functions here, which know nothing of any game:

* the tree: ``nodes`` (int64, one row of :data:`NODE_FIELDS` per node: visits, availability, the prior's
  move, the action that led there, the node's row of ``children``, its first child, next sibling and last
  child), ``totals`` (float64, one total per seat per node), ``children`` (int32, one row of the game's
  action count per node that has children: the child reached by each action, -1 none) and ``counts``
  (nodes and children rows in use). Node 0 is the root.
* :func:`tree_step`: one step of a simulation's walk, exactly ``MCTSBot._simulate``'s: availability counts,
  an untried action expanded (the prior's move first, else a random one), else UCB1 with the prior's bias;
* :func:`tree_backup`; :func:`tree_best`: the most visited root action, ties to the higher total, then to
  the first expanded;
* :func:`randbelow`: ``random.Random.randrange(n)`` word for word, on the bot's own generator.

The same streams as the Python search: the dealer (the sample's cards and dice: ``SearchChance``) and the
bot's ``random.Random`` (untried actions, random rollout moves) run the generators of envs/compiled.py, so
the compiled search of a seed visits exactly what the Python search of that seed visits (the test checks
moves and visit counts at equal simulations), and the bot's generator is handed back advanced as the
Python search would have left it (a :class:`KernelRandom` keeps its state in the search's words until Python
needs it). :class:`CompiledSearch` is the Python side: the arrays, kept and grown
between moves, and calls of the game's loop in chunks, between which the time limit and ``close()`` are
checked.
"""

from __future__ import annotations

import array
import math
import os
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..envs.compiled import GENERATOR, MT_SIZE, Kernel, next_word, seed_generator

PRIOR_BIAS = 1.0  # as agents/mcts.py's: the prior's move scores this much extra, shrinking as 1 / (its visits + 1)

# A node's fields (a row of ``nodes``).
VISITS, AVAIL, PRIOR, ACTION, BLOCK, FIRST_CHILD, NEXT_SIBLING, LAST_CHILD = range(8)
NODE_FIELDS = 8
NOT_ASKED, NO_PRIOR = -2, -1  # PRIOR before the prior is asked at the node; where there is none
# ``counts``: rows in use.
NODES, BLOCKS = range(2)

# Rollout policies and priors a game's loop knows: RANDOM (``rng``'s moves; for a prior: none), then the
# game's own compiled bots, numbered from 1 (GameSearchKernel.policies).
RANDOM = 0


def _argument_types() -> dict:
    """The numba types of the tree's parameters, by name (every other parameter is an int64)."""
    from numba import types

    return {"nodes": types.int64[:, ::1], "totals": types.float64[:, ::1], "children": types.int32[:, ::1],
            "counts": types.int64[::1], "rng": types.uint32[::1], "legal": types.int64[::1],
            "path": types.int64[::1], "values_row": types.float64[::1], "explore": types.float64}


TREE = Kernel(_argument_types, includes=(GENERATOR,))


@TREE.inlined
def randbelow(rng, n):
    """``random.Random.randrange(n)`` for ``1 <= n < 2**32``: CPython's ``_randbelow_with_getrandbits``, the top
    ``n.bit_length()`` bits of a word (``getrandbits``), drawn again while not below ``n``."""
    bits = 0
    while (n >> bits) > 0:
        bits += 1
    r = next_word(rng) >> (32 - bits)
    while r >= n:
        r = next_word(rng) >> (32 - bits)
    return r


@TREE.compiled
def draw_word(rng):
    """The generator's next 32-bit output (a Python draw served from a search's words: :class:`KernelRandom`)."""
    return next_word(rng)


@TREE.compiled
def draw_below(rng, n):
    """:func:`randbelow` called from Python (:class:`KernelRandom`)."""
    return randbelow(rng, n)


@TREE.compiled
def tree_clear(nodes, totals, counts):
    """An empty tree: the root alone."""
    counts[NODES] = 1
    counts[BLOCKS] = 0
    _node_init(nodes, totals, 0, -1)


@TREE.inlined
def _node_init(nodes, totals, node, action):
    nodes[node, VISITS] = 0
    nodes[node, AVAIL] = 1
    nodes[node, PRIOR] = NOT_ASKED
    nodes[node, ACTION] = action
    nodes[node, BLOCK] = -1
    nodes[node, FIRST_CHILD] = -1
    nodes[node, NEXT_SIBLING] = -1
    nodes[node, LAST_CHILD] = -1
    for seat in range(totals.shape[1]):
        totals[node, seat] = 0.0


@TREE.compiled
def search_start(rng, mt, nodes, totals, counts):
    """A search's start in one call (each call into compiled code costs several microseconds when the caches
    are cold): the dealer's seed drawn from the bot's generator ``rng`` (``randrange(2**31)``, where
    ``MCTSBot.search`` draws it for the Python search), the dealer ``mt`` made ``SearchChance(seed)``'s
    (``random.Random(seed)``'s words, then zeros), the tree emptied."""
    seed = randbelow(rng, 1 << 31)
    for i in range(MT_SIZE, len(mt)):
        mt[i] = 0
    seed_generator(mt, seed)
    tree_clear(nodes, totals, counts)


@TREE.compiled
def tree_add(nodes, totals, children, counts, node, action):
    """A new child of ``node`` by ``action`` (availability 1), listed after its elder siblings."""
    block = nodes[node, BLOCK]
    if block < 0:
        block = counts[BLOCKS]
        counts[BLOCKS] += 1
        children[block, :] = -1
        nodes[node, BLOCK] = block
    child = counts[NODES]
    counts[NODES] += 1
    _node_init(nodes, totals, child, action)
    if nodes[node, FIRST_CHILD] < 0:
        nodes[node, FIRST_CHILD] = child
    else:
        nodes[nodes[node, LAST_CHILD], NEXT_SIBLING] = child
    nodes[node, LAST_CHILD] = child
    children[block, action] = child
    return child


@TREE.compiled
def tree_step(nodes, totals, children, counts, rng, node, seat, legal, count, explore):
    """One step down from ``node`` where ``seat`` chooses among the ``count`` actions of ``legal`` (ascending,
    legal in this sample), the node's prior already asked: ``(action, child, expanded)``. Every child legal
    here counts one more availability; an untried action is expanded (the prior's move if untried, else one
    drawn by ``randrange`` of the untried, in ascending order), else UCB1 over availability, the prior's
    move favoured by PRIOR_BIAS / (visits + 1), the first of equal scores."""
    block = nodes[node, BLOCK]
    prior = nodes[node, PRIOR]
    untried = 0
    prior_untried = False
    for i in range(count):
        action = legal[i]
        child = children[block, action] if block >= 0 else -1
        if child < 0:
            untried += 1
            if action == prior:
                prior_untried = True
        else:
            nodes[child, AVAIL] += 1
    if untried:
        chosen = prior
        if not prior_untried:
            pick = randbelow(rng, untried)
            for i in range(count):
                action = legal[i]
                if block < 0 or children[block, action] < 0:
                    if pick == 0:
                        chosen = action
                        break
                    pick -= 1
        return chosen, tree_add(nodes, totals, children, counts, node, chosen), True
    best, best_child, best_score = -1, -1, -math.inf
    for i in range(count):
        action = legal[i]
        child = children[block, action]
        visits = nodes[child, VISITS]
        score = totals[child, seat] / visits + explore * math.sqrt(math.log(nodes[child, AVAIL]) / visits)
        if action == prior:
            score += PRIOR_BIAS / (visits + 1)
        if score > best_score:
            best, best_child, best_score = action, child, score
    return best, best_child, False


@TREE.compiled
def tree_backup(nodes, totals, path, length, values_row, seats):
    """Every node of the walk (``path[:length]``) counts one more visit and adds each seat's value."""
    for i in range(length):
        node = path[i]
        nodes[node, VISITS] += 1
        for seat in range(seats):
            totals[node, seat] += values_row[seat]


def root_children(nodes: np.ndarray) -> list[int]:
    """The root's children, in the order they were expanded (the Python search's dict order)."""
    found = []
    child = int(nodes[0, FIRST_CHILD])
    while child >= 0:
        found.append(child)
        child = int(nodes[child, NEXT_SIBLING])
    return found


# --- what a game declares, and the Python side ------------------------------------------------------------------


@dataclass(frozen=True)
class GameSearchKernel:
    """A game's compiled search (``SEARCH_KERNEL`` in the module its search hooks name).

    ``simulations(info, seat, mt, rng, nodes, totals, children, counts, sims, explore, depth, rollout, others,
    prior)`` runs ``sims`` simulations from the information state's row ``info`` (``information_row(info,
    out)``: written over ``out``, a row it made before, whatever that held; a new row where ``out`` is None), the
    dealer's generator ``mt`` and the bot's ``rng`` (both advanced in place), each one
    ``MCTSBot._simulate`` and its rollout: ``rollout`` and ``others`` are the policies of the searching seat
    and of the rest (RANDOM or a code of ``policies``), ``prior`` the prior's (RANDOM: none), ``depth`` the
    decisions of a rollout before ``value`` scores the position (0: to the end)."""

    title: str  # for messages: "MiniSteel"
    policies: Mapping[type, int]  # bot classes whose ``act_state`` the kernel runs -> their code (from 1)
    value: Callable[[Any], list[float]] | None  # the game's value estimate (search hooks) that the kernel follows
    actions: int  # the game's action count: a row of ``children``
    unsupported: Callable[[Any], str | None]  # why the kernel cannot take this config (None: it can)
    information_row: Callable[[Any, np.ndarray | None], np.ndarray]  # (info, out): out rewritten, or a new row
    simulations: Any
    compile: Callable[[], None]
    # The dealer's words (``mt``): the Mersenne Twister's, then any the game's determinization keeps beside it
    # (Wyvern's: the numpy generator of ``SearchChance.shuffle_deal``), zero before the first sample.
    dealer_room: int = MT_SIZE
    # With a network's priors or values (agents/mcts_kernel_network.py): the loop that parks a simulation where the
    # network must answer (None: the game's kernel takes no network), the compilation of it, and the tables its
    # encoder reads, made before each search (Wyvern's decks' specialties; None: none).
    network_simulations: Any = None
    network_compile: Callable[[], None] | None = None
    network_tables: Callable[[], np.ndarray] | None = None


_SAID: set[str] = set()


def say_once(line: str) -> None:
    """One line on stderr, once per process (a search falling back to Python says why once, not per bot)."""
    if line not in _SAID:
        _SAID.add(line)
        print(line, file=sys.stderr)


def _cached(dispatcher: Any) -> bool:
    """Whether numba's cache holds ``dispatcher`` (compiled here before): its index file exists. Without
    numba, or where its cache looks otherwise, True (nothing to announce)."""
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return True


class KernelRandom(random.Random):
    """A bot's ``random.Random`` whose state may sit in a compiled search's words between moves.

    Handing the generator to compiled code and back costs two conversions of its 625 words (``getstate``
    into a uint32 array, ``tolist`` into ``setstate``: about 35 µs a move, more than a tenth of a 60-
    simulation Wyvern move). This generator converts lazily: :meth:`search_words` gives a search its
    state as words, which the search advances in place and which then *are* the generator's state; the
    Mersenne Twister inside ``random.Random`` is brought up to them only when Python code needs it
    (``random()``, ``getstate()``, a draw of more than 32 bits). A draw below a bound under 2**32
    (``randrange``, as the search's dealer seed; ``choice``, ``shuffle``) or of up to 32 bits is served
    from the words in compiled code, as CPython draws it. Every draw and state is the plain generator's of
    the same seed (tests/test_search_kernel.py checks it draw by draw)."""

    _words: np.ndarray | None = None  # uint32[MT_SIZE] as getstate holds them, once a search has asked
    _ahead = False  # the words are the state; the generator inside random.Random is behind them

    def search_words(self) -> np.ndarray:
        """The state as words for compiled code to draw from in place; after it, they are the state."""
        if not self._ahead:
            if self._words is None:
                self._words = np.empty(MT_SIZE, dtype=np.uint32)
            self._words[:] = array.array("I", super(random.Random, self).getstate())  # the C generator's words
            self._ahead = True
        return self._words

    def _catch_up(self) -> None:
        if self._ahead:
            self._ahead = False
            super(random.Random, self).setstate(tuple(self._words.tolist()))

    def seed(self, *args: Any, **kwargs: Any) -> None:
        self._ahead = False
        super().seed(*args, **kwargs)

    def setstate(self, state: tuple) -> None:
        self._ahead = False
        super().setstate(state)

    def getstate(self) -> tuple:
        self._catch_up()
        return super().getstate()

    def random(self) -> float:
        self._catch_up()
        return super().random()

    def getrandbits(self, k: int) -> int:
        if self._ahead and 0 < k <= 32:
            return int(draw_word(self._words)) >> (32 - k)  # CPython's getrandbits(k <= 32): one output
        self._catch_up()
        return super().getrandbits(k)

    def _randbelow(self, n: int) -> int:
        """``randrange(n)`` and what else draws below a bound (``choice``, ``shuffle``): from the words in one
        compiled call where they are the state and ``n < 2**32`` (``randbelow``, CPython's draws exactly)."""
        if self._ahead and 0 < n < 2**32:
            return int(draw_below(self._words, n))
        return self._randbelow_with_getrandbits(n)


FIRST_CHUNK = 128  # simulations in the first call (about a millisecond): a closed search answers after as many
CHUNK_SECONDS = 0.01  # later calls last about this long, or a twentieth of a time limit if shorter


class CompiledSearch:
    """The arrays of one bot's compiled search and the calls that fill them (see the module docstring)."""

    FIRST_ROOM = 1024  # nodes the arrays hold at first (they double as a search needs)

    def __init__(self, kernel: GameSearchKernel, seats: int, c: float, depth: int, rollout: int, others: int,
                 prior: int):
        self.kernel, self.seats = kernel, seats
        self.c, self.depth, self.rollout, self.others, self.prior = float(c), int(depth), rollout, others, prior
        if not _cached(kernel.simulations):
            say_once(f"mcts: compiling the {kernel.title} search kernel (once: numba keeps it; up to a minute)")
        kernel.compile()
        self._grow(self.FIRST_ROOM)
        self._row: np.ndarray | None = None  # the information state's row, rewritten each move
        self._dealer = np.zeros(kernel.dealer_room, dtype=np.uint32)  # the dealer's words, seeded each move

    @staticmethod
    def generator(rng: random.Random) -> KernelRandom:
        """A :class:`KernelRandom` in ``rng``'s state: the bot's generator from then on (the same draws, no
        conversion of its state at every move)."""
        lazy = KernelRandom()
        lazy.setstate(rng.getstate())
        return lazy

    def _grow(self, nodes: int) -> None:
        """Arrays for ``nodes`` nodes and as many rows of children (kept between moves, grown as needed)."""
        self.nodes = np.zeros((nodes, NODE_FIELDS), dtype=np.int64)
        self.totals = np.zeros((nodes, self.seats), dtype=np.float64)
        self.children = np.zeros((nodes, self.kernel.actions), dtype=np.int32)
        self.counts = np.zeros(2, dtype=np.int64)

    def _make_room(self, more: int) -> None:
        """Room for ``more`` simulations beyond the rows in use: each adds at most a node and a row of
        children. The two grow apart (doubling), since only a node with children has a row of them (about
        a quarter of the nodes in MiniSteel)."""
        used, blocks = int(self.counts[NODES]), int(self.counts[BLOCKS])
        if used + more > len(self.nodes):
            size = max(2 * len(self.nodes), used + more)
            nodes, totals = self.nodes, self.totals
            self.nodes = np.zeros((size, NODE_FIELDS), dtype=np.int64)
            self.totals = np.zeros((size, self.seats), dtype=np.float64)
            self.nodes[:used], self.totals[:used] = nodes[:used], totals[:used]
        if blocks + more > len(self.children):
            children = self.children
            self.children = np.zeros((max(2 * len(children), blocks + more), self.kernel.actions), dtype=np.int32)
            self.children[:blocks] = children[:blocks]

    def root_value(self, seat: int) -> float | None:
        """``seat``'s mean value over the last search's finished simulations (its root children's totals over
        their visits, as ``MCTSBot``'s Python search reads its own), or None where none finished."""
        children = root_children(self.nodes)
        visits = sum(int(self.nodes[child, VISITS]) for child in children)
        return float(sum(float(self.totals[child, seat]) for child in children) / visits) if visits else None

    def search(self, info: Any, seat: int, rng: random.Random, sims: int, deadline: float,
               stopped: Callable[[], bool]) -> tuple[int, int, dict[int, int]]:
        """``(best action, simulations, root visits by action)`` after ``sims`` simulations or the deadline
        (``math.inf``: none) or ``stopped()``. ``rng`` is the bot's generator: first the dealer's seed is
        drawn from it (``randrange(2**31)``; the samples are dealt, and their dice rolled, by the generator
        of ``SearchChance(seed)``), and it comes back advanced as the Python search leaves it."""
        kernel = self.kernel
        row = self._row = kernel.information_row(info, self._row)
        if isinstance(rng, KernelRandom):
            bot_mt = rng.search_words()  # advanced in place, they stay its state
        else:
            version, words, gauss = rng.getstate()
            bot_mt = np.frombuffer(array.array("I", words), dtype=np.uint32)
        mt = self._dealer
        search_start(bot_mt, mt, self.nodes, self.totals, self.counts)
        done, chunk = 0, FIRST_CHUNK
        limit = min(CHUNK_SECONDS, (deadline - time.perf_counter()) / 20) if deadline < math.inf else CHUNK_SECONDS
        while done < sims:
            count = min(chunk, sims - done)
            if done or count >= len(self.nodes) or count > len(self.children):  # else the fresh tree has room
                self._make_room(count)
            start = time.perf_counter()
            kernel.simulations(row, seat, mt, bot_mt, self.nodes, self.totals, self.children, self.counts, count,
                               self.c, self.depth, self.rollout, self.others, self.prior)
            done += count
            if done >= sims:
                break
            now = time.perf_counter()
            if stopped() or now >= deadline:
                break
            spent = now - start
            chunk = max(1, min(chunk * 4, int(count * limit / spent) if spent > 0 else chunk * 4))
        if not isinstance(rng, KernelRandom):
            rng.setstate((version, tuple(bot_mt.tolist()), gauss))
        nodes, totals = self.nodes, self.totals
        best, best_key = -1, None
        visits = {}
        for child in root_children(nodes):
            action, key = int(nodes[child, ACTION]), (int(nodes[child, VISITS]), float(totals[child, seat]))
            visits[action] = key[0]
            if best_key is None or key > best_key:  # max() of the Python search: the first of the greatest
                best, best_key = action, key
        return best, done, visits
