"""Closed-loop search with chance nodes and transpositions, for turn-based games without hidden information.

The open-loop tree of :mod:`.mcts` keys a node by the actions from the root, so every node mixes the
states that different dice lead to, and a decision after a die roll cannot depend on how it fell. In a
game where nothing is hidden (Tiny Minotaur: both decks are public, only future dice are unknown) the
search can instead walk the game's own state graph:

* **Decision nodes are states**, found by a hashable key (the game's ``SEARCH.closed_loop.key``,
  :mod:`.search_hooks`) in a transposition table
  shared by all simulations of a move (and by the moves of one game, below).
  Positions reached along different paths, such as the miss-miss loop of Tiny Minotaur (a miss hands
  the turn over with nothing else changed), are one node, so what one path learns, every path knows.
* **Chance nodes are edges.** An action's outcomes are the distinct states it can lead to; a simulation
  follows the outcome its own dice give. At first an outcome is weighted by how often it came up; once
  the edge has been tried ``ENUMERATE_AT_VISITS`` times, its outcomes are enumerated exactly where the
  action draws one die (each face replayed through a scripted Chance: a d20 roll whose faces fall into
  "hit" or "miss" gives two outcomes, with probabilities faces/20).
* **Backups average over chance** (expectimax over the graph): an edge's value is the
  probability-weighted mean of its outcomes' current values, and a state's value is the mean of its
  first evaluation and its edges' values weighted by their visits (as UCT's running mean weights them,
  but recomputed from the children's current values, so a transposition that learnt more elsewhere counts).
* **Selection**: UCB1 on the edges' values, from the view of the seat to act (values are kept per seat).
* **Leaves**: a simulation walks down until it reaches a state not scored yet (or the end of the game)
  and scores it by a rollout (the bot's rollout policy) to the end of the game. A simulation may pass a
  state more than once (the miss-miss loop); every pass counts. (Stopping at such a cycle with the state's
  current value was tried: it wasted about half the simulations on no new information, docs/search.md.)
* **Between moves** the table is kept (:meth:`ClosedLoopTree.reroot`): the next position of the game was
  usually explored already. It is dropped by the bot's ``reset()`` (a new game) and whenever the parts
  fixed for a game (the matchup) differ, so the same seed still gives the same moves in every game.

Statistics (checked by tests/test_search.py): an edge's visits equal the sum of its outcomes' counts, and a
state's visits equal its evaluations plus its edges' visits (plus, for a finished game, every arrival).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..envs.core import Chance, ReplayError
from .search_hooks import ClosedLoopGame, search_hooks  # noqa: F401 - ClosedLoopGame: importable here

# Faces of a single die roll enumerated exactly when an edge is first tried; larger draws are sampled.
MAX_ENUMERATED_FACES = 64
# An edge's outcomes are enumerated when it is tried for this many times (earlier, its outcomes are weighted
# by how often each came up): enumeration replays the action once per face, which would cost more than
# the rollouts if done for every edge tried once.
ENUMERATE_AT_VISITS = 4
# The table is dropped beyond this many states (memory stays bounded in long games).
MAX_TABLE_STATES = 200_000
NEVER = 2**62  # an edge's ``enumerate_at`` once it is enumerated or cannot be


class Edge:
    """An action at a state: its visits, its value per seat, and its outcomes (the chance node).

    ``outcomes`` maps a child's key to ``[probability, node, count]``; ``exact`` says the probabilities
    were enumerated (else each probability is the share of the edge's samples that led there)."""

    __slots__ = ("visits", "value", "outcomes", "exact", "enumerate_at")

    def __init__(self, outcomes: dict[Any, list], exact: bool, seats: int):
        self.visits = 0
        self.value = [0.0] * seats
        self.outcomes = outcomes
        self.exact = exact
        self.enumerate_at = ENUMERATE_AT_VISITS  # NEVER once done, or where the outcomes cannot be enumerated


class StateNode:
    """One state of the game graph: the seat to act, its legal actions and edges, visits and values.

    ``terminal`` holds the returns of a finished game (and nothing else is used then); otherwise
    ``evaluations``/``evaluation_sum`` are the rollouts scored at this state and ``value`` the current
    estimate per seat."""

    __slots__ = ("seat", "legal", "edges", "all_tried", "visits", "evaluations", "evaluation_sum", "edge_sum", "value",
                 "terminal", "prior")

    def __init__(self, seats: int, terminal: list[float] | None = None):
        self.seat = -1
        self.legal: list[int] = []
        self.edges: dict[int, Edge] = {}
        self.all_tried = False  # every legal action's edge has been visited
        self.visits = 0
        self.evaluations = 0
        self.evaluation_sum = [0.0] * seats
        self.edge_sum = [0.0] * seats  # sum over edges of visits x value
        self.value = list(terminal) if terminal is not None else [0.0] * seats
        self.terminal = terminal
        self.prior: Any = -2  # the prior's move or {action: probability} here (-2: not asked yet, -1: none)


class ClosedLoopTree:
    """The transposition table of one game and the simulations over it (see the module docstring).

    ``rollout(state) -> values per seat`` scores a leaf (it may play ``state`` on); ``prior(state, seat,
    legal)`` gives ``{action: probability}`` (PUCT with constant ``puct``, an untried move valued at its
    state's value) or names the move a node tries first and favours (``-1``: none); ``rng`` is a seeded
    ``random.Random`` for the order in which untried moves are tried."""

    def __init__(self, game_name: str, rules: Any, seats: int, c: float, rng: Any,
                 rollout: Callable[[Any], list[float]],
                 prior: Callable[[Any, int, list[int]], Any] | None = None, prior_bias: float = 1.0,
                 puct: float = 1.5):
        closed_loop = search_hooks(game_name).closed_loop  # declared by the game (agents/<game>.py)
        if closed_loop is None:
            raise ValueError(f"closed-loop search needs a game without hidden information and a state key; "
                             f"{game_name} declares none (SEARCH.closed_loop in agents/{game_name}.py)")
        self.key, self.game_key, self.copy = closed_loop
        self.rules, self.seats, self.c, self.rng = rules, seats, c, rng
        self.rollout, self.prior, self.prior_bias, self.puct = rollout, prior, prior_bias, puct
        self.table: dict[Any, StateNode] = {}
        self._game: tuple | None = None

    # --- the table ------------------------------------------------------------------------------------------

    def clear(self) -> None:
        self.table = {}
        self._game = None

    def reroot(self, state: Any) -> StateNode:
        """The root node for ``state``. The table is kept from earlier moves while the game's fixed parts
        are the same (the next position was usually explored already); otherwise it starts empty."""
        game = self.game_key(state)
        if game != self._game or len(self.table) > MAX_TABLE_STATES:
            self.clear()
            self._game = game
        return self._node(self.key(state), state)

    def _node(self, key: Any, state: Any) -> StateNode:
        node = self.table.get(key)
        if node is None:
            rules = self.rules
            if rules.is_terminal(state):
                node = StateNode(self.seats, list(rules.returns(state)))
            else:
                node = StateNode(self.seats)
                node.seat = rules.current_seat(state)
                node.legal = rules.legal_actions(state)
            self.table[key] = node
        return node

    def _child_key(self, state: Any) -> Any:
        # Finished games are keyed by their returns alone: a won game is worth the same however it was won.
        if self.rules.is_terminal(state):
            return ("end", *self.rules.returns(state))
        return self.key(state)

    def _enumerate(self, state: Any, action: int, edge: Edge) -> None:
        """Make ``edge`` exact where one die decides its outcome: replay ``action`` at ``state`` once per face
        and give each outcome the share of faces that lead to it (outcomes sampled before keep their counts;
        one the faces do not reach keeps probability 0). Otherwise the edge stays sampled."""
        rules = self.rules
        probe = self.copy(state, Chance(0))
        rules.apply(probe, action)
        draws = probe.chance.outcomes
        if len(draws) > 1 or (draws and draws[0][0] > MAX_ENUMERATED_FACES):
            edge.enumerate_at = NEVER  # never: sampled frequencies it is
            return
        shares: dict[Any, tuple[float, Any]] = {}
        if not draws:
            shares[self._child_key(probe)] = (1.0, probe)
        else:
            faces = draws[0][0]
            try:
                for face in range(faces):
                    after = self.copy(state, Chance.scripted([(faces, face)]))
                    rules.apply(after, action)
                    key = self._child_key(after)
                    share = shares.get(key)
                    shares[key] = (1.0 / faces + (share[0] if share else 0.0), after)
            except ReplayError:  # some face asks for a second draw: sampled frequencies it is
                edge.enumerate_at = NEVER
                return
        outcomes = edge.outcomes
        for entry in outcomes.values():
            entry[0] = 0.0
        for key, (probability, after) in shares.items():
            entry = outcomes.get(key)
            if entry is None:
                outcomes[key] = [probability, self._node(key, after), 0]
            else:
                entry[0] = probability
        edge.exact = True
        edge.enumerate_at = NEVER

    # --- one simulation -------------------------------------------------------------------------------------

    def simulate(self, root: StateNode, state: Any) -> None:
        """One simulation from ``root``, whose state ``state`` is (it is played on and consumed)."""
        rules = self.rules
        path: list[tuple[StateNode, Edge, list]] = []
        node = root
        while True:
            edges = node.edges
            action = self._select(node, state)
            edge = edges.get(action)
            if edge is None:
                edge = edges[action] = Edge({}, False, self.seats)
            if edge.visits >= edge.enumerate_at:  # ">=": a simulation that loops counts an edge more than once
                self._enumerate(state, action, edge)
            rules.apply(state, action)
            key = self._child_key(state)
            entry = edge.outcomes.get(key)
            if entry is None:
                if edge.exact:
                    # An outcome the enumeration did not see (the engine's turn cap: the key leaves the turn
                    # out). Score this simulation at the parent and keep the edge's statistics as they are.
                    node.visits += 1
                    node.evaluations += 1
                    self._add_evaluation(node, list(rules.returns(state)) if rules.is_terminal(state)
                                         else self.rollout(state))
                    self._backup(path)
                    return
                entry = edge.outcomes[key] = [0.0, self._node(key, state), 0]
            path.append((node, edge, entry))
            child: StateNode = entry[1]
            if child.terminal is not None:
                child.visits += 1
                break
            if not child.visits:  # first arrival: a rollout scores it
                child.visits += 1
                child.evaluations += 1
                self._add_evaluation(child, self.rollout(state))
                break
            node = child
        self._backup(path)

    def best_action(self, root: StateNode) -> int:
        """The move to play: the most visited root action (ties: the higher value)."""
        edges, seat = root.edges, root.seat
        return max(edges, key=lambda a: (edges[a].visits, edges[a].value[seat]))

    def _select(self, node: StateNode, state: Any) -> int:
        legal = node.legal
        edges = node.edges
        prior = node.prior
        if prior == -2:
            prior = node.prior = self.prior(state, node.seat, legal) if self.prior is not None else -1
        if type(prior) is dict:
            return self._puct(node, prior)
        if not node.all_tried:
            # An edge created earlier in this same simulation (it came back here) has no visits yet.
            untried = [a for a in legal if a not in edges or not edges[a].visits]
            if untried:
                return prior if prior in untried else untried[self.rng.randrange(len(untried))]
            node.all_tried = True
        seat, c = node.seat, self.c
        log_n = math.log(node.visits - node.evaluations)  # the edges' visits
        best, best_score = -1, -math.inf
        for a in legal:
            edge = edges[a]
            visits = edge.visits
            score = edge.value[seat] + c * math.sqrt(log_n / visits)
            if a == prior:
                score += self.prior_bias / (visits + 1)
            if score > best_score:
                best, best_score = a, score
        return best

    def _puct(self, node: StateNode, priors: dict[int, float]) -> int:
        edges, seat = node.edges, node.seat
        scale = self.puct * math.sqrt(node.visits + 1)
        first_play = node.value[seat]  # an untried move is valued at its state's current value
        best, best_score = node.legal[0], -math.inf
        for a in node.legal:
            edge = edges.get(a)
            visits = edge.visits if edge is not None else 0
            q = edge.value[seat] if visits else first_play
            score = q + scale * priors.get(a, 0.0) / (1 + visits)
            if score > best_score:
                best, best_score = a, score
        return best

    def _add_evaluation(self, node: StateNode, value: list[float]) -> None:
        node.evaluation_sum = [t + v for t, v in zip(node.evaluation_sum, value, strict=True)]
        self._refresh(node)

    def _backup(self, path: list[tuple[StateNode, Edge, list]]) -> None:
        """Count the simulation along ``path`` and update each edge's and state's value from its children's
        current values, deepest first."""
        for node, edge, entry in reversed(path):
            entry[2] += 1
            old_visits, old_value = edge.visits, edge.value
            visits = edge.visits = old_visits + 1
            node.visits += 1
            outcomes = edge.outcomes.values()
            if not edge.exact:
                for outcome in outcomes:
                    outcome[0] = outcome[2] / visits
            weight = 0.0
            value = None
            for probability, child, _ in outcomes:
                if probability and child.visits:  # reached at least once: it has a value
                    weight += probability
                    value = ([probability * v for v in child.value] if value is None else
                             [t + probability * v for t, v in zip(value, child.value, strict=True)])
            # The outcome this simulation took is scored now, so ``value`` is set unless the enumeration gave
            # that outcome no faces (sampled before, reached through the turn cap): then it stands alone.
            edge.value = [v / weight for v in value] if value is not None else list(entry[1].value)
            # The state's running sum of its edges' visits x values, updated for this edge's change.
            node.edge_sum = [t + visits * new - old_visits * old for t, new, old
                             in zip(node.edge_sum, edge.value, old_value, strict=True)]
            self._refresh(node)

    @staticmethod
    def _refresh(node: StateNode) -> None:
        """A state's value: the mean of its evaluations and its edges' values, weighted by visits."""
        count = node.visits
        if count:
            node.value = [(e + t) / count for e, t in zip(node.evaluation_sum, node.edge_sum, strict=True)]
