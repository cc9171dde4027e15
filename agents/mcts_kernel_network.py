"""``mcts`` in compiled code with a network's priors and values: simulations pause where the network must answer,
and the network answers a batch of them at once between kernel calls.

The compiled search (agents/mcts_kernel.py) runs whole simulations in a game's kernel, with the heuristic or no
prior and the game's own value estimate. A network cannot run inside numba, so here a game's loop
(``network_simulations`` of its ``GameSearchKernel``: agents/ministeel_kernel.py ``ministeel_network_simulations``)
runs each simulation until it needs the network, and then parks it in a *slot*: its sample (the determinized
state as the walk left it), its path, the node it stands at, and the question, written as the observation the
network reads (the compiled encoder's, envs/<game>/kernel_encode.py, which equals encode.py):

* **a prior** (:data:`WANTS_PRIOR`): the node's first walk-through asks the prior policy for the seat to act's
  probabilities over the legal actions (one observation and its mask). The node's ``PRIOR`` becomes
  :data:`PRIOR_PENDING`; another simulation reaching it meanwhile waits in its slot (:data:`WAITS`, no
  question of its own). Once answered the probabilities are the node's row of ``priors`` (:data:`UNSEEN` for
  an action not legal in the sample that asked: PUCT gives it a uniform share, as ``MCTSBot._puct`` does) and
  selection there is PUCT (:func:`tree_puct_step`, ``MCTSBot._puct`` step for step).
* **a value** (:data:`WANTS_VALUE`): a leaf (after ``depth`` rollout decisions, or none at ``depth=0``) that is
  not the end of the game is scored by the value network from every seat's observation (one row each).
* **a move** (:data:`WANTS_MOVE`, :data:`WANTS_OTHERS_MOVE`): where the rollout policy (``rollout=``, or
  ``others=`` for the other seats) is a network, each rollout decision with a choice asks it for the seat to
  act's move (one observation and its mask; a forced move asks nothing), as the Python search's rollouts ask
  ``act_batch``. The slot keeps the rollout's decisions so far; the answer is the slot's ``MOVE``.

A call of the game's loop first writes the answers of the last batch into the tree, then lets every parked
simulation go on (to its next question, or to its backup), then starts new simulations into free slots until
every slot holds a question or the call's simulations are started. :class:`NetworkSearch` (the Python side)
then asks the networks once for all the slots' priors and once for all their values, and calls again.

With one slot (``batch=1``) the simulations run one after another exactly as the Python search runs them:
every question is answered before the next simulation starts, the same streams (dealer and bot generator) are
drawn in the same order and the network is asked the same rows, so the compiled search visits what the
Python search visits (tests/test_search_kernel_network.py). With ``batch=B`` up to B simulations are under way
at once (leaf parallelism, as batched AlphaZero-style searches do): the paths of those parked carry a *virtual
visit* (a visit worth :data:`VIRTUAL_LOSS`, a draw, to every seat, taken back when the simulation goes on), so the
simulations that start meanwhile spread over other moves rather than all asking about the same leaf. That is
another search than the Python one (the samples' draws interleave; a simulation chooses without the values
still pending), with the same move distribution at equal simulations up to what the pending values change
(the test compares the two statistically).
"""

from __future__ import annotations

import array
import math
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..envs.compiled import Kernel, seed_generator
from . import mcts_kernel as T

# A node's PRIOR beyond mcts_kernel's NOT_ASKED and NO_PRIOR (and the prior bot's move, >= 0).
PRIOR_PENDING = -3  # a parked simulation asked the network for this node's priors
PRIOR_PROBABILITIES = -4  # the node's priors are its row of ``priors`` (selection there is PUCT)
UNSEEN = -1.0  # a ``priors`` entry for an action the prior was not asked about (it was not legal in that sample)

NETWORK = -1  # the prior's code where a network gives probabilities (beside mcts_kernel.RANDOM and a game's bots)

# A slot (a row of ``slots``): its state, the node its simulation stands at, the length of its path, its rollout's
# decisions so far and the move a rollout network answered.
STATE, NODE, LENGTH, STEPS, MOVE = range(5)
SLOT_FIELDS = 5
FREE, WANTS_PRIOR, WAITS, WANTS_VALUE, WANTS_MOVE, WANTS_OTHERS_MOVE = range(6)
# ``progress``: simulations started and finished since the search began.
STARTED, FINISHED = range(2)

# What a parked simulation's path counts for every seat meanwhile: a draw's value. MiniSteel's and Wyvern's returns
# sum to zero, so 0 is what a seat gets on average; the visit alone steers the next simulations elsewhere. A loss
# of -1 (the least a value can be) pushed the batched search's root visits twice as far from the one-at-a-time
# search's (tests/test_search_kernel_network.py's measure at batch=16: 0.074 against 0.039, the noise 0.041).
VIRTUAL_LOSS = 0.0


def _argument_types() -> dict:
    """The numba types of the parameters of this module's functions and of the games' loops over them."""
    from numba import types

    return {**T._argument_types(), "priors": types.float64[:, ::1], "probabilities": types.float64[:, ::1],
            "probabilities_row": types.float64[::1], "estimates": types.float64[:, ::1],
            "estimates_row": types.float64[::1], "samples": types.int64[:, ::1], "sample": types.int64[::1],
            "paths": types.int64[:, ::1], "slots": types.int64[:, ::1], "slot": types.int64[::1],
            "prior_observations": types.float32[:, ::1], "prior_observation": types.float32[::1],
            "prior_masks": types.int8[:, ::1], "prior_mask": types.int8[::1],
            "value_observations": types.float32[:, ::1], "progress": types.int64[::1], "puct": types.float64,
            "tables": types.int64[:, ::1]}


NETWORK_TREE = Kernel(_argument_types, includes=(T.TREE,))


@NETWORK_TREE.compiled
def tree_set_priors(nodes, children, counts, priors, node, legal, count, probabilities_row):
    """The network's answer at ``node``: the probabilities of the ``count`` actions of ``legal`` (the sample's that
    asked) become the node's row of ``priors`` (the node's row of ``children``, made here if it has none yet),
    every other action :data:`UNSEEN`; the node's selection is PUCT from now on."""
    block = nodes[node, T.BLOCK]
    if block < 0:
        block = counts[T.BLOCKS]
        counts[T.BLOCKS] += 1
        children[block, :] = -1
        nodes[node, T.BLOCK] = block
    for action in range(priors.shape[1]):
        priors[block, action] = UNSEEN
    for i in range(count):
        priors[block, legal[i]] = probabilities_row[legal[i]]
    nodes[node, T.PRIOR] = PRIOR_PROBABILITIES


@NETWORK_TREE.compiled
def tree_puct_step(nodes, totals, children, counts, priors, node, seat, legal, count, puct):
    """``MCTSBot._simulate``'s step at a node with a network's priors: ``(action, child, expanded)``. Every child
    legal here counts one more availability; then PUCT (``MCTSBot._puct``): ``Q + puct * P * sqrt(N + 1) /
    (1 + n)`` for a visited child, the node's mean for ``seat`` plus ``puct * P * sqrt(N + 1)`` for an untried
    one (first-play urgency), :data:`UNSEEN` actions at a uniform share, the first of equal scores. An untried
    choice is expanded."""
    block = nodes[node, T.BLOCK]
    for i in range(count):
        child = children[block, legal[i]]
        if child >= 0:
            nodes[child, T.AVAIL] += 1
    visits = nodes[node, T.VISITS]
    scale = puct * math.sqrt(visits + 1)
    first_play = totals[node, seat] / visits if visits else 0.0
    unseen = 1.0 / count
    best, best_child, best_score = legal[0], -1, -math.inf
    for i in range(count):
        action = legal[i]
        child = children[block, action]
        p = priors[block, action]
        if p < 0.0:
            p = unseen
        if child < 0 or nodes[child, T.VISITS] == 0:
            score = first_play + scale * p
        else:
            child_visits = nodes[child, T.VISITS]
            score = totals[child, seat] / child_visits + scale * p / (1 + child_visits)
        if score > best_score:
            best, best_child, best_score = action, child, score
    if best_child < 0:
        return best, T.tree_add(nodes, totals, children, counts, node, best), True
    return best, best_child, False


@NETWORK_TREE.compiled
def ask_move(prior_mask, legal, count, slot, steps, seat, to_act):
    """A rollout decision's question to the rollout network (the observation is the game's to write): the mask of
    the ``count`` actions of ``legal``, the rollout's decisions so far kept in the slot; the slot's state to park
    with (the searching ``seat``'s own move, or another seat's)."""
    prior_mask[:] = 0
    for i in range(count):
        prior_mask[legal[i]] = 1
    slot[STEPS] = steps
    return WANTS_MOVE if to_act == seat else WANTS_OTHERS_MOVE


@NETWORK_TREE.compiled
def tree_virtual_loss(nodes, totals, path, length, seats, sign):
    """A parked simulation's path counts one visit more (``sign`` 1), worth :data:`VIRTUAL_LOSS` to every seat, or
    that visit is taken back (``sign`` -1) when it goes on."""
    for i in range(length):
        node = path[i]
        nodes[node, T.VISITS] += sign
        for seat in range(seats):
            totals[node, seat] += sign * VIRTUAL_LOSS


def root_choice(nodes: np.ndarray, totals: np.ndarray, seat: int) -> tuple[int, dict[int, int]]:
    """The most visited root action (ties to the higher total for ``seat``, then to the first expanded) and the
    root's visits by action, in the order expanded: ``CompiledSearch.search``'s choice."""
    best, best_key = -1, None
    visits = {}
    for child in T.root_children(nodes):
        action, key = int(nodes[child, T.ACTION]), (int(nodes[child, T.VISITS]), float(totals[child, seat]))
        visits[action] = key[0]
        if best_key is None or key > best_key:
            best, best_key = action, key
    return best, visits


NO_TABLES = np.zeros((0, 0), dtype=np.int64)  # a game whose encoder reads no tables of its own
CHUNK = 4096  # simulations a call may start at most (the time limit and close() are checked between calls)


class NetworkSearch(T.CompiledSearch):
    """The compiled search with a network's priors or values (see the module docstring): the tree's arrays (those
    of :class:`~.mcts_kernel.CompiledSearch`, and a row of priors per row of children), the slots, and the
    networks asked in batches between calls of the game's loop."""

    def __init__(self, kernel: T.GameSearchKernel, seats: int, c: float, depth: int, rollout: int, others: int,
                 prior: int, *, prior_bot: Any, value_bot: Any, puct: float, root_temp: float, batch: int,
                 observation_size: int, actions: int, tempered: Callable[[dict[int, float], float], dict[int, float]],
                 rollout_bot: Any = None, others_bot: Any = None):
        self.prior_bot, self.value_bot = prior_bot, value_bot
        self.rollout_bots = {WANTS_MOVE: rollout_bot, WANTS_OTHERS_MOVE: others_bot}  # networks moving in rollouts
        self.puct, self.root_temp, self.batch, self._tempered = float(puct), float(root_temp), int(batch), tempered
        if not T._cached(kernel.network_simulations):
            T.say_once(f"mcts: compiling the {kernel.title} search kernel with network answers (once: numba keeps "
                       "it; up to a minute)")
        kernel.network_compile()
        super().__init__(kernel, seats, c, depth, rollout, others, prior)
        self.samples = np.zeros((batch, 0), dtype=np.int64)  # a row per slot, sized at the first search
        self.slots = np.zeros((batch, SLOT_FIELDS), dtype=np.int64)
        self.paths = np.zeros((batch, len(self.nodes) + 1), dtype=np.int64)
        self.prior_observations = np.zeros((batch, observation_size), dtype=np.float32)
        self.prior_masks = np.zeros((batch, actions), dtype=np.int8)  # the table's actions (v1 MiniSteel: one less)
        self.value_observations = np.zeros((batch * seats, observation_size), dtype=np.float32)
        self.probabilities = np.zeros((batch, actions), dtype=np.float64)
        self.estimates = np.zeros((batch, seats), dtype=np.float64)
        self.progress = np.zeros(2, dtype=np.int64)
        self.network_calls = 0  # calls of a network (prior and value counted apart), for the bench

    def _grow(self, nodes: int) -> None:
        super()._grow(nodes)
        self.priors = np.zeros(self.children.shape, dtype=np.float64)

    def _make_room(self, more: int) -> None:
        blocks = int(self.counts[T.BLOCKS])
        super()._make_room(more)
        if len(self.priors) < len(self.children):
            priors = self.priors
            self.priors = np.zeros(self.children.shape, dtype=np.float64)
            self.priors[:blocks] = priors[:blocks]
        if self.paths.shape[1] < len(self.nodes) + 1:  # a walk is at most as long as the tree has nodes
            paths = self.paths
            self.paths = np.zeros((self.batch, len(self.nodes) + 1), dtype=np.int64)
            self.paths[:, :paths.shape[1]] = paths

    def search(self, info: Any, seat: int, rng: random.Random, sims: int, deadline: float,
               stopped: Callable[[], bool]) -> tuple[int, int, dict[int, int]]:
        """``CompiledSearch.search`` with the networks answering between calls: ``(best action, simulations,
        root visits by action)``. Past the deadline (or once ``stopped()``) no simulation starts, and those under
        way are finished (their questions answered: at most two more batches, or one more per rollout decision
        with a rollout network). The dealer's seed is the bot's first draw, as the Python search's; the
        generator goes in and out whole (a network's answers cost far more than the round trip that
        ``KernelRandom`` spares the heuristic search)."""
        dealer_seed = rng.randrange(2**31)
        kernel = self.kernel
        row = kernel.information_row(info)
        mt = np.zeros(kernel.dealer_room, dtype=np.uint32)
        seed_generator(mt, dealer_seed)
        version, words, gauss = rng.getstate()
        bot_mt = np.frombuffer(array.array("I", words), dtype=np.uint32).copy()
        T.tree_clear(self.nodes, self.totals, self.counts)
        tables = kernel.network_tables() if kernel.network_tables is not None else NO_TABLES
        if self.samples.shape[1] != len(row):
            self.samples = np.zeros((self.batch, len(row)), dtype=np.int64)
        self.slots[:] = 0
        self.progress[:] = 0
        virtual = 1 if self.batch > 1 else 0
        finishing = False  # past the deadline or stopped: nothing new starts, what is under way finishes
        while True:
            started = int(self.progress[STARTED])
            target = started if finishing else min(sims, started + CHUNK)
            self._make_room(target - started + self.batch)
            kernel.network_simulations(
                row, seat, mt, bot_mt, self.nodes, self.totals, self.children, self.counts, self.priors, target,
                self.c, self.puct, self.depth, self.rollout, self.others, self.prior, int(self.value_bot is not None),
                virtual, self.samples, self.paths, self.slots, self.prior_observations, self.prior_masks,
                self.value_observations, self.probabilities, self.estimates, self.progress, tables)
            states = self.slots[:, STATE]
            if not states.any() and (finishing or int(self.progress[STARTED]) >= sims):
                break
            self._answer(states)
            finishing = finishing or stopped() or time.perf_counter() >= deadline
        rng.setstate((version, tuple(bot_mt.tolist()), gauss))
        best, visits = root_choice(self.nodes, self.totals, seat)
        return best, int(self.progress[FINISHED]), visits

    def _answer(self, states: np.ndarray) -> None:
        """The networks' answers to the slots' questions: one call for every prior asked, one for every value, one
        per rollout network for every move asked of it."""
        asked = [state for state, bot in self.rollout_bots.items() if bot is not None]
        for bot in {id(self.rollout_bots[state]): self.rollout_bots[state] for state in asked}.values():
            # one call per network: the searching seat's and the others' moves together where they are one network
            moving = np.flatnonzero(np.isin(states, [state for state in asked if self.rollout_bots[state] is bot]))
            if len(moving):
                masks = self.prior_masks[moving]
                moves = np.asarray(bot.act_batch(self.prior_observations[moving], masks), dtype=np.int64)
                self.network_calls += 1
                legal = (moves >= 0) & (moves < masks.shape[1])
                if not (legal.all() and masks[np.arange(len(moving)), moves].all()):
                    raise ValueError(f"mcts: the rollout policy {type(bot).__name__} answered a move its mask does not "
                                     "allow")
                self.slots[moving, MOVE] = moves
        asking = np.flatnonzero(states == WANTS_PRIOR)
        if len(asking):
            masks = self.prior_masks[asking]
            answers = self.prior_bot.action_probabilities(self.prior_observations[asking], masks)
            self.network_calls += 1
            self.probabilities[asking] = answers
            if self.root_temp != 1.0:
                for slot in asking:
                    if self.slots[slot, NODE] == 0:  # the root: the probabilities at root_temp, as the Python search
                        legal = np.flatnonzero(self.prior_masks[slot]).tolist()
                        row = self.probabilities[slot]
                        tempered = self._tempered({a: float(row[a]) for a in legal}, self.root_temp)
                        row[legal] = [tempered[a] for a in legal]
        scoring = np.flatnonzero(states == WANTS_VALUE)
        if len(scoring):
            seats = self.seats
            rows = (scoring[:, None] * seats + np.arange(seats)).ravel()
            estimates = self.value_bot.value_estimates(self.value_observations[rows])
            self.network_calls += 1
            self.estimates[scoring] = np.asarray(estimates, dtype=np.float64).reshape(len(scoring), seats)
