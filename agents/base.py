"""What bots share: the base class of every bot, the one way hosts drive one, the legal actions of a mask.

Every host (the game loop, the tournament's guard, the training report, expert labelling, the bot
server) calls the same hooks, in the same order, on every bot:

==============================================  =============================================  ===========
hook                                            when the host calls it                         default
==============================================  =============================================  ===========
``begin_game(seat, seed)``                      before each game: the seat it holds; ``seed``  ``reset()``
                                                None (keep your own) or a per-game seed
``reset()``                                     (by ``begin_game``) a new game                 nothing
``observe_view(view)``                          before each ``act``, if ``wants_view``         nothing
``observe_information_state(state, seat)``      before each ``act``, if                        nothing
                                                ``wants_information_state``
``observe_history(moves)``                      before each ``act``, if ``wants_history``: the  nothing
                                                moves so far as the seat saw them
                                                (agents/infoset.py ``public_history``)
``observe_events(lines)``                        when the game is dealt and after every rules   nothing
                                                step (anyone's), if ``wants_events``: the
                                                event lines that step showed the seat
``act(observation) -> int``                     its seat's turn                                (required)
``game_over(returns, seat)``                    after each game (``returns`` None after a      nothing
                                                forfeit)
``game_stats() -> dict | None``                  after each game: the bot's own counts (an      None
                                                ``llm:`` bot's requests, tokens, latency)
``close()``                                     when the host is done with the bot             nothing
==============================================  =============================================  ===========

A search (``mcts:prior=BOT,value=BOT``, agents/mcts.py) asks two more things of a policy bot; the base's
defaults say "not this bot":

============================================  =======================================================  =========
method                                        what                                                     default
============================================  =======================================================  =========
``action_probabilities(observations, masks)`` the policy's probability of each action per row (0       None
                                              where masked), shape (batch, actions)
``check_value_head()``                        raise a ValueError saying why the bot has no value head  raises
``value_estimates(observations)``             the value head's estimate of each row's seat's final     raises
                                              return, shape (batch,)
============================================  =======================================================  =========

The luck meter (eval/luck.py) asks one more: ``move_probabilities(observations, masks)``, the distribution the
bot draws its moves from, per row, where the bot draws them from a known distribution given the observation
alone (the random bot, a policy that samples); None (the default) for a bot that names its move without a draw
(the heuristics, a network's best action) or does not say. A policy's ``action_probabilities`` are its network's
wherever it plays its best action; ``move_probabilities`` are what it plays.

Built-in bots subclass :class:`BotBase`. Hosts take any object with ``act`` and ``reset`` (the ``Bot``
protocol: a bot someone writes for themselves need not subclass anything) through :func:`as_bot`, the
one place that asks an object which hooks it has. Programs speaking the bot protocol (``cmd:``) are
:class:`~tavernzoo.agents.external.ExternalBot`, a BotBase like the others.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class BotBase:
    """The base of a bot: a default for every hook a host calls (the table in the module docstring)."""

    name = "bot"
    wants_view = False
    """True: the host hands the seat's view (``observe_view``) before each ``act``."""
    wants_information_state = False
    """True: the host hands the seat's information state (``observe_information_state``) before each
    ``act``; building one clones and redeals the game, so only search bots ask."""
    wants_history = False
    """True: the host hands the moves of the game so far as the seat saw them (``observe_history``) before each
    ``act``: a belief over the hidden cards (``mcts:belief=BOT``) weighs the others' moves."""
    wants_events = False
    """True: the host hands the seat's event lines of every rules step (``observe_events``), so the bot
    knows everything that happened since its previous decision (the ``llm:`` bot tells its model)."""

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        self.reset()

    def reset(self) -> None:
        pass

    def observe_view(self, view: dict[str, Any]) -> None:
        pass

    def observe_information_state(self, state: Any, seat: int) -> None:
        pass

    def observe_history(self, moves: list[tuple[int, int]]) -> None:
        pass

    def observe_events(self, lines: list[str]) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define act(observation)")

    def game_over(self, returns: Any, seat: int) -> None:
        pass

    def game_stats(self) -> dict[str, Any] | None:
        """Counts of the game just played that results tables sum per bot (None: nothing to count)."""
        return None

    def close(self) -> None:
        pass

    def action_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        """The policy's action probabilities per row (0 where masked), or None: this bot only names a move."""
        return None

    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        """The probabilities the bot draws its moves from per row (0 where masked), where it draws them from a
        known distribution given the observation alone; None: it names its move without a draw, or does not say."""
        return None

    def check_value_head(self) -> None:
        """Nothing if ``value_estimates`` works; else a ValueError saying why not and what to use instead."""
        raise ValueError(f"{self.name} has no value head: value= takes a trained policy (a checkpoint or training "
                         "run directory, or an .onnx bot exported with its value output)")

    def value_estimates(self, observations: np.ndarray) -> np.ndarray:
        """The value head's estimate of the final return of each row's seat, shape (batch,)."""
        self.check_value_head()
        raise NotImplementedError(f"{type(self).__name__} must define value_estimates(observations)")


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Rows of probabilities from logits, 0 where ``masks`` is 0 (every row must have a legal action)."""
    logits = np.where(np.asarray(masks, dtype=bool), logits, -np.inf)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def as_bot(bot: Any) -> BotBase:
    """``bot`` with every hook: itself if it is a :class:`BotBase`, else a :class:`HookedBot` around it."""
    return bot if isinstance(bot, BotBase) else HookedBot(bot)


class HookedBot(BotBase):
    """A bot that is no :class:`BotBase` (only ``act`` and ``reset`` are required), with every hook: each
    one it defines is called, the others are the defaults."""

    def __init__(self, bot: Any):
        self.bot = bot
        self.name = getattr(bot, "name", type(bot).__name__)
        self.wants_view = hasattr(bot, "observe_view")
        self.wants_events = hasattr(bot, "observe_events")
        self.wants_history = hasattr(bot, "observe_history") and getattr(bot, "wants_history", True)

    @property
    def wants_information_state(self) -> bool:  # asked each move: a bot may change its mind
        return hasattr(self.bot, "observe_information_state") and getattr(self.bot, "wants_information_state", True)

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        begin = getattr(self.bot, "begin_game", None)
        if begin is None:
            self.bot.reset()
        elif seed is None:
            begin(seat)  # a begin_game(seat) written before seeds were passed
        else:
            begin(seat, seed)

    def reset(self) -> None:
        self.bot.reset()

    def observe_view(self, view: dict[str, Any]) -> None:
        self.bot.observe_view(view)

    def observe_information_state(self, state: Any, seat: int) -> None:
        self.bot.observe_information_state(state, seat)

    def observe_history(self, moves: list[tuple[int, int]]) -> None:
        self.bot.observe_history(moves)

    def observe_events(self, lines: list[str]) -> None:
        self.bot.observe_events(lines)

    def act(self, observation: dict[str, Any]) -> int:
        return self.bot.act(observation)

    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        probabilities = getattr(self.bot, "move_probabilities", None)
        return probabilities(observations, masks) if probabilities is not None else None

    def game_over(self, returns: Any, seat: int) -> None:
        game_over = getattr(self.bot, "game_over", None)
        if game_over is not None:
            game_over(returns, seat)

    def game_stats(self) -> dict[str, Any] | None:
        game_stats = getattr(self.bot, "game_stats", None)
        return game_stats() if game_stats is not None else None

    def close(self) -> None:
        close = getattr(self.bot, "close", None)
        if close is not None:
            close()


def gives_probabilities(bot: Any, game: Any, config: Any) -> bool:
    """Whether ``bot`` is a policy that gives action probabilities in ``game`` under ``config`` (asked once,
    on a blank observation): a bot that only names its move answers None."""
    observation = np.zeros((1, game.encoder.observation_size(config)), dtype=np.float32)
    mask = np.ones((1, len(game.action_names(config))), dtype=np.int8)
    return bot.action_probabilities(observation, mask) is not None


def keeps_game_state(bot: Any) -> bool:
    """Whether ``bot`` keeps something of the game it plays: its class has its own ``begin_game``, ``reset``
    or ``game_over`` (a program's process, a conversation, what it saw of the others). Such a bot plays one
    game at a time; one that keeps nothing (BotBase's hooks) may sit at many games at once."""
    kind = type(as_bot(bot))
    return any(getattr(kind, hook) is not getattr(BotBase, hook) for hook in ("begin_game", "reset", "game_over"))


def legal_actions(observation: dict[str, Any], bot_name: str) -> list[int]:
    """The legal action indices of an observation's mask; a bot asked to act on an all-zero mask (an agent
    that is not to act) fails loudly instead of inventing a move."""
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    if not legal:
        raise ValueError(f"{bot_name} bot was asked to act with an all-zero action mask")
    return legal


class RuleBot(BotBase):
    """Base of the built-in rule-based bots that keep nothing between games: they hold the game's config
    (the game's defaults when none is given, if ``config_type`` is set) and ``reset()`` does nothing."""

    name = "rule-based"
    config_type: type | None = None

    def __init__(self, config: Any = None, seed: int | None = None):
        if config is None and self.config_type is not None:
            config = self.config_type()
        self.config = config
