"""The learner's view of a multi-agent game, and the opponent league it plays against.

* :class:`LearnerSeat` — one game (the game's raw AEC env) in which one seat, drawn at random each
  episode, is the learner's; every other seat is played by an opponent drawn from the league. Any
  decision the learner owes on another player's turn (a reaction, an accept/decline) comes back to it,
  because the AEC env hands every decision to the seat that owes it. The reward is the learner's own:
  its cumulative AEC reward since its last decision.
* :class:`LearnerEnv` — that seat as a ``gymnasium.Env`` with ``action_masks()`` (passes SB3's
  ``check_env``; works under ``SubprocVecEnv`` and MaskablePPO).
* :class:`SelfPlayVecEnv` — many seats in one process as an SB3 ``VecEnv``: after the learner's
  actions, every game advances to the learner's next decision, and the policy opponents of all games
  act together in one batched forward pass per round instead of one call per game.

Both treat the learner's actions alike: an action in the action space that the mask forbids loses and
ends the episode (reward -1, terminated; ``info["illegal_action"]`` names it), as in PettingZoo
classic; anything outside the action space (``-1``, ``n``, a float, a bool) is refused before any game
moves, with a TypeError or ValueError naming it, since no policy over the space can produce it.
* :class:`League` — the opponent pool: built-in bots, frozen snapshots of the learner (a window of the
  last W), the current learner itself for ``latest_share`` of the seats, optional PFSP weighting.

A bot opponent hears its game's lifecycle as under any host (eval/table.py): ``begin_game`` with its seat
as the episode starts, ``game_over`` as it ends (returns None for a game cut short: the learner knocked
out, an illegal move), and ``close`` with :meth:`League.close` when training ends. A bot that keeps
something of its game (:func:`~tavernzoo.agents.base.keeps_game_state`: a ``cmd:`` program, Minefield's
heuristic, a search) plays one game at a time, so each seat of each game gets its own copy of it.
"""

from __future__ import annotations

import functools
import json
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from ..agents import load_bot
from ..agents.base import as_bot, keeps_game_state
from ..agents.infoset import feed
from ..agents.policy import MLPPolicy
from ..envs import Game
from ..envs.aec import as_action
from ..envs.make import make_env
from ..eval.table import tell_game_begins, tell_game_over
from .config import TrainConfig
from .lean_policy import TorchActor


def make_raw_env(game: Game, config: Any):
    """The game's raw AEC env (no wrappers: the learner and the league only ever play legal actions)."""
    return make_env(game, config, raw=True)


def outcome_score(reward: float) -> float:
    """The learner's result from its final return: a win 1, a draw (0) 0.5, a loss 0."""
    return 1.0 if reward > 0 else (0.5 if reward == 0 else 0.0)


# --- opponents -------------------------------------------------------------------------------------------


@dataclass
class Opponent:
    """A member of the pool: a scripted bot (``bot``, ``load`` making another copy from a seed) or a frozen
    policy (``policy``)."""

    name: str
    bot: Any = None
    policy: MLPPolicy | None = None
    load: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    # Whether the bot keeps its game's state (agents.base.keeps_game_state): then each seat gets a copy.
    one_game_at_a_time: bool = False
    games: int = 0
    score: float = 0.0  # the learner's summed score against this member

    _actor: Any = field(default=None, repr=False, compare=False)

    @property
    def learner_win_rate(self) -> float:
        return self.score / self.games if self.games else 0.5

    def batched_actor(self) -> TorchActor:
        """The policy evaluated with torch for the wide batches of :class:`SelfPlayVecEnv` (built again
        whenever ``policy`` is replaced, as the learner's copy is before every rollout)."""
        if self._actor is None or self._actor.policy is not self.policy:
            self._actor = TorchActor(self.policy)
        return self._actor


@dataclass
class League:
    """The pool of opponents and how seats are filled from it (see the module docstring)."""

    config: TrainConfig
    rng: random.Random
    builtins: list[Opponent] = field(default_factory=list)
    snapshots: list[Opponent] = field(default_factory=list)
    latest: Opponent | None = None
    # A resumed run's record against its latest self, kept until the learner's policy is set.
    _latest_record: tuple[int, float] = (0, 0.0)
    # Bots an earlier stretch of the run trained against that a resume's ``pool_bots`` left out: their records
    # stay in the checkpoints, so ``match`` can still say the result met them (agents/export.py
    # ``training_opponents``); one that comes back into the pool takes its record up again.
    retired: dict[str, dict[str, Any]] = field(default_factory=dict)
    _copies: list[Any] = field(default_factory=list)  # the bots' copies handed to game seats, closed with the league
    _games: list[LearnerSeat] = field(default_factory=list)  # the games its members play in, ended with the league

    @classmethod
    def create(cls, game: Game, game_config: Any, config: TrainConfig) -> League:
        league = cls(config, random.Random(config.seed + 1))
        for spec in config.pool_bots:
            load = functools.partial(load_bot, spec, game, game_config)
            bot = as_bot(load(seed=config.seed + 2))
            league.builtins.append(Opponent(spec, bot=bot, load=load, one_game_at_a_time=keeps_game_state(bot)))
        return league

    def copy_of(self, member: Opponent) -> Any:
        """Another copy of a bot member, for one seat of one game (a bot that keeps its game's state plays one
        game at a time); seeded by the order copies are made, which a seeded run repeats."""
        copy = as_bot(member.load(seed=self.config.seed + 3 + len(self._copies)))
        self._copies.append(copy)
        return copy

    def add_game(self, game: LearnerSeat) -> None:
        """A game the league's bots sit in: when the league closes, it ends for them."""
        self._games.append(game)

    def close(self) -> None:
        """Training is over: the games in play end for their bots (cut short), and every bot the league
        loaded is closed (a ``cmd:`` program is told to quit)."""
        for game in self._games:
            game.end_game()
        for bot in [member.bot for member in self.builtins] + self._copies:
            bot.close()

    @property
    def pool(self) -> list[Opponent]:
        return self.builtins + self.snapshots

    def members(self) -> list[Opponent]:
        return self.pool + ([self.latest] if self.latest else [])

    def set_latest(self, policy: MLPPolicy) -> None:
        if self.latest is None:
            games, score = self._latest_record
            self.latest = Opponent("latest", policy=policy, games=games, score=score)
        else:
            self.latest.policy = policy

    def add_snapshot(self, policy: MLPPolicy, timestep: int) -> None:
        self.snapshots.append(Opponent(f"snapshot@{timestep}", policy=policy))
        del self.snapshots[: -self.config.snapshot_window]

    def sample(self) -> Opponent:
        """One seat's opponent: the current learner for ``latest_share`` of seats, else a pool member."""
        pool = self.pool
        if self.latest is not None and (not pool or self.rng.random() < self.config.latest_share):
            return self.latest
        if self.config.pfsp:
            weights = [(1.0 - member.learner_win_rate) ** 2 + 1e-3 for member in pool]
            return self.rng.choices(pool, weights)[0]
        return self.rng.choice(pool)

    def sample_table(self, seats: int) -> list[Opponent]:
        """The opponents of one game's ``seats`` other seats, in seat order: each drawn on its own, or (the
        config's ``opponent_draw="table"``) one draw sitting in all of them."""
        if self.config.opponent_draw == "table":
            return [self.sample()] * seats
        return [self.sample() for _ in range(seats)]

    def record(self, opponents: list[Opponent], score: float) -> None:
        """Book one game's result against every distinct member that sat at the table."""
        for opponent in {id(o): o for o in opponents}.values():
            opponent.games += 1
            opponent.score += score

    def stats(self) -> dict[str, dict[str, float]]:
        return {o.name: {"games": o.games, "learner_win_rate": o.learner_win_rate} for o in self.members()}

    # -- persistence: JSON for the bookkeeping, policy.json/policy.npz per snapshot (no pickle) --

    def save(self, directory: Path) -> None:
        from ..envs.records import write_json_atomic

        directory.mkdir(parents=True, exist_ok=True)
        for index, snapshot in enumerate(self.snapshots):
            snapshot.policy.save(directory / f"snapshot_{index}")  # type: ignore[union-attr]
        state = {
            "builtins": [{"name": o.name, "games": o.games, "score": o.score} for o in self.builtins],
            "snapshots": [{"name": o.name, "games": o.games, "score": o.score, "dir": f"snapshot_{i}"}
                          for i, o in enumerate(self.snapshots)],
            "retired": list(self.retired.values()),
            "latest": {"games": self.latest.games, "score": self.latest.score} if self.latest else None,
            "rng": _rng_state_to_json(self.rng),
        }
        write_json_atomic(directory / "league.json", state)

    def load(self, directory: Path) -> None:
        state = json.loads((directory / "league.json").read_text())
        # The saved pool's records, by name in pool order: a spec the pool names twice (``pool_bots=heuristic,
        # heuristic,...`` weights the draws) has one record per copy, and today's copies take them up in order.
        saved: dict[str, list[dict[str, Any]]] = {}
        for entry in state["builtins"]:
            saved.setdefault(entry["name"], []).append(entry)
        retired = {entry["name"]: entry for entry in state.get("retired", []) if entry["name"] not in saved}
        for member in self.builtins:
            if saved.get(member.name):
                entry = saved[member.name].pop(0)
            elif member.name in retired:  # a bot an earlier stretch dropped comes back
                entry = retired.pop(member.name)
            else:
                continue
            member.games, member.score = entry["games"], entry["score"]
        # Saved copies today's pool has no member left for: a name still in the pool folds them into its last
        # copy, one no longer in it retires with their sum, so no game of the record is lost.
        for name, entries in saved.items():
            if not entries:
                continue
            games, score = sum(e["games"] for e in entries), sum(e["score"] for e in entries)
            kept = [member for member in self.builtins if member.name == name]
            if kept:
                kept[-1].games += games
                kept[-1].score += score
            else:
                retired[name] = {"name": name, "games": games, "score": score}
        self.retired = retired
        self.snapshots = [
            Opponent(entry["name"], policy=MLPPolicy.load(directory / entry["dir"]), games=entry["games"],
                     score=entry["score"])
            # The newest ``snapshot_window`` of them: a resumed run may keep fewer than it saved.
            for entry in state["snapshots"][-self.config.snapshot_window:]
        ]
        if state["latest"]:
            record = state["latest"]["games"], state["latest"]["score"]
            if self.latest:
                self.latest.games, self.latest.score = record
            else:
                self._latest_record = record
        self.rng.setstate(_rng_state_from_json(state["rng"]))


def _rng_state_to_json(rng: random.Random) -> list:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _rng_state_from_json(state: list) -> tuple:
    return (state[0], tuple(state[1]), state[2])


# --- one learner seat ------------------------------------------------------------------------------------


class LearnerSeat:
    """One game in which the learner holds one seat (see the module docstring)."""

    def __init__(self, game: Game, game_config: Any, league: League, seed: int):
        self.env = make_raw_env(game, game_config)
        league.add_game(self)
        self._rules = game.rules
        self._seat_of = {agent: seat for seat, agent in enumerate(self.env.possible_agents)}
        self.league = league
        config = league.config
        self._potential = getattr(game.rules, "potential", None) if config.shaping else None
        self.privileged = config.privileged_critic
        self._shaping, self._gamma = config.shaping, config.gamma
        self._last_potential = 0.0
        self.rng = random.Random(seed)
        self._generator = np.random.default_rng(seed)  # policy opponents' sampling, unbatched path
        self.learner = ""
        self.opponents: dict[str, Opponent] = {}
        # The bots at this game's seats (seat -> bot), told the game began and not yet that it ended.
        self.seated: dict[int, Any] = {}
        self._copies: dict[tuple[str, int], Any] = {}  # (member, k) -> this game's k-th copy of a member's bot
        self.episode_return = 0.0
        self.episode_length = 0

    def reset(self) -> None:
        # Not a Table per game (eval/table.py): the episode is the learner's, which may end before the game
        # does (knocked out of a four-player game), and the policy opponents move in batches across games;
        # so the bots hear their lifecycle through the table engine's helpers, here and in end_game().
        self.end_game()  # a game cut short (the learner's illegal move, a game over before its first decision)
        self.env.reset(seed=self.rng.randrange(2**63))
        agents = self.env.possible_agents
        self.learner = agents[self.rng.randrange(len(agents))]
        others = [agent for agent in agents if agent != self.learner]
        self.opponents = dict(zip(others, self.league.sample_table(len(others)), strict=True))
        self.seated = {}
        taken: dict[str, int] = defaultdict(int)  # each member's copies seated in this game so far
        for agent, opponent in self.opponents.items():
            if opponent.policy is None:
                self.seated[self._seat_of[agent]] = self._bot_for(opponent, taken)
        tell_game_begins(self.seated)
        self.episode_return = 0.0
        self.episode_length = 0

    def _bot_for(self, member: Opponent, taken: dict[str, int]) -> Any:
        """``member``'s bot for one more seat of this game: the one every game shares where it keeps nothing
        of a game, else this game's next copy of it (kept for its next games: as many copies as seats it
        has held at once)."""
        if not member.one_game_at_a_time:
            return member.bot
        key = (member.name, taken[member.name])
        taken[member.name] += 1
        if key not in self._copies:
            self._copies[key] = self.league.copy_of(member)
        return self._copies[key]

    def bot_of(self, agent: str) -> Any:
        """The bot at ``agent``'s seat (an opponent drawn from the league's bots)."""
        return self.seated[self._seat_of[agent]]

    def end_game(self) -> None:
        """Tell the seated bots the game ended: its returns if it is over, else None (cut short)."""
        if self.seated:
            state = self.env.unwrapped.game_state
            returns = [float(value) for value in self._rules.returns(state)] if self._rules.is_terminal(state) else None
            tell_game_over(self.seated, returns)
            self.seated = {}

    @property
    def learner_done(self) -> bool:
        env, learner = self.env, self.learner
        return learner not in env.terminations or env.terminations[learner] or env.truncations[learner]

    @property
    def learner_truncated(self) -> bool:
        return bool(self.env.truncations.get(self.learner, False))

    def pending_opponent(self) -> str | None:
        """Step past finished agents; the opponent agent that must act now, or None when the learner must
        act or its episode is over."""
        env = self.env
        while not self.learner_done:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            return None if agent == self.learner else agent
        return None

    def observe_learner(self) -> tuple[np.ndarray, np.ndarray]:
        """The learner's observation and mask; with a privileged critic the observation is followed by every
        other seat's, in turn order from the learner's (only the critic reads them: train/lean_policy.py)."""
        observation = self.env.observe(self.learner)
        if not self.privileged:
            return observation["observation"], observation["action_mask"]
        agents = self.env.possible_agents
        mine = agents.index(self.learner)
        others = [self.env.observe(agents[(mine + k) % len(agents)])["observation"] for k in range(1, len(agents))]
        return np.concatenate([observation["observation"], *others]), observation["action_mask"]

    def learner_reward(self) -> float:
        """The learner's reward since its last decision (PettingZoo's cumulative reward of that agent)."""
        return float(self.env._cumulative_rewards.get(self.learner, 0.0))

    def play_learner(self, action: int) -> None:
        self.env.step(int(action))
        self.episode_length += 1

    def play_opponent_alone(self, agent: str) -> None:
        """One opponent decision, computed for this game alone (the unbatched path)."""
        opponent = self.opponents[agent]
        observation = self.env.observe(agent)
        if opponent.policy is not None:
            action = opponent.policy.act(observation["observation"][None], observation["action_mask"][None],
                                         self._generator, deterministic=False)[0]
        else:
            bot = self.bot_of(agent)
            feed(bot, self.env, agent)  # a search bot (mcts) needs its seat's information state
            action = bot.act(observation)
        self.env.step(int(action))

    def begin_episode(self) -> None:
        """The learner's first decision of the episode is due: remember the potential there."""
        if self._potential is not None:
            self._last_potential = self._potential_now()

    def _potential_now(self) -> float:
        seat = self.env.possible_agents.index(self.learner)
        return float(self._potential(self.env.unwrapped.game_state, seat))

    def collect_reward(self) -> float:
        """The learner's reward for its last decision (the game's, added to the episode's return), plus
        the shaping term when shaping is on."""
        reward = self.learner_reward()
        self.episode_return += reward
        if self._potential is not None:
            # Potential 0 at the end of the episode keeps shaping from changing which policy is optimal.
            now = 0.0 if self.learner_done else self._potential_now()
            reward += self._shaping * (self._gamma * now - self._last_potential)
            self._last_potential = now
        return reward

    def finish_episode(self) -> dict[str, Any]:
        """Book the result with the league, tell the bots the game ended; the episode's info for SB3's
        Monitor-style logging."""
        self.end_game()
        score = outcome_score(self.episode_return)
        self.league.record(list(self.opponents.values()), score)
        return {"r": self.episode_return, "l": self.episode_length, "score": score,
                "opponents": sorted({o.name for o in self.opponents.values()})}


def learner_observation_size(game: Game, game_config: Any, config: TrainConfig) -> int:
    """The length of what the learner's network reads: its seat's observation, followed with a privileged
    critic by every other seat's (:meth:`LearnerSeat.observe_learner`)."""
    size = game.encoder.observation_size(game_config)
    return size * game.rules.num_seats(game_config) if config.privileged_critic else size


# --- the single-agent gymnasium env ----------------------------------------------------------------------


class LearnerEnv(gymnasium.Env):
    """One learner seat as a gymnasium env with ``action_masks()``; opponents act one call at a time."""

    metadata = {"render_modes": []}

    def __init__(self, game: Game, game_config: Any, league: League, seed: int = 0):
        super().__init__()
        self.seat = LearnerSeat(game, game_config, league, seed)
        size = learner_observation_size(game, game_config, league.config)
        self.observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        self.action_space = spaces.Discrete(len(game.action_names(game_config)))
        self._mask = np.ones(self.action_space.n, dtype=bool)

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.seat.rng.seed(seed)
        while True:
            self.seat.reset()
            self._advance()
            if not self.seat.learner_done:  # a game can end before the learner ever decides
                break
        self.seat.begin_episode()
        observation, self._mask = self.seat.observe_learner()
        return observation, {}

    def _advance(self) -> None:
        while (agent := self.seat.pending_opponent()) is not None:
            self.seat.play_opponent_alone(agent)

    def step(self, action: int):
        seat = self.seat
        action = as_action(action, self.action_space.n)
        if not self._mask[action]:
            # As in PettingZoo classic: an illegal move loses and ends the episode (masked learners never
            # make one; SB3's check_env does, with unmasked samples).
            observation, _ = seat.observe_learner()
            return observation, -1.0, True, False, {"illegal_action": action}
        seat.play_learner(action)
        self._advance()
        observation, self._mask = seat.observe_learner()
        reward = seat.collect_reward()
        if seat.learner_done:
            info = {"episode_result": seat.finish_episode()}
            return observation, reward, not seat.learner_truncated, seat.learner_truncated, info
        return observation, reward, False, False, {}

    def action_masks(self) -> np.ndarray:
        return self._mask.astype(bool)


# --- many learner seats, opponents batched ---------------------------------------------------------------


class LeagueVecEnv(VecEnv):
    """What the league's VecEnvs share: the learner's actions checked before any game moves, its masks, and
    SB3's per-env plumbing (one process, so every attribute is this object's). A subclass holds the masks in
    ``_masks`` and plays ``_actions`` in ``step_wait``."""

    _masks: np.ndarray
    _actions: list[int] | None

    def step_async(self, actions: np.ndarray) -> None:
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        # Checked before any game moves, so that a refused batch leaves every game as it was.
        self._actions = [as_action(action, self.action_space.n) for action in actions]

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self._masks[self._indices(indices)])
        raise AttributeError(f"{type(self).__name__} has no per-env method {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self, attr_name)

    def seed(self, seed: int | None = None):
        return [None] * self.num_envs

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)


class SelfPlayVecEnv(LeagueVecEnv):
    """``n`` learner seats stepped together; policy opponents act in one batched pass per round."""

    def __init__(self, game: Game, game_config: Any, league: League, n_envs: int, seed: int):
        self.seats = [LearnerSeat(game, game_config, league, seed * 1000 + i) for i in range(n_envs)]
        self.league = league
        self._np_rng = np.random.default_rng(seed)
        size = learner_observation_size(game, game_config, league.config)
        observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        action_space = spaces.Discrete(len(game.action_names(game_config)))
        self.render_mode = None
        super().__init__(n_envs, observation_space, action_space)
        self._observations = np.zeros((n_envs, size), dtype=np.float32)
        self._masks = np.ones((n_envs, action_space.n), dtype=bool)
        self._actions: np.ndarray | None = None

    # -- the batched heart --

    def _advance(self, indices: list[int]) -> None:
        """Play every opponent decision in these games until each waits for the learner or is over."""
        waiting = {i: agent for i in indices if (agent := self.seats[i].pending_opponent()) is not None}
        while waiting:
            by_policy: dict[int, list[tuple[int, str]]] = defaultdict(list)
            for i, agent in waiting.items():
                opponent = self.seats[i].opponents[agent]
                if opponent.policy is None:
                    seat = self.seats[i]
                    bot = seat.bot_of(agent)
                    feed(bot, seat.env, agent)  # a search bot needs its seat's information state
                    seat.env.step(int(bot.act(seat.env.observe(agent))))
                else:
                    by_policy[id(opponent.policy)].append((i, agent))
            for group in by_policy.values():
                observed = [self.seats[i].env.observe(agent) for i, agent in group]
                actor = self.seats[group[0][0]].opponents[group[0][1]].batched_actor()
                actions = actor.act(np.stack([o["observation"] for o in observed]),
                                     np.stack([o["action_mask"] for o in observed]), self._np_rng,
                                     deterministic=False)
                for (i, _), action in zip(group, actions, strict=True):
                    self.seats[i].env.step(int(action))
            waiting = {i: agent for i in waiting if (agent := self.seats[i].pending_opponent()) is not None}

    def _start(self, indices: list[int]) -> None:
        """Reset these games and advance them to the learner's first decision."""
        pending = list(indices)
        while pending:
            for i in pending:
                self.seats[i].reset()
            self._advance(pending)
            pending = [i for i in pending if self.seats[i].learner_done]
        for i in indices:
            self.seats[i].begin_episode()
            self._observations[i], self._masks[i] = self.seats[i].observe_learner()

    # -- the VecEnv API --

    def reset(self):
        self._start(list(range(self.num_envs)))
        return self._observations.copy()

    def step_wait(self):
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        illegal = {i: action for i, action in enumerate(self._actions) if not self._masks[i][action]}
        playing = [i for i in range(self.num_envs) if i not in illegal]
        for i in playing:
            self.seats[i].play_learner(self._actions[i])
        self._advance(playing)
        finished = []
        for i, seat in enumerate(self.seats):
            observation, mask = seat.observe_learner()
            if i in illegal:  # as in LearnerEnv: the illegal move loses and ends the episode
                rewards[i], dones[i] = -1.0, True
                infos[i] = {"terminal_observation": observation, "TimeLimit.truncated": False,
                            "illegal_action": illegal[i]}
                finished.append(i)
                continue
            rewards[i] = seat.collect_reward()
            if seat.learner_done:
                result = seat.finish_episode()
                dones[i] = True
                infos[i] = {"terminal_observation": observation, "TimeLimit.truncated": seat.learner_truncated,
                            "episode": {"r": result["r"], "l": result["l"]}, "episode_result": result}
                finished.append(i)
            else:
                self._observations[i], self._masks[i] = observation, mask
        if finished:
            self._start(finished)
        return self._observations.copy(), rewards, dones, infos
