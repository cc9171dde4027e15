"""``mcts``: information-set Monte Carlo tree search over the pure rules engines, for every game.

Each simulation samples a full state from the seat's information state (``rules.determinize``: other
hands, deck order and future dice resampled from what the seat has not seen), then walks one tree shared
by all samples (single-observer ISMCTS): a node is a sequence of actions from the root.

* **Selection**: UCB1 over the actions legal in this sample, with availability counts (an action is
  scored against the number of times it was available, since samples differ in what is legal).
* **Returns**: every node keeps one total per seat and the seat to act maximises its own (max^n), so
  any number of players is searched soundly.
* **Chance**: sampled; each sample rolls fresh dice (a Chance of its own, or the dealer's stream continued:
  ``Chance.sample_chance``), so a node averages over dice (open loop).
* **Simultaneous moves** (Minefield): decoupled UCT: at a node each acting seat picks its own action by
  UCB over its own statistics, the joint action leads to the child.
* **Rollouts**: ``random``, or any bot spec (``heuristic``, ``zoo:GAME``, a checkpoint) acting on the
  encoded observation, or on the rules state where the bot has ``act_state`` (MiniSteel's and Wyvern's
  heuristics). With ``depth=D`` a rollout stops after D decisions and the game's value estimate
  scores the position.
* **Prior** (turn-based games): a bot spec. A trained policy (``zoo:GAME``, an ``.onnx`` bot, a
  checkpoint or run directory) gives its masked action probabilities P, and selection is PUCT:
  ``Q + puct * P(a) * sqrt(N) / (1 + n)`` over all legal moves, an untried one valued at its node's
  mean (so a node need not try every move). Any other bot names one move, which a node expands first
  and favours by ``PRIOR_BIAS / (visits + 1)`` (progressive bias), which matters where moves are many
  and simulations few (MiniSteel, Wyvern). With ``root_temp=T`` the probabilities at the root are taken to
  the power 1/T and normalised: a trained policy is often nearly certain (Wyvern's zoo bot gives its move
  0.99 at half its decisions), and PUCT then never tries another move, so the search plays the network's
  move; T > 1 lets it weigh the others, while the opponents' nodes keep the network's own odds.
* **Value** (``value=BOT``, a trained policy with a value head): the network's estimate of each seat's
  final return scores a leaf instead of the game's own estimate: with ``depth=0`` no rollout is played
  at all, with ``depth=D`` the rollout plays D decisions first. Every seat's observation goes to the
  network in one batch.
* **Opponent model** (``others=BOT``): the rollout policy of every seat but the searching one, where
  the opponents are known to play otherwise than the searching seat's rollout policy.
* **Paired rollouts at the root** (``root=paired``): no tree. The prior's (or the rollout policy's) move
  and its runners-up are each played on the same sampled deals and dice and rolled out; a network
  rollout policy is asked for all the rollouts of a round in one batch per step. The prior's move is
  kept unless another's mean paired gain over it is ``z`` standard errors clear (policy improvement
  by rollouts: :meth:`MCTSBot._search_paired`). As a teacher, ``target=improved`` gives expert iteration
  the prior shifted by every measured gain (:func:`improved_policy`) instead of the move played. With
  ``sure=P`` a move the network gives at least P is played without rollouts: most of a sure network's
  decisions, so a game's time goes where the search can change a move.

Spec syntax (``load_bot``): ``mcts`` or ``mcts:OPTIONS``, options separated by commas, a bare number
being the simulations: ``mcts:400``, ``mcts:400,time=0.5,rollout=heuristic,prior=none,depth=40,c=1.0,seed=7``,
``mcts:prior=zoo:tiny_minotaur,value=runs/tm``, ``mcts:prior=zoo:wyvern,value=zoo:wyvern,root_temp=4``,
``mcts:sims=1000000,time=1,root=paired,prior=zoo:ministeel,rollout=zoo:ministeel,depth=0``.
Where the game has a compiled kernel (MiniSteel, Wyvern) and the options are ones it takes, whole simulations run
there (:mod:`.mcts_kernel`, ``kernel=auto``; ``on`` insists, ``off`` searches here): the same search, the
same visits from the same seed, twenty times as many a second. A network as prior or value is asked between
kernel calls (:mod:`.mcts_kernel_network`), one simulation at a time (the same visits again) or, with
``batch=B``, for B simulations under way at once. The bot needs its seat's information state
before each ``act`` (:mod:`.infoset`); every tavernzoo host hands it over. docs/search.md has the design,
the speeds and the results.
"""

from __future__ import annotations

import importlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.random  # noqa: F401 - numpy loads it lazily: at import, not in a first search (about 8 ms)

from ..envs import games, get_game
from ..envs.core import Chance
from .base import BotBase, gives_probabilities
from .base import legal_actions as mask_actions
from .belief import Belief
from .mcts_closed import ClosedLoopTree
from .search_hooks import SearchHooks, search_hooks
from .spec import NESTED_OPTIONS, BotSpec

if TYPE_CHECKING:
    from .mcts_kernel import CompiledSearch

OPTION_HELP = {
    "sims": "simulations per move (an integer >= 1; a bare number means this)",
    "time": "seconds per move at most (> 0; the search stops at whichever limit comes first)",
    "rollout": "rollout policy: random, or a bot spec such as heuristic or zoo:GAME",
    "others": "rollout (the other seats roll out with the rollout policy), random, or a bot spec: the rollout "
              "policy of every seat but the searching one (a model of the opponents)",
    "prior": "none, or a bot spec: a trained policy's probabilities are PUCT priors; another bot's move is "
             "expanded first and favoured (progressive bias)",
    "value": "none, or a trained policy with a value head (an .onnx bot exported with it, a checkpoint or run "
             "directory) whose estimate scores the leaves (after depth decisions of rollout; depth=0: none)",
    "puct": "PUCT exploration constant where the prior gives probabilities (>= 0)",
    "root_temp": "temperature of the prior's probabilities at the root (> 0; 1: as the network gives them; above "
                 "1 flattens a peaked prior so the search weighs the network's other moves too)",
    "depth": "decisions per rollout before the value estimate scores the position (0: play to the end)",
    "c": "UCB exploration constant (>= 0)",
    "tree": "open (nodes are action sequences; any game) or closed (nodes are states, chance outcomes "
            "are branches, transpositions shared; games without hidden information: tiny_minotaur)",
    "root": "tree (the tree search) or paired (no tree: the prior's top moves are each played on the same "
            "sampled deals and dice and rolled out; another move replaces the prior's only when its paired "
            "gain is significant; turn-based games)",
    "width": "root=paired: how many of the prior's most likely moves are compared (>= 2)",
    "z": "root=paired: standard errors a move's mean paired gain over the prior's move must exceed before "
         "the search plays it instead (>= 0)",
    "gain": "root=paired: the least mean paired gain (in returns: a win share) a move needs besides z before "
            "the search plays it instead (>= 0; for rollouts cut short, whose value-head scores differ by "
            "small amounts that no sample's luck hides)",
    "sure": "root=paired: play the prior's most likely move without rollouts where the prior gives it at least "
            "this probability (0 < sure <= 1; 1: always search; needs a prior that gives probabilities), so a "
            "game's time goes to the decisions the network is unsure of",
    "target": "the policy target it gives expert iteration: visits (the root's visit counts; the tree's "
              "default), move (the move played, all of the target; root=paired's default) or improved "
              "(root=paired: the prior's probabilities shifted by every candidate's measured gain, Gumbel "
              "MuZero's improved policy)",
    "belief": "none, or a trained policy (zoo:GAME, an .onnx bot, a checkpoint or run directory) as the model of "
              "the other seats: hidden cards are dealt in proportion to how likely they make the others' moves "
              "so far (a particle filter; games with hidden cards)",
    "particles": "belief=: the deals the belief keeps (an integer >= 2)",
    "seed": "the bot's own seed (an integer; default: the seed the host gives)",
    "batch": "the compiled search with a network's priors, values or rollout moves: simulations under way at once, "
             "their questions to the network answered in one batch (an integer >= 1; 1: one at a time, the Python "
             "search's very visits; more: faster, with a virtual loss on the paths under way)",
    "kernel": "auto (whole simulations in the game's compiled kernel where it has one and takes these options, "
              "else the Python search, saying why once), on (the kernel or an error saying why not) or off (the "
              "Python search); both search alike: the same moves and visits from the same seed",
}

CHOICES = {"tree": ("open", "closed"), "root": ("tree", "paired"), "target": ("visits", "move", "improved"),
           "kernel": ("auto", "on", "off")}
PAIRED_ONLY = ("width", "z", "gain", "sure")  # options that a tree search would ignore: refused there
TARGETS = {"tree": ("visits", "move"), "paired": ("move", "improved")}  # the first: the root's default target
PRIOR_BIAS = 1.0  # the prior's move scores this much extra at a node, shrinking as 1 / (its visits + 1)
PAIRED_ROUND = 8  # root=paired: samples per round (their rollouts step together; the time is checked between rounds)
# target=improved: a gain g measured on n samples adds (IMPROVED_VISITS + n) * IMPROVED_SCALE * g to the prior's
# log-probability. Gumbel MuZero's sigma(q) = (c_visit + max N) * c_scale * q with its c_visit = 50 and
# c_scale = 0.1 (Danihelka et al., 2022), for returns in [0, 1] as a win share is; a candidate's samples are its
# visits. At 100 samples a gain of 0.05 (a win in 20 more games) adds 0.75 to the logit.
IMPROVED_VISITS = 50
IMPROVED_SCALE = 0.1


@dataclass(frozen=True)
class Options:
    sims: int = 200
    time: float = 0.0  # 0: no time limit
    rollout: str = "random"
    others: str = "rollout"
    prior: str = "none"
    value: str = "none"
    puct: float = 1.5
    root_temp: float = 1.0
    depth: int = 0  # 0: rollouts play to the end
    c: float = 1.0
    tree: str = "open"
    root: str = "tree"
    width: int = 3
    z: float = 2.0
    gain: float = 0.0
    sure: float = 1.0  # 1: every decision with a choice is searched
    target: str = ""  # "": the root's default (TARGETS)
    belief: str = "none"
    particles: int = 64
    seed: int | None = None
    kernel: str = "auto"
    batch: int = 1


def parse_options(spec: str | BotSpec, game_name: str) -> Options:
    """The options of an ``mcts`` spec; ValueError naming the bad option and the valid ones."""
    values: dict[str, Any] = dict(search_hooks(game_name).defaults)  # the game's own (agents/<game>.py)
    parsed = spec if isinstance(spec, BotSpec) else BotSpec.parse(spec)
    spec = str(parsed)  # as written, for the messages
    given = set()
    for position, item in enumerate(parsed.options):
        key, sep, raw = item.partition("=")
        if not sep:
            if position != 0:
                raise ValueError(f"bot spec {spec!r}: {item!r} needs a name (name=value); "
                                 f"valid: {', '.join(OPTION_HELP)}")
            key, raw = "sims", item
        key = key.strip()
        if key not in OPTION_HELP:
            raise ValueError(f"bot spec {spec!r}: unknown option {key!r}; valid: {', '.join(OPTION_HELP)} "
                             "(docs/search.md)")
        values[key] = _option_value(spec, key, raw.strip())
        given.add(key)
    if values.get("root") == "paired" and "tree" not in given:
        values["tree"] = "open"  # a game's default closed tree (Tiny Minotaur's) has no say where none is built
    paired_only = sorted(given & set(PAIRED_ONLY))
    if paired_only and values.get("root") != "paired":
        raise ValueError(f"bot spec {spec!r}: {', '.join(paired_only)} only apply to root=paired (add root=paired "
                         "or drop them)")
    root_targets = TARGETS[values.get("root", "tree")]
    if "target" in given and values["target"] not in root_targets:
        raise ValueError(f"bot spec {spec!r}: target={values['target']} does not apply to root="
                         f"{values.get('root', 'tree')}; valid there: {', '.join(root_targets)}")
    values["target"] = values.get("target") or root_targets[0]
    if "particles" in given and values.get("belief", "none") == "none":
        raise ValueError(f"bot spec {spec!r}: particles only applies with belief=BOT (add belief= or drop it)")
    if not values.get("sims") and not values.get("time"):
        raise ValueError(f"bot spec {spec!r}: give simulations or a time limit")
    if values.get("batch", 1) > 1 and values.get("kernel") == "off":
        raise ValueError(f"bot spec {spec!r}: batch only applies to the compiled search (the Python search asks the "
                         "network one simulation at a time); drop batch or kernel=off")
    return Options(**values)


def _option_value(spec: str, key: str, raw: str) -> Any:
    bad = f"bot spec {spec!r}: {key}={raw!r} is not valid; {key}: {OPTION_HELP[key]}"
    if key in NESTED_OPTIONS:
        if not raw:
            raise ValueError(bad)
        return raw
    if key in CHOICES:
        if raw not in CHOICES[key]:
            raise ValueError(bad)
        return raw
    try:
        value = float(raw) if key in ("time", "c", "puct", "root_temp", "z", "gain", "sure") else int(raw)
    except ValueError:
        raise ValueError(bad) from None
    if (key in ("sims", "batch") and value < 1) or (key in ("time", "root_temp") and not value > 0) or (
            key in ("width", "particles") and value < 2) or (key in ("z", "gain") and not value >= 0) or (
            key == "depth" and value < 0) or (key == "sure" and not 0 < value <= 1) or (
            key in ("c", "puct") and not value >= 0) or not math.isfinite(value):
        raise ValueError(bad)
    return value


class SearchChance(Chance):
    """The Chance that deals the search's determinizations: the same draws as a ``Chance`` with its seed,
    without the log (a search never replays it) and with the shuffle written out in one loop. A
    determinization asks it for its sample's Chance (``sample_chance``): itself, so the samples' dice are
    not logged either and continue the one stream of deals and dice (MiniSteel's and Wyvern's; a game
    whose determinization seeds a Chance per sample, ``envs.core.redealt``, gets one of this class). The
    compiled search (agents/mcts_kernel.py) runs this very stream: same seed, same samples.

    ``shuffle_deal`` (what a determinization that calls it shuffles its unseen cards with: Wyvern's four
    pools of about 80 cards, a fifth of a simulation drawn one by one) takes a list of at least
    ``NUMPY_SHUFFLE_FROM`` items through ``numpy.random.Generator.permutation``, seeded once per Chance
    from its own generator when first needed. That is Fisher-Yates in C on unbiased bounded integers:
    given uniform bits, each of the n! orders of the positions has probability 1/n!, and so has each
    order of the items, as with :meth:`shuffle` (the test checks the positions' and the pairs'
    frequencies). The deal stays uniform over those consistent with what the seat saw; only which
    sample a seed gives changed. A shorter list is shuffled in Python, where numpy's call costs more
    than the loop. Such a determinization's sample also rolls its dice from this Chance
    (``sample_chance``): draws of one generator, one after another, as independent as those of a
    generator seeded per sample."""

    __slots__ = ("_numpy",)  # set at the first shuffle_deal of a long list (no __init__: samples make many)

    NUMPY_SHUFFLE_FROM = 24

    def below(self, n: int) -> int:
        return int(self._random.random() * n)

    def roll(self, sides: int) -> int:
        return int(self._random.random() * sides) + 1

    def shuffle(self, items: list[Any]) -> None:
        draw = self._random.random
        for i in range(len(items) - 1, 0, -1):
            j = int(draw() * (i + 1))
            items[i], items[j] = items[j], items[i]

    def shuffle_deal(self, items: list[Any]) -> None:
        if len(items) < self.NUMPY_SHUFFLE_FROM:
            self.shuffle(items)
            return
        try:
            generator = self._numpy
        except AttributeError:  # the first long list this Chance shuffles
            generator = self._numpy = np.random.Generator(np.random.PCG64(self._random.getrandbits(64)))
        items[:] = itemgetter(*generator.permutation(len(items)).tolist())(items)

    def sample_chance(self) -> SearchChance:
        # The samples' dice continue this Chance's own stream, one simulation after another, instead of
        # each sample seeding a generator of its own (seeding one is a fortieth of a Wyvern simulation).
        return self


# --- the tree ------------------------------------------------------------------------------------------------


class Node:
    """Statistics of one action sequence from the root: visits, one total per seat, availability count."""

    __slots__ = ("children", "visits", "totals", "avail", "seat_stats", "prior")

    def __init__(self, seats: int):
        self.children: dict[Any, Node] = {}
        self.visits = 0
        self.totals = [0.0] * seats
        self.avail = 0
        self.seat_stats: dict[int, dict[int, list[float]]] | None = None  # simultaneous: seat -> action -> [n, w]
        self.prior: Any = -2  # the prior here: its move, or {action: probability} (-2: not asked yet, -1: none)


class MCTSBot(BotBase):
    """Information-set MCTS (see the module docstring); acts on the information state its host hands over."""

    name = "mcts"
    wants_information_state = True

    def __init__(self, game: Any, config: Any, seed: int | None, options: Options, load_bot: Callable):
        # load_bot (agents.load_bot, handed in by it: this module is below the loader) loads the policies
        self.game, self.config, self.options, self._load_bot = game, config, options, load_bot
        self.rules = game.rules
        self.seats = self.rules.num_seats(config)
        self.simultaneous = game.simultaneous
        self._random = random.Random(options.seed if options.seed is not None else seed)
        self._info: Any = None
        self._seat = -1
        hooks = search_hooks(game.name)  # what the game declares for search (agents/<game>.py: SEARCH)
        self._value = hooks.value
        self._value_bot = self._load_policy("value", options.value, "none")
        if self._value_bot is not None:
            self._value_bot.check_value_head()
        if options.depth and self._value is None and self._value_bot is None:
            # A cut-off rollout would score an unfinished game's returns: zeros, whatever the position.
            raise ValueError(f"mcts depth={options.depth}: {game.name} has no value estimate for a cut-off "
                             f"rollout; use depth=0 (rollouts play to the end) or one of "
                             f"{', '.join(_games_with(lambda hooks: hooks.value))}, or give value=BOT")
        # Tree moves and rollout moves are always taken from ``legal_actions`` of the very state they are
        # played in, so the rules' unchecked apply serves where a game has one (Wyvern: the check is a
        # second legal_actions per step).
        self._apply = getattr(self.rules, "apply_legal", None) or getattr(self.rules, "apply", None)
        self._policy = self._load_policy("rollout", options.rollout, "random")
        self._others = (_SAME if options.others == "rollout"
                        else self._load_policy("others", options.others, "random"))
        self._prior_bot = self._load_policy("prior", options.prior, "none")
        self._prior_gives_probabilities = True  # until the prior bot answers None (it only names moves)
        if options.root_temp != 1.0:
            self._check_root_temperature(game, config, options)
        if options.root == "paired":
            self._check_paired(game, options)
        self._belief = self._make_belief(game, config, options)
        self.wants_history = self._belief is not None  # the belief weighs the others' moves (observe_history)
        self._history: list[tuple[int, int]] | None = None
        self._closed: ClosedLoopTree | None = None
        if options.tree == "closed":
            if self.simultaneous or hooks.closed_loop is None:
                raise ValueError(f"mcts tree=closed: {game.name} has hidden information or simultaneous moves, "
                                 f"so its search must sample states (tree=open); closed-loop games: "
                                 f"{', '.join(_games_with(lambda hooks: hooks.closed_loop))}")
            self._closed = ClosedLoopTree(game.name, self.rules, self.seats, options.c, self._random,
                                          self._rollout, self._prior if self._prior_bot is not None else None,
                                          PRIOR_BIAS, options.puct)
        self._compiled = self._compiled_search(hooks)  # None: this bot searches on the Python rules
        if self._compiled is not None:  # the same generator, its state kept in the search's words between moves
            self._random = self._compiled.generator(self._random)
        self._buffer = np.zeros(game.encoder.observation_size(config), dtype=np.float32)
        self._observer = game.make_observer()  # the search's own encoder (its caches are per consumer)
        self._mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
        self._seat_buffers = np.zeros((self.seats, self._buffer.shape[0]), dtype=np.float32)  # value rows, grown
        self._batch = (self._seat_buffers[:0], self._mask[None, :][:0])  # paired rollouts' arrays: none yet (grown)
        self.last_search: dict[str, Any] = {}
        # Set by close(): a host ending a game (a web table closed, a server shutting down) stops a search under
        # way after its current simulation rather than letting it run its budget out.
        self._stopped = False

    def _check_root_temperature(self, game: Any, config: Any, options: Options) -> None:
        """``root_temp`` reshapes a prior's probabilities at the root of the open tree: refused where
        there are none (no prior, a prior bot that only names its move, simultaneous moves) or no such root."""
        bad = f"mcts root_temp={options.root_temp:g}"
        if options.tree == "closed" or self.simultaneous:
            raise ValueError(f"{bad}: only the open tree of a turn-based game searches with prior probabilities "
                             f"at its root ({game.name}{' with tree=closed' if options.tree == 'closed' else ''})")
        self._require_prior_probabilities(bad)

    def _require_prior_probabilities(self, option: str) -> None:
        """Refuses ``option`` (a ValueError naming it) unless the prior is a policy that gives probabilities."""
        if self._prior_bot is not None and gives_probabilities(self._prior_bot, self.game, self.config):
            return
        raise ValueError(f"{option} needs a prior that gives probabilities (a trained policy: zoo:GAME, an .onnx bot, "
                         f"a checkpoint or run directory); prior={self.options.prior} "
                         f"{'is none' if self._prior_bot is None else 'only names its move'}")

    def _make_belief(self, game: Any, config: Any, options: Options) -> Belief | None:
        """``belief=BOT``: the particle filter over the hidden cards (agents/belief.py), refused with one line
        where nothing is hidden, where moves are simultaneous, or where the bot gives no probabilities."""
        if options.belief == "none":
            return None
        bad = f"mcts belief={options.belief}"
        if (refusal := belief_refusal(game)) is not None:
            raise ValueError(f"{bad}: {refusal}")
        model = self._load_policy("belief", options.belief, "none")
        if not gives_probabilities(model, game, config):
            raise ValueError(f"{bad}: the model of the other seats must give action probabilities (a trained "
                             "policy: zoo:GAME, an .onnx bot, a checkpoint or run directory); this bot only names "
                             "its move")
        return Belief(game, config, model, options.particles, random.Random(self._random.randrange(2**31)))

    def _check_paired(self, game: Any, options: Options) -> None:
        """``root=paired`` compares one seat's moves on the same samples: refused where moves are
        simultaneous, and beside the options that only shape a tree."""
        if self.simultaneous:
            raise ValueError(f"mcts root=paired: {game.name} has simultaneous moves, whose outcome depends on the "
                             "others' moves of the same step; use root=tree (its decoupled search)")
        if options.tree == "closed" or options.root_temp != 1.0:
            raise ValueError("mcts root=paired builds no tree, so tree=closed and root_temp do not apply; drop them "
                             "or use root=tree")
        if options.sure < 1:
            self._require_prior_probabilities(f"mcts sure={options.sure:g}")

    def _compiled_search(self, hooks: SearchHooks) -> CompiledSearch | None:
        """The game's compiled search (agents/mcts_kernel.py) where ``kernel`` allows it and it takes these
        options, else None: the Python search, the same search slower. ``kernel=auto`` says once why a game
        with a kernel searches on Python; ``kernel=on`` refuses (a ValueError saying why)."""
        options = self.options
        if options.kernel == "off" or (hooks.kernel is None and options.kernel == "auto"):
            return None
        if hooks.kernel is None:
            raise ValueError(f"mcts kernel=on: {self.game.name} has no compiled search; games with one: "
                             f"{', '.join(_games_with(lambda hooks: hooks.kernel))}")
        from .mcts_kernel import RANDOM, CompiledSearch, say_once  # here: it imports numba (a fifth of a second)

        kernel = importlib.import_module(hooks.kernel).SEARCH_KERNEL
        policies = {None: RANDOM, **kernel.policies}

        def code(bot: Any) -> int | None:
            return policies.get(None if bot is None else type(bot))

        # A network's priors, values and rollout moves are asked between calls where the game's kernel can park a
        # simulation (agents/mcts_kernel_network.py), many simulations' questions in one batch.
        answers = kernel.network_simulations is not None
        prior_network = (answers and self._prior_bot is not None and code(self._prior_bot) is None
                         and gives_probabilities(self._prior_bot, self.game, self.config))
        rollout_network = answers and code(self._policy) is None and _batchable(self._policy)
        others_network = (answers and self._others is not _SAME and code(self._others) is None
                          and _batchable(self._others))
        refused = [f"{role}={spec}" for role, spec, ok in (
            ("tree", options.tree, options.tree == "open" and not self.simultaneous),
            ("root", options.root, options.root == "tree"),
            ("value", options.value, self._value_bot is None or answers),
            ("belief", options.belief, self._belief is None),
            ("prior", options.prior, code(self._prior_bot) is not None or prior_network),
            ("rollout", options.rollout, code(self._policy) is not None or rollout_network),
            ("others", options.others, self._others is _SAME or code(self._others) is not None or others_network))
            if not ok]
        if hooks.value is not kernel.value:
            refused.append("the game's value estimate (the kernel follows another)")
        reason = (f"the {kernel.title} search kernel does not take {', '.join(refused)}" if refused
                  else kernel.unsupported(self.config))
        if reason is not None:
            if options.kernel == "on":
                raise ValueError(f"mcts kernel=on: {reason} (kernel=auto searches on the Python rules instead)")
            say_once(f"mcts: {reason}; searching on the Python rules (the same search, slower"
                     f"{'; one simulation at a time, batch= aside' if options.batch > 1 else ''})")
            return None
        if prior_network or self._value_bot is not None or rollout_network or others_network:
            from .mcts_kernel_network import NETWORK, NetworkSearch

            rollout = NETWORK if rollout_network else code(self._policy)
            others_bot = self._policy if self._others is _SAME else self._others
            others = rollout if self._others is _SAME else NETWORK if others_network else code(self._others)
            return NetworkSearch(kernel, self.seats, options.c, options.depth, rollout, others,
                                 NETWORK if prior_network else code(self._prior_bot), prior_bot=self._prior_bot,
                                 value_bot=self._value_bot, puct=options.puct, root_temp=options.root_temp,
                                 batch=options.batch, observation_size=self.game.encoder.observation_size(self.config),
                                 actions=len(self.game.action_names(self.config)), tempered=_tempered,
                                 rollout_bot=self._policy if rollout_network else None,
                                 others_bot=others_bot if others == NETWORK else None)
        rollout = code(self._policy)
        others = rollout if self._others is _SAME else code(self._others)
        return CompiledSearch(kernel, self.seats, options.c, options.depth, rollout, others, code(self._prior_bot))

    def _load_policy(self, role: str, spec: str, none: str) -> Any:
        if spec == none:
            return None
        kind = BotSpec.parse(spec).kind
        if kind == "mcts":
            raise ValueError(f"an mcts {role} policy cannot itself be mcts")
        if kind == "cmd":
            # Every simulation would call the program; and a program must not start from inside a spec.
            raise ValueError(f"an mcts {role} policy cannot be an external program ({spec!r}); use a built-in, "
                             "zoo, exported or checkpoint bot")
        bot = self._load_bot(spec, self.game, self.config, self._random.randrange(2**31))
        cut = getattr(bot, "cut_heads", None)
        if cut is not None:  # a search asks an exported network thousands of rows: each call computes one head
            cut()
        return bot

    def reset(self) -> None:
        self._info = None
        self._history = None
        self._stopped = False
        if self._belief is not None:
            self._belief.reset()
        if self._closed is not None:
            self._closed.clear()  # a new game: the table starts empty, so every game is searched alike

    def close(self) -> None:
        """Stop any search under way (another thread may be in :meth:`act`): it plays its best move so far."""
        self._stopped = True

    def observe_information_state(self, state: Any, seat: int) -> None:
        """What this seat knows now (``rules.information_state``); hosts call this before ``act``."""
        self._info, self._seat = state, seat

    def observe_history(self, moves: list[tuple[int, int]]) -> None:
        """The moves so far as this seat saw them (agents/infoset.py ``public_history``): the belief weighs them."""
        self._history = moves

    def act(self, observation: dict[str, Any]) -> int:
        self.last_search = {}
        legal = mask_actions(observation, self.name)
        if self._info is None:
            raise ValueError("mcts needs its seat's information state before each move; the host did not send "
                             "it (tavernzoo's match, tournament, play and bot protocol hosts do: docs/search.md)")
        info, seat = self._info, self._seat
        self._info = None
        if self._belief is not None:
            if self._history is None:
                raise ValueError("mcts belief= needs the moves of the game so far before each move; the host did "
                                 "not send them (tavernzoo's hosts do: agents/infoset.py feed)")
            # Brought along at every decision, forced ones too, so each update plays only the moves since.
            self._belief.update(info, seat, self._history, SearchChance(self._random.randrange(2**31)))
            self._history = None
        if len(legal) == 1:
            self.last_search = {"simulations": 0, "visits": {legal[0]: 1}, "move": legal[0]}
            return legal[0]
        root_legal = (self.rules.legal_actions(info, seat) if self.simultaneous
                      else self.rules.legal_actions(info))
        if sorted(root_legal) != legal:
            raise ValueError(f"mcts: the information state's legal actions {root_legal} differ from the "
                               f"observation's {legal}; the host sent a state out of step")
        move = self.search(info, seat)
        self.last_search["move"] = move
        return move

    def visit_distribution(self) -> dict[int, float]:
        """The last move's policy target for expert iteration (train/expert.py), shares summing to 1 (action ->
        share): the tree's root visit counts, or with ``target=move`` the move played (the most visited) alone.
        A forced move is all its one action's; ``root=paired``'s is the move played, or with ``target=improved``
        its improved policy."""
        if "target" in self.last_search:
            return dict(self.last_search["target"])
        visits = self.last_search.get("visits")
        if not visits:
            raise ValueError("mcts has not searched a move yet (visit_distribution follows act)")
        if self.options.target == "move":
            return {self.last_search["move"]: 1.0}
        total = sum(visits.values())
        return {action: count / total for action, count in visits.items()}

    def search_value(self) -> float | None:
        """The searching seat's value of the last move's position as the search found it: its mean return over
        the tree's simulations (expert iteration's ``value_target=search``); None without a tree search (a
        forced move, ``root=paired``) or before any move."""
        if "compiled_seat" in self.last_search:  # the arrays hold the last search until the next
            return self._compiled.root_value(self.last_search["compiled_seat"])
        return self.last_search.get("value")

    # --- the search ---------------------------------------------------------------------------------------

    def search(self, info: Any, seat: int) -> int:
        """The most visited root action after the simulation/time budget."""
        options = self.options
        if self._closed is not None:
            return self._search_closed(info, seat)
        if options.root == "paired":
            return self._search_paired(info, seat)
        self._seat = seat  # the searching seat, whose rollouts use ``rollout`` where ``others`` differs
        deadline = time.perf_counter() + options.time if options.time else math.inf
        sims = options.sims or 2**62
        if self._compiled is not None:  # it draws the dealer's seed from self._random first, as below
            best, done, visits = self._compiled.search(info, seat, self._random, sims, deadline,
                                                       lambda: self._stopped)
            # the root's value is read from the tree's arrays when asked (search_value), not at every move
            self.last_search = {"simulations": done, "visits": visits, "compiled_seat": seat}
            return best
        chance = SearchChance(self._random.randrange(2**31))
        root = Node(self.seats)
        simulate = self._simulate_joint if self.simultaneous else self._simulate
        determinize = self._determinizer()
        done = 0
        while done < sims:
            state = determinize(info, seat, chance)
            simulate(root, state)
            done += 1
            if self._stopped or (deadline is not math.inf and time.perf_counter() >= deadline):
                break
        if self.simultaneous:
            # Decoupled UCT's most visited action can be far from an equilibrium of a simultaneous move;
            # its visit counts approximate the equilibrium's mixed strategy, so the move is drawn from them.
            stats = root.seat_stats[seat]
            actions = sorted(stats)
            visits = [stats[a][0] for a in actions]
            finished, total = sum(visits), sum(stats[a][1] for a in actions)
            self.last_search = {"simulations": done, "visits": dict(zip(actions, visits, strict=True)),
                                "value": total / finished if finished else None}
            return self._random.choices(actions, weights=visits)[0]
        best = max(root.children, key=lambda a: (root.children[a].visits, root.children[a].totals[seat]))
        children = root.children.values()
        finished = sum(n.visits for n in children)
        self.last_search = {"simulations": done, "visits": {a: n.visits for a, n in root.children.items()},
                            "value": sum(n.totals[seat] for n in children) / finished if finished else None}
        self._note_belief()
        return best

    def _determinizer(self) -> Callable[[Any, int, Chance], Any]:
        """How a simulation samples a full state from the information state: uniformly over the deals
        consistent with it (``rules.determinize``), or with ``belief=`` in proportion to the belief's weights
        (brought to this information state in :meth:`act`)."""
        return self.rules.determinize if self._belief is None else self._belief.sample

    def _note_belief(self) -> None:
        if self._belief is not None:
            belief = self._belief
            self.last_search["belief"] = {"particles": belief.size, "distinct": len(belief.pool()),
                                          "effective": belief.effective_size(), "restarts": belief.restarts,
                                          "moves_weighed": belief.moves_weighed}

    def _search_closed(self, info: Any, seat: int) -> int:
        """The closed-loop search (:mod:`.mcts_closed`): the most visited root action after the budget."""
        options, tree = self.options, self._closed
        root = tree.reroot(info)
        # Nothing is hidden, so every simulation starts from the information state itself; one Chance rolls
        # the dice of all of them.
        chance = Chance(self._random.randrange(2**31))
        copy = tree.copy
        deadline = time.perf_counter() + options.time if options.time else math.inf
        sims = options.sims or 2**62
        done = 0
        while done < sims:
            tree.simulate(root, copy(info, chance))
            done += 1
            if self._stopped or (deadline is not math.inf and time.perf_counter() >= deadline):
                break
            if len(chance.outcomes) > 100_000:
                chance.outcomes.clear()
        edges = root.edges
        best = tree.best_action(root)
        finished = sum(e.visits for e in edges.values())
        self.last_search = {"simulations": done, "visits": {a: e.visits for a, e in edges.items()},
                            "values": {a: e.value[seat] for a, e in edges.items()}, "states": len(tree.table),
                            "value": (sum(e.visits * e.value[seat] for e in edges.values()) / finished
                                      if finished else None)}
        return best

    def _search_paired(self, info: Any, seat: int) -> int:
        """``root=paired``: policy improvement by rollouts (Tesauro and Galperin's on-line policy improvement),
        with the rollouts paired. Each round samples deals from the information state, and on each sample
        every candidate move (:meth:`_paired_candidates`: the prior's move and its runners-up) is played on
        its own copy, the copies sharing the sample's cards and dice stream, then rolled out. A candidate's
        gain on a sample is its return there minus the prior's move's, so the luck of the deal, which
        dwarfs the difference between two moves, cancels. The prior's move is kept unless a candidate's
        mean gain exceeds ``z`` standard errors of it and at least ``gain``; then the best such candidate is
        played.

        Where the rollout policy is the very policy the other seats play, the rollouts model them
        exactly up to the sampled hidden cards, so the chosen move is at least as good as the policy's own
        in expectation (the policy improvement theorem), less what a false switch costs. ``simulations``
        counts rollouts: ``width`` per sample. The search has no visit counts: ``visits`` gives the chosen
        move all the rollouts, and the policy target of expert iteration (:meth:`visit_distribution`) is the
        move played, or with ``target=improved`` :func:`improved_policy` of the gains."""
        options, rules = self.options, self.rules
        legal = sorted(rules.legal_actions(info))
        base, candidates, prior = self._paired_candidates(info, seat, legal)
        if options.sure < 1 and prior is not None and prior[base] >= options.sure:
            # The network is sure: its move is played as it is, and the time goes to the decisions it is not.
            self.last_search = {"simulations": 0, "visits": {base: 1}, "samples": 0, "base": base, "sure": True}
            if options.target == "improved":
                self.last_search["target"] = improved_policy(prior, {}, 0)
            return base
        # A plain Chance deals: each sample then rolls its dice from a Chance of its own, which the copies of
        # the sample clone, so every candidate meets the same dice in the same order.
        dealer = Chance(self._random.randrange(2**31))
        deadline = time.perf_counter() + options.time if options.time else math.inf
        width = len(candidates)
        samples_wanted = max(2, (options.sims or 2**62) // width)
        per_round = max(1, min(PAIRED_ROUND, samples_wanted))
        returns: list[list[float]] = [[] for _ in candidates]
        samples = 0
        # The candidates come from the information state's legal moves, not the sample's: the rules' checked
        # apply (once per copy, against a rollout's hundreds of unchecked steps) refuses one a sample lacks.
        apply = rules.apply
        while samples < samples_wanted:
            count = min(per_round, samples_wanted - samples)
            starts = []
            for copies in self._paired_samples(info, seat, dealer, count, width):
                for state, action in zip(copies, candidates, strict=True):
                    apply(state, action)
                    starts.append(state)
            values = self._rollouts(starts)
            for k in range(count):
                for j in range(width):
                    returns[j].append(values[k * width + j][seat])
            samples += count
            if self._stopped or (deadline is not math.inf and time.perf_counter() >= deadline):
                break
        chosen, gains = base, {}
        best_gain = 0.0
        for j in range(1, width):
            differences = [r - b for r, b in zip(returns[j], returns[0], strict=True)]
            mean = sum(differences) / samples
            spread = math.sqrt(sum((d - mean) ** 2 for d in differences) / (samples - 1)) if samples > 1 else math.inf
            gains[candidates[j]] = mean
            if mean > max(best_gain, options.gain) and mean > options.z * spread / math.sqrt(samples):
                chosen, best_gain = candidates[j], mean
        self.last_search = {"simulations": samples * width, "visits": {chosen: samples * width},
                            "samples": samples, "base": base,
                            "means": {a: sum(r) / samples for a, r in zip(candidates, returns, strict=True)},
                            "gains": gains}
        if options.target == "improved":
            self.last_search["target"] = improved_policy(prior, {base: 0.0, **gains}, samples)
        self._note_belief()
        return chosen

    def _paired_samples(self, info: Any, seat: int, dealer: Chance, count: int, width: int) -> list[list[Any]]:
        """``count`` samples of the information state, each as ``width`` copies holding the same cards and the
        same dice to come (a sample's own Chance, cloned with it)."""
        determinize, clone = self._determinizer(), self.rules.clone
        groups = []
        for _ in range(count):
            sample = determinize(info, seat, dealer)
            groups.append([sample] + [clone(sample) for _ in range(width - 1)])
        return groups

    def _paired_candidates(self, info: Any, seat: int, legal: list[int]
                           ) -> tuple[int, list[int], dict[int, float] | None]:
        """The move to improve on, the candidates (it first, ``width`` in all) and the prior's probabilities
        (None where it gives none): a prior that gives probabilities gives its most likely move and the next
        most likely; a prior that names a move (else the rollout policy, else a random pick) gives that move,
        and the others are drawn at random."""
        width = self.options.width
        if self._prior_bot is not None:
            prior = self._prior(info, seat, legal)
            if type(prior) is dict:
                ranked = sorted(legal, key=lambda a: -prior[a])  # stable: ties keep the actions' order
                return ranked[0], ranked[:width], prior
            base = prior
        elif self._policy is not None:
            base = self._policy_action(info, seat, legal)
        else:
            base = legal[self._random.randrange(len(legal))]
        others = [a for a in legal if a != base]
        self._random.shuffle(others)
        return base, [base] + others[:width - 1], None

    def _rollouts(self, states: list[Any]) -> list[list[float]]:
        """:meth:`_rollout` of many states at once, stepped together, so a network rollout policy is asked
        for all the states waiting on it in one batch (one call costs about as much as one row); each state's
        value per seat, in order."""
        if not any(_batchable(bot) for bot in (self._policy, self._others)):
            return [self._rollout(state) for state in states]  # no network: nothing to batch
        rules, apply, encode, rng = self.rules, self._apply, self._observer.encode, self._random
        is_terminal, legal_actions, current_seat = rules.is_terminal, rules.legal_actions, rules.current_seat
        depth = self.options.depth or (0 if self._value_bot is not None else math.inf)
        steps = [0] * len(states)
        observations, masks = self._batch_arrays(len(states))
        waiting = list(range(len(states)))
        while waiting:
            asking: dict[int, tuple[Any, list[tuple[int, list[int]]]]] = {}  # id of a network -> it, its states
            for i in waiting:
                state = states[i]
                while not is_terminal(state) and steps[i] < depth:
                    legal = legal_actions(state)
                    steps[i] += 1
                    if len(legal) == 1:
                        apply(state, legal[0])  # a forced move: no policy has a choice to make
                        continue
                    mover = current_seat(state)
                    bot = self._rollout_bot(mover)
                    if _batchable(bot):
                        asking.setdefault(id(bot), (bot, []))[1].append((i, legal))
                        break
                    apply(state, legal[rng.randrange(len(legal))] if bot is None
                          else self._policy_action(state, mover, legal, bot))
            waiting = []
            for bot, entries in asking.values():
                for row, (i, legal) in enumerate(entries):
                    state = states[i]
                    encode(state, current_seat(state), observations[row])
                    mask = masks[row]
                    mask[:] = 0
                    mask[legal] = 1
                actions = bot.act_batch(observations[:len(entries)], masks[:len(entries)])
                for row, (i, _) in enumerate(entries):
                    apply(states[i], int(actions[row]))
                    waiting.append(i)
        return self._leaf_values(states)

    def _leaf_values(self, states: list[Any]) -> list[list[float]]:
        """Each rolled-out state's value per seat: the result where the game is over, else (a rollout cut
        at ``depth``) the value network's estimate (one batch for all), the game's ``value`` function or,
        without either, the rules' returns of the unfinished game."""
        rules = self.rules
        values: list[Any] = [None] * len(states)
        unfinished = []
        for i, state in enumerate(states):
            if rules.is_terminal(state):
                values[i] = list(rules.returns(state))
            else:
                unfinished.append(i)
        if unfinished and self._value_bot is not None:
            for i, estimate in zip(unfinished, self._network_values([states[i] for i in unfinished]), strict=True):
                values[i] = estimate
        else:
            for i in unfinished:
                values[i] = self._value(states[i]) if self._value is not None else list(rules.returns(states[i]))
        return values

    def _rollout_bot(self, mover: int) -> Any:
        """The rollout policy of ``mover``: ``rollout``'s, or ``others``' for a seat not the searching one
        (None: random moves)."""
        return self._policy if self._others is _SAME or mover == self._seat else self._others

    def _batch_arrays(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Observation and mask arrays of at least ``rows`` rows, kept between searches."""
        if len(self._batch[0]) < rows:
            self._batch = (np.zeros((rows, self._buffer.shape[0]), dtype=np.float32),
                           np.zeros((rows, self._mask.shape[0]), dtype=np.int8))
        return self._batch

    def _simulate(self, root: Node, state: Any) -> None:
        rules, c, rng, apply = self.rules, self.options.c, self._random, self._apply
        log, sqrt = math.log, math.sqrt
        path = [root]
        node = root
        while not rules.is_terminal(state):
            seat = rules.current_seat(state)
            legal = rules.legal_actions(state)
            children = node.children
            untried = []
            for a in legal:
                child = children.get(a)
                if child is None:
                    untried.append(a)
                else:
                    child.avail += 1
            prior = node.prior
            if prior == -2:
                prior = node.prior = self._prior(state, seat, legal) if self._prior_bot is not None else -1
                if node is root and self.options.root_temp != 1.0 and type(prior) is dict:
                    prior = node.prior = _tempered(prior, self.options.root_temp)
            if type(prior) is dict:
                action = self._puct(node, seat, legal, prior)
                child = children.get(action)
                if child is None:
                    child = children[action] = Node(self.seats)
                    child.avail = 1
                    apply(state, action)
                    path.append(child)
                    break
                apply(state, action)
                node = child
                path.append(node)
                continue
            if untried:
                action = prior if prior in untried else untried[rng.randrange(len(untried))]
                child = children[action] = Node(self.seats)
                child.avail = 1
                apply(state, action)
                path.append(child)
                break
            best, best_score = -1, -math.inf
            for a in legal:
                child = children[a]
                score = child.totals[seat] / child.visits + c * sqrt(log(child.avail) / child.visits)
                if a == prior:
                    score += PRIOR_BIAS / (child.visits + 1)
                if score > best_score:
                    best, best_score = a, score
            apply(state, best)
            node = children[best]
            path.append(node)
        values = self._rollout(state)
        for visited in path:
            visited.visits += 1
            totals = visited.totals
            for s in range(self.seats):
                totals[s] += values[s]

    def _puct(self, node: Node, seat: int, legal: list[int], priors: dict[int, float]) -> int:
        """PUCT's choice at ``node``: an untried move is valued at the node's mean for ``seat`` (first-play
        urgency), so the prior decides which moves are ever tried. The priors come from the sample that
        first reached the node; a move legal only in later samples (another seat's sampled hand) gets a
        uniform share rather than none, so it can still be tried."""
        children, scale = node.children, self.options.puct * math.sqrt(node.visits + 1)
        first_play = node.totals[seat] / node.visits if node.visits else 0.0
        unseen = 1.0 / len(legal)
        best, best_score = legal[0], -math.inf
        for a in legal:
            child = children.get(a)
            if child is None or not child.visits:
                score = first_play + scale * priors.get(a, unseen)
            else:
                score = child.totals[seat] / child.visits + scale * priors.get(a, unseen) / (1 + child.visits)
            if score > best_score:
                best, best_score = a, score
        return best

    def _prior(self, state: Any, seat: int, legal: list[int]) -> Any:
        """The prior at a new node: ``{action: probability}`` from a trained policy, else the prior bot's move."""
        bot = self._prior_bot
        if self._prior_gives_probabilities:
            mask = self._mask
            mask[:] = 0
            mask[legal] = 1
            self._observer.encode(state, seat, self._buffer)
            probabilities = bot.action_probabilities(self._buffer[None, :], mask[None, :])
            if probabilities is not None:
                row = probabilities[0]
                return {a: float(row[a]) for a in legal}
            self._prior_gives_probabilities = False
        return self._policy_action(state, seat, legal, bot)

    def _network_values(self, states: list[Any]) -> list[list[float]]:
        """The value bot's estimate of every seat's final return in each state: one batch of every seat's
        observation of every state (a tree's leaf is one state; paired rollouts cut at ``depth``, many)."""
        seats, encode = self.seats, self._observer.encode
        rows = len(states) * seats
        if len(self._seat_buffers) < rows:
            self._seat_buffers = np.zeros((rows, self._buffer.shape[0]), dtype=np.float32)
        buffers = self._seat_buffers[:rows]
        for k, state in enumerate(states):
            for s in range(seats):
                encode(state, s, buffers[k * seats + s])
        estimates = [float(v) for v in self._value_bot.value_estimates(buffers)]
        return [estimates[k * seats:(k + 1) * seats] for k in range(len(states))]

    def _simulate_joint(self, root: Node, state: Any) -> None:
        rules, c, rng = self.rules, self.options.c, self._random
        trail: list[tuple[Node, dict[int, int]]] = []
        node = root
        expanded = False
        while not rules.is_terminal(state) and not expanded:
            if node.seat_stats is None:
                node.seat_stats = {}
            joint = {}
            for seat in rules.acting_seats(state):
                legal = rules.legal_actions(state, seat)
                stats = node.seat_stats.setdefault(seat, {})
                untried = [a for a in legal if a not in stats]
                if untried:
                    action = untried[rng.randrange(len(untried))]
                    stats[action] = [0, 0.0]
                else:
                    log_n = math.log(sum(stats[a][0] for a in legal))
                    action = max(legal, key=lambda a: stats[a][1] / stats[a][0] + c * math.sqrt(log_n / stats[a][0]))
                joint[seat] = action
            rules.apply_joint(state, joint)
            trail.append((node, joint))
            key = tuple(sorted(joint.items()))
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = Node(self.seats)
                expanded = True
            node = child
        values = self._rollout(state)
        for visited, joint in trail:
            visited.visits += 1
            for seat, action in joint.items():
                entry = visited.seat_stats[seat][action]
                entry[0] += 1
                entry[1] += values[seat]

    def _policy_action(self, state: Any, seat: int, legal: list[int], bot: Any = None) -> int:
        """The move of ``bot`` (default: the rollout policy) for ``seat``: read from the rules state where
        the bot can (``act_state``, e.g. the MiniSteel and Wyvern heuristics: no observation encoded per
        step), else from the encoded observation."""
        bot = bot or self._policy
        act_state = getattr(bot, "act_state", None)
        if act_state is not None:
            return int(act_state(state, seat, legal))
        mask = self._mask
        mask[:] = 0
        mask[legal] = 1
        self._observer.encode(state, seat, self._buffer)
        return int(bot.act({"observation": self._buffer, "action_mask": mask}))

    def _rollout(self, state: Any) -> list[float]:
        """Play on to the end (or ``depth`` decisions) with the rollout policy; each seat's value."""
        rules, rng, policy, apply = self.rules, self._random, self._policy, self._apply
        # value= with depth=0: the network scores the leaf itself, no rollout at all.
        depth = self.options.depth or (0 if self._value_bot is not None else math.inf)
        steps = 0
        if self.simultaneous:
            while not rules.is_terminal(state) and steps < depth:
                joint = {}
                for seat in rules.acting_seats(state):
                    legal = rules.legal_actions(state, seat)
                    bot = self._rollout_bot(seat)
                    joint[seat] = (self._policy_action(state, seat, legal, bot) if bot is not None
                                   else legal[rng.randrange(len(legal))])
                rules.apply_joint(state, joint)
                steps += 1
        else:
            # The rollout loop is most of a simulation's time: the rules' functions and a raw-state
            # policy's ``act_state`` are looked up once, not per step.
            is_terminal, legal_actions, current_seat = rules.is_terminal, rules.legal_actions, rules.current_seat
            act_state = getattr(policy, "act_state", None)
            while self._others is not _SAME and not is_terminal(state) and steps < depth:
                # others=: the searching seat and the rest roll out with policies of their own
                legal = legal_actions(state)
                mover = current_seat(state)
                bot = self._rollout_bot(mover)
                apply(state, legal[rng.randrange(len(legal))] if bot is None
                      else self._policy_action(state, mover, legal, bot))
                steps += 1
            while not is_terminal(state) and steps < depth:
                legal = legal_actions(state)
                if act_state is not None:  # returns an action of ``legal`` (an int): no int() per step
                    action = act_state(state, current_seat(state), legal)
                elif policy is not None:
                    action = self._policy_action(state, current_seat(state), legal)
                else:
                    action = legal[rng.randrange(len(legal))]
                apply(state, action)
                steps += 1
        return self._leaf_values([state])[0]


_SAME = object()  # others=rollout: the other seats roll out with the rollout policy too


def improved_policy(prior: dict[int, float] | None, gains: dict[int, float], samples: int) -> dict[int, float]:
    """``target=improved``: softmax(log prior + sigma * gain) over the legal actions of ``prior``, where
    ``gains`` holds each candidate's mean paired gain over the prior's move (that move's own is 0) and sigma
    grows with the ``samples`` behind them (IMPROVED_VISITS, IMPROVED_SCALE); a prior probability under 1e-12
    counts as 1e-12 (a sure network gives some moves less, and log(0) has no shift). An action that was not a
    candidate keeps its prior log-probability: its gain is unmeasured, so taken as the prior's move's (a
    completed Q-value, as Gumbel MuZero completes unvisited actions' with a value estimate). Without
    probabilities (a prior that only names a move) the target is the softmax of sigma * gain over the
    candidates alone. Unlike the move played, this target carries what every sample measured, also at
    positions where no gain was significant: noise that averages out over many training positions."""
    sigma = (IMPROVED_VISITS + samples) * IMPROVED_SCALE
    logits = ({a: math.log(max(p, 1e-12)) + sigma * gains.get(a, 0.0) for a, p in prior.items()} if prior is not None
              else {a: sigma * g for a, g in gains.items()})
    top = max(logits.values())
    weights = {a: math.exp(v - top) for a, v in logits.items()}
    total = sum(weights.values())
    return {a: w / total for a, w in sorted(weights.items())}


def _batchable(bot: Any) -> bool:
    """Whether rollouts ask ``bot`` in batches: a network (``act_batch``) that cannot read the state itself."""
    return (bot is not None and bot is not _SAME and getattr(bot, "act_batch", None) is not None
            and getattr(bot, "act_state", None) is None)


def _tempered(priors: dict[int, float], temperature: float) -> dict[int, float]:
    """``priors`` at ``temperature``: each probability to the power 1/T, normalised (T > 1 flattens)."""
    weights = {action: p ** (1.0 / temperature) for action, p in priors.items()}
    total = sum(weights.values())
    if not total > 0:
        return priors
    return {action: w / total for action, w in weights.items()}


def belief_refusal(game: Any) -> str | None:
    """Why ``belief=`` cannot weigh ``game``'s deals (nothing hidden, or moves simultaneous), or None."""
    rules = game.rules
    if game.simultaneous or not getattr(rules, "HIDDEN_FIELDS", None) or not hasattr(rules, "determinize_holding"):
        return (f"{game.name} hides no cards a belief could weigh; games with hidden cards: "
                f"{', '.join(_games_with_beliefs())}")
    return None


def _games_with_beliefs() -> list[str]:
    """The games whose rules deal a belief's hands (``determinize_holding``): those with hidden cards."""
    return [name for name in games() if hasattr(get_game(name).rules, "determinize_holding")]


def _games_with(declared: Callable[[SearchHooks], Any]) -> list[str]:
    """The games whose search declarations have what ``declared`` picks."""
    return [name for name in games() if declared(search_hooks(name))]


def make_mcts_bot(spec: str | BotSpec, game: Any, config: Any, seed: int | None, load_bot: Callable) -> MCTSBot:
    """The ``mcts`` bot a spec names (``load_bot`` calls this, handing itself in for the policies)."""
    return MCTSBot(game, config, seed, parse_options(spec, game.name), load_bot)
