"""The league's self-play on a compiled kernel (``TrainConfig.env_backend = "kernel"``; MiniSteel and Wyvern).

:class:`KernelSelfPlayVecEnv` is :class:`~.selfplay.SelfPlayVecEnv` with its games on the game's kernel
(envs/ministeel/vector.py's or envs/wyvern/vector.py's ``TableVectorEnv``, both envs/batched.py's): the same
league, the same episodes, the same VecEnv. Per
game the learner's seat is drawn at random and the other seats from the league (``League.sample_table``), as
``LearnerSeat.reset`` draws them and from the same per-game seeds. The pool bots ``random`` and
``heuristic`` play inside the kernel's step (their compiled forms); the learner's latest self, its
snapshots and pool bots that are trained networks (``zoo:ministeel``, ``zoo:wyvern``, ``BOT.onnx``, a checkpoint or run:
``tavernzoo exploit``'s league) are network policies: a kernel call stops at every seat they hold, and
each policy answers all the games waiting on it in one batched forward before the next call (a pool
network through its bot's own ``act_batch``, so it chooses as that bot does; the snapshots, all of the
learner's shape, in one stacked forward for all of them). So each learner step costs
one kernel call per round of network opponents, one forward per policy and round, and no Python game code.

Besides the VecEnv's steps (every game played on to its learner's next decision) it plays in rounds for
train/shared_forward.py's collector, which ``tavernzoo train`` uses: :meth:`~KernelSelfPlayVecEnv.deciders`
says who decides in each game (the learner, or which network member), :meth:`~KernelSelfPlayVecEnv.answer`
has network members answer their seats, :meth:`~KernelSelfPlayVecEnv.play_round` plays one move per game in
one kernel call and books and deals afresh the games whose learner's episode ended; so the learner's seats
and its latest self's are answered together in one forward, each game at its own pace. After rounds, the
games wait where they are (some on opponents): ``reset`` before stepping the VecEnv again.

What a learner sees is what SelfPlayVecEnv gives it: its observation and mask, its reward (the game's return
for its seat when its episode ends: knocked out, the game won or lost, or cut off: ``TimeLimit.truncated``),
``terminal_observation``, ``episode`` and ``episode_result`` (booked with the league) in the info of a
finished episode, and an illegal action losing the episode. With only compiled bots at the table the games
are those SelfPlayVecEnv deals from the same seed (tests/test_kernel_training.py replays them both ways);
a random bot's picks come from the kernel's own streams, and the network opponents sample from a generator
used in another order, so those games differ in their draws, not in their distribution.

What it cannot play is refused in one line before a run starts (:func:`kernel_refusal`): another game, a
pool bot that is neither compiled nor a network, reward shaping, options the kernel lacks.

With a privileged critic (``TrainConfig.privileged_critic``) the learner's observation is followed by every other
seat's, in turn order from the learner's, as ``LearnerSeat.observe_learner`` gives it: the kernel encodes them
(``TableVectorEnv.observe_seats``) for the learner's decisions and final views only; the opponents' networks and
the actor read the seat's own view, the table's.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

import numpy as np
from gymnasium import spaces

from ..envs import Game
from .config import TrainConfig
from .selfplay import League, LeagueVecEnv, Opponent, learner_observation_size, outcome_score

KERNEL_GAMES = ("ministeel", "wyvern")
"""The games whose tables run on a compiled kernel in training (each has envs/GAME/vector.py's
``TableVectorEnv`` and agents/GAME_kernel.py's compiled ``HEURISTIC``)."""
COMPILED_BOTS = ("random", "heuristic")
"""The pool bots that play inside the kernel's step."""


def is_network_bot(spec: str, game: Game) -> bool:
    """Whether a pool bot is a trained network (zoo, ONNX, a checkpoint or run), answered in batches between
    kernel calls through its bot's ``act_batch``."""
    from ..agents import builtin_bots
    from ..agents.spec import BotSpec

    return spec not in COMPILED_BOTS and BotSpec.parse(spec).names_network(builtin_bots(game))


def kernel_refusal(game: Game, game_config: Any, config: TrainConfig) -> str | None:
    """Why ``env_backend=kernel`` cannot train this run (one line), or None when it can."""
    if game.name not in KERNEL_GAMES:
        return (f"env_backend=kernel trains only {', '.join(KERNEL_GAMES)} (tables on a compiled kernel); "
                f"{game.name} trains with env_backend=python")
    unknown = [spec for spec in config.pool_bots if spec not in COMPILED_BOTS and not is_network_bot(spec, game)]
    if unknown:
        return (f"env_backend=kernel plays only the pool bots {', '.join(COMPILED_BOTS)} inside the kernel and "
                f"trained networks between its calls, not {unknown[0]!r}; drop it from pool_bots or train with "
                "env_backend=python")
    if config.shaping:
        return "env_backend=kernel has no reward shaping: set shaping=0 or train with env_backend=python"
    from ..envs.compiled import numba

    if numba is None:
        return "env_backend=kernel needs numba (pip install 'tavernzoo[kernel]'); env_backend=python runs without it"
    reason = _game_module(game.name, "kernel").unsupported(game_config)
    if reason is not None:
        return f"env_backend=kernel: the compiled kernel cannot play these options ({reason}); use env_backend=python"
    return None


def _game_module(game_name: str, part: str) -> Any:
    """envs/GAME/``part``.py of a game in :data:`KERNEL_GAMES` (imported only when a run trains on it)."""
    return importlib.import_module(f"..envs.{game_name}.{part}", __package__)


def compiled_bot(spec: str, game_name: str) -> Any:
    """The compiled form of a pool bot (:data:`COMPILED_BOTS`) for the game's tables (envs/GAME/vector.py)."""
    if spec == "heuristic":
        return importlib.import_module(f"..agents.{game_name}_kernel", __package__).HEURISTIC
    from ..envs.batched import RANDOM

    return RANDOM


class KernelSelfPlayVecEnv(LeagueVecEnv):
    """``n`` learner seats on the compiled kernel, the league's network opponents batched (module docstring)."""

    def __init__(self, game: Game, game_config: Any, league: League, n_envs: int, seed: int,
                 options: dict[str, Any] | None = None):
        vector = self._vector = _game_module(game.name, "vector")
        self.SKIP = vector.SKIP
        """The move that leaves a game as it is in :meth:`play_round`."""
        self.league = league
        # A compiled bot's controller is its place among the pool bots that have one, from FIRST_BOT on. A spec
        # listed twice (weighting the pool's draw, as on the envs) is one compiled bot.
        compiled = list(dict.fromkeys(spec for spec in league.config.pool_bots if spec in COMPILED_BOTS))
        self._bot_codes = {spec: vector.FIRST_BOT + k for k, spec in enumerate(compiled)}
        bots = tuple(compiled_bot(spec, game.name) for spec in self._bot_codes)
        self.table = vector.TableVectorEnv(n_envs, bots=bots, **(options or {}))
        self.players = self.table.num_players
        # Each game's own generator, seeded as SelfPlayVecEnv seeds its LearnerSeat: the same deals and seats.
        self._rngs = [random.Random(seed * 1000 + i) for i in range(n_envs)]
        self._np_rng = np.random.default_rng(seed)
        self._opponents: list[list[Opponent | None]] = [[None] * self.players for _ in range(n_envs)]
        # Which network member holds each seat (an index into _members; -1 for the learner and compiled bots).
        self._member_at = np.full((n_envs, self.players), -1, dtype=np.int64)
        self._members: list[Opponent] = []
        self._member_index: dict[int, int] = {}
        self._lengths = np.zeros(n_envs, dtype=np.int64)
        self.privileged = league.config.privileged_critic
        size = learner_observation_size(game, game_config, league.config)
        action_space = spaces.Discrete(len(game.action_names(game_config)))
        self.render_mode = None
        super().__init__(n_envs, spaces.Box(0.0, 1.0, (size,), np.float32), action_space)
        self._observations = np.zeros((n_envs, size), dtype=np.float32)
        self._masks = np.ones((n_envs, action_space.n), dtype=bool)
        self._actions: list[int] | None = None
        self._games = np.arange(n_envs)
        self._deciders: tuple[np.ndarray, np.ndarray] | None = None  # deciders() until the tables move
        self._stack: tuple[list[int], Any] | None = None  # the snapshots' StackedActors, with their ids

    # -- the batched heart --

    def _deal(self, games: list[int]) -> None:
        """Deal these games afresh, each with its learner seat and opponents drawn as LearnerSeat.reset draws them."""
        seeds, learners, controllers = [], [], np.zeros((len(games), self.players), dtype=np.int64)
        for row, g in enumerate(games):
            rng = self._rngs[g]
            seeds.append(rng.randrange(2**63))
            learner = rng.randrange(self.players)
            learners.append(learner)
            drawn = iter(self.league.sample_table(self.players - 1))
            seated = [None if seat == learner else next(drawn) for seat in range(self.players)]
            self._opponents[g] = seated
            for seat, member in enumerate(seated):
                if member is None:
                    self._member_at[g, seat] = -1
                elif member.policy is None and member.name in self._bot_codes:
                    self._member_at[g, seat] = -1
                    controllers[row, seat] = self._bot_codes[member.name]
                else:
                    self._member_at[g, seat] = self._member_index_of(member)
            self._lengths[g] = 0
        self._deciders = None
        self.table.deal(games, seeds, learners, controllers)

    def _member_index_of(self, member: Opponent) -> int:
        index = self._member_index.get(id(member))
        if index is None:
            index = self._member_index[id(member)] = len(self._members)
            self._members.append(member)
        return index

    def _play(self, actions: np.ndarray) -> np.ndarray:
        """One kernel call with these actions, then rounds of the network opponents' batched forwards and
        kernel calls until every game played waits for the learner or has ended for it; the ends bits."""
        vector, table = self._vector, self.table
        ends = self._table_play(actions)
        while True:
            to_act = table.to_act()
            waiting = np.flatnonzero((ends == 0) & (to_act != table.learners))
            if not waiting.size:
                return ends
            moves = np.full(self.num_envs, vector.SKIP, dtype=np.int64)
            self.answer(waiting, self._member_at[waiting, to_act[waiting]], moves)
            ends = self._table_play(moves)

    def _table_play(self, moves: np.ndarray) -> np.ndarray:
        self._deciders = None
        return self.table.play(moves)

    def answer(self, games: np.ndarray, members: np.ndarray, moves: np.ndarray) -> None:
        """Each network member answers its seats in ``games`` (``members``: the member at each one's deciding
        seat, an index into :attr:`members`) in one batched call, into ``moves``; the league's snapshots, where
        two or more have seats to answer, together in one stacked forward (:class:`~.lean_policy.StackedActors`:
        each layer one product over all of them, which saves the calls, not the reading of their weights)."""
        table, stack = self.table, self._snapshot_stack()
        stacked: dict[int, tuple[np.ndarray, Opponent]] = {}  # a snapshot's place in the stack -> its games
        for index in np.unique(members).tolist():
            chosen = games[members == index]
            member = self._members[index]
            if member.policy is None:  # a pool network: its bot chooses, as it would at any table
                moves[chosen] = member.bot.act_batch(table.observations[chosen], table.masks[chosen])
            elif stack is not None and id(member.policy) in stack[0]:
                stacked[stack[0].index(id(member.policy))] = chosen, member
            else:
                moves[chosen] = member.batched_actor().act(table.observations[chosen], table.masks[chosen],
                                                           self._np_rng, deterministic=False)
        if len(stacked) == 1:  # one snapshot to answer: its own forward reads only its own weights
            (chosen, member), = stacked.values()
            moves[chosen] = member.batched_actor().act(table.observations[chosen], table.masks[chosen],
                                                       self._np_rng, deterministic=False)
        elif stacked:
            empty = np.zeros(0, dtype=np.int64)
            places = [stacked[k][0] if k in stacked else empty for k in range(len(stack[0]))]
            picks = stack[1].act([table.observations[chosen] for chosen in places],
                                 [table.masks[chosen] for chosen in places])
            for chosen, actions in zip(places, picks, strict=True):
                moves[chosen] = actions

    def _snapshot_stack(self) -> tuple[list[int], Any] | None:
        """The league's snapshots stacked for one forward (their policies' ids, in the stack's order), built
        again when a snapshot joins or leaves; None with fewer than two or shapes that differ."""
        from .lean_policy import StackedActors

        policies = [snapshot.policy for snapshot in self.league.snapshots]
        key = [id(policy) for policy in policies]
        if self._stack is None or self._stack[0] != key:
            fits = len(policies) > 1 and StackedActors.fit(policies)
            self._stack = (key, StackedActors(policies) if fits else None)
        return self._stack if self._stack[1] is not None else None

    def _start(self, games: list[int]) -> None:
        """Deal these games and play them to the learner's first decision, dealing again any game that ends
        for the learner before it (in the order SelfPlayVecEnv._start draws, so seeded runs match)."""
        pending = list(games)
        while pending:
            self._deal(pending)
            moves = np.full(self.num_envs, self._vector.SKIP, dtype=np.int64)
            moves[pending] = self._vector.NO_ACTION
            ends = self._play(moves)
            pending = [g for g in pending if ends[g]]
        self._observations[games] = self.learner_views(games)
        self._masks[games] = self.table.masks[games]

    def learner_views(self, games: Any) -> np.ndarray:
        """What the learner's network reads in each of ``games`` (where the learner decides, or its episode just
        ended): its seat's observation, followed with a privileged critic by every other seat's in turn order
        from the learner's (``LearnerSeat.observe_learner``'s layout)."""
        table = self.table
        games = np.asarray(games, dtype=np.int64)
        own = table.observations[games]
        if not self.privileged:
            return own
        n = self.players
        offsets = np.tile(np.arange(1, n), len(games))
        seats = (np.repeat(table.learners[games], n - 1) + offsets) % n
        others = table.observe_seats(np.repeat(games, n - 1), seats)
        return np.concatenate([own, others.reshape(len(games), (n - 1) * own.shape[1])], axis=1)

    # -- the VecEnv API --

    def reset(self):
        self._start(list(range(self.num_envs)))
        return self._observations.copy()

    def step_wait(self):
        vector, table = self._vector, self.table
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        moves = np.asarray(self._actions, dtype=np.int64)
        illegal = ~self._masks[np.arange(self.num_envs), moves]
        self._lengths[~illegal] += 1
        ends = self._play(np.where(illegal, vector.SKIP, moves)).copy()
        finished = np.flatnonzero(illegal | (ends != 0)).tolist()
        for g in finished:
            dones[g] = True
            if illegal[g]:  # as in SelfPlayVecEnv: the illegal move loses and ends the episode
                rewards[g] = -1.0
                infos[g] = {"terminal_observation": self._observations[g].copy(), "TimeLimit.truncated": False,
                            "illegal_action": int(moves[g])}
                continue
            rewards[g], infos[g] = self._finish(g, int(ends[g]))
        going = np.flatnonzero(~dones)
        self._observations[going] = self.learner_views(going)
        self._masks[going] = table.masks[going]
        if finished:
            self._start(finished)
        return self._observations.copy(), rewards, dones, infos

    def _finish(self, g: int, ends: int) -> tuple[float, dict[str, Any]]:
        """Book game ``g``'s finished episode with the league: the learner's reward (only the end of its
        episode pays it: knocked out, or the game over: its return then) and the episode's info."""
        table = self.table
        reward = float(table.values[g, table.learners[g]])
        score = outcome_score(reward)
        opponents = [member for member in self._opponents[g] if member is not None]
        self.league.record(opponents, score)
        result = {"r": reward, "l": int(self._lengths[g]), "score": score,
                  "opponents": sorted({member.name for member in opponents})}
        return reward, {"terminal_observation": self.learner_views([g])[0],
                        "TimeLimit.truncated": bool(ends & self._vector.TRUNCATED),
                        "episode": {"r": result["r"], "l": result["l"]}, "episode_result": result}

    # -- rounds: the collector of train/shared_forward.py --
    # Between calls every game waits on a Python seat (the learner's or a network opponent's): after reset(),
    # and after each play_round, which deals a game afresh the moment the learner's episode ends. A game's
    # own pace is its own: some wait on the learner while others wait on opponents.

    @property
    def members(self) -> list[Opponent]:
        """The network members that have held a seat, by the index :meth:`deciders` gives."""
        return self._members

    def index_of(self, member: Opponent | None) -> int | None:
        """``member``'s index in :attr:`members`, or None where it has not held a seat."""
        return self._member_index.get(id(member))

    def deciders(self) -> tuple[np.ndarray, np.ndarray]:
        """Per game: whether the learner decides now, and the index (into :attr:`members`) of the network
        member holding the deciding seat (-1 where it is the learner's). Read-only arrays, kept until the
        tables move."""
        if self._deciders is None:
            to_act = self.table.to_act()
            self._deciders = (to_act == self.table.learners, self._member_at[self._games, to_act])
            for array in self._deciders:
                array.flags.writeable = False
        return self._deciders

    def play_round(self, moves: np.ndarray) -> list[tuple[int, float, dict[str, Any]]]:
        """Play ``moves`` (one per game: the deciding seat's action, or :attr:`SKIP` to leave the game as it is)
        in one kernel call; every game in which the learner's episode ended is booked (as ``step_wait``
        books it) and dealt afresh, played to its first Python seat. Returns ``(game, reward, info)`` for
        each episode that ended, in game order; a game over before the learner's first decision gives none
        (it is dealt again, as ``reset`` deals again)."""
        learner_turn, _ = self.deciders()
        played = moves != self._vector.SKIP
        self._lengths[played & learner_turn] += 1
        ends = self._table_play(moves)
        ended = np.flatnonzero(played & (ends != 0)).tolist()
        finished = [(g, *self._finish(g, int(ends[g]))) for g in ended if self._lengths[g]]
        pending = ended
        while pending:
            self._deal(pending)
            moves = np.full(self.num_envs, self._vector.SKIP, dtype=np.int64)
            moves[pending] = self._vector.NO_ACTION
            ends = self._table_play(moves)
            pending = [g for g in pending if ends[g]]
        return finished
