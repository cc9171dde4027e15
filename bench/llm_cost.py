"""What an llm: seat costs per game: decisions, requests and the characters sent, every game.

    python bench/llm_cost.py [--games 20] [--seed 0] [--options history=none,view=full ...]

Plays random-vs-random games at each game's default table (and Minefield with 4 players). Seat 0 is the
``llm:`` bot itself, handed every step's events as the table engine hands them, whose server is a stub that
answers the move the random player chose (so the games are the same whatever the bot does). Prints, per
game, the means per game of seat 0's decisions, its requests (decisions with one legal action are played
without one), the characters of every message of every request (``sent``), and of those the characters
that are not a prefix of the seat's previous request (``new``: what a server that caches a prompt's prefix,
as llama.cpp's does and several hosted APIs do, has to read afresh; the first request of a game counts
whole). Tokens are about characters / 4 for English text with common tokenizers (the tiny test model of
tests/llm_gguf.py tokenizes about 2x finer). ``vs first``: the tokens new per game against the first measure
of issue 51 (every prompt whole, one request a decision, no cache: :data:`FIRST_MEASURE`). Each ``--options``
(the ``llm:`` spec's options, comma-separated; ``default``: none) is measured on the same games, one after the
other. Every answer the stub gives is legal, so ``refused`` (illegal answers and forfeits) must read 0: a
harness change that made a legal answer unreadable shows there. ``--breakdown`` adds, per game, where the new
characters go: each prompt section (by its ``##`` heading), the answers kept in the conversation, the system
message. Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics


class StubClient:
    """Stands in for the server: records each request's messages and answers the move chosen for it."""

    def __init__(self):
        self.answer = ""
        self.requests: list[list[dict[str, str]]] = []

    def complete(self, messages, deadline, extra):
        from tavernzoo.agents.llm import Completion

        self.requests.append([dict(message) for message in messages])
        return Completion(json.dumps({"action": self.answer}), 0, 0, 0.0)

    def scrub(self, text: str) -> str:
        return text


FIRST_MEASURE = {"tiny_minotaur": 6_700, "minefield": 760, "ministeel": 21_200, "wyvern": 271_000}
"""Tokens sent a game by seat 0 when issue 51 was filed (docs/llm.md, "Cost per game"): the baseline of its
target (Wyvern at most a tenth, MiniSteel at most a third)."""


def shared_prefix(before: str, after: str) -> int:
    """The length of the longest common prefix of two strings."""
    common = os.path.commonprefix([before, after])
    return len(common)


def request_text(messages: list[dict[str, str]]) -> str:
    """A request's messages as one string, in the order a server reads them (roles mark the boundaries)."""
    return "".join(f"\x00{message['role']}\x00{message['content']}" for message in messages)


def new_by_section(previous: list[dict[str, str]], messages: list[dict[str, str]], into: dict[str, int]) -> None:
    """Add to ``into`` the characters of ``messages`` that are not a prefix of ``previous`` (one request and
    the seat's one before it), by where they stand: the system message, an answer kept in the conversation,
    or the user message's section (its ``##`` heading; text before any heading counts as ``(opening)``)."""
    start = shared_prefix(request_text(previous), request_text(messages)) if previous else 0
    at = 0
    for message in messages:
        head = len(message["role"]) + 2
        begin, end = at + head, at + head + len(message["content"])
        at = end
        if end <= start:
            continue
        text = message["content"][max(0, start - begin):]
        offset = len(message["content"]) - len(text)
        if message["role"] != "user":
            into[message["role"]] = into.get(message["role"], 0) + len(text)
            continue
        # The sections of the whole message, counted from where the new text starts.
        content = message["content"]
        marks = [m.start() for m in re.finditer(r"(?m)^## ", content)]
        bounds = [0, *marks, len(content)]
        for left, right in zip(bounds, bounds[1:], strict=False):
            if right <= offset or left == right:
                continue
            piece = content[max(left, offset):right]
            heading = content[left:].split("\n", 1)[0] if left in marks else "(opening)"
            name = re.sub(r" \(.*", "", heading.removeprefix("## "))
            into[name] = into.get(name, 0) + len(piece)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games per game (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--options", nargs="+", default=["default"],
                        help="the llm: spec options to measure, one set per argument (default: the defaults)")
    parser.add_argument("--only", nargs="+", default=None, help="measure only these games (other games' draws are "
                        "skipped too, so the games measured differ from a full run's)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also print where the new characters go, per prompt section")
    args = parser.parse_args()
    for options in args.options:
        try:
            measure(args, options)
        except ValueError as error:  # a bad option: the spec's one sentence
            raise SystemExit(f"error: {error}") from None


def measure(args, options: str) -> None:

    from tavernzoo.agents.llm import LLMBot, parse_llm_spec
    from tavernzoo.agents.text_views import EventTracker, seat_legal
    from tavernzoo.envs import Chance, get_game

    rng = random.Random(args.seed)
    spec = parse_llm_spec("llm:bench@http://127.0.0.1:9/v1" + ("" if options == "default" else "," + options))
    print(f"\noptions: {options}")
    print(f"{'game':<20}{'decisions':>11}{'requests':>10}{'sent chars':>12}{'new chars':>11}"
          f"{'~tokens sent':>14}{'~tokens new':>13}{'vs first':>10}{'refused':>9}   (means per game)")
    for name, config in (("tiny_minotaur", {}), ("minefield", {"num_players": 4}), ("ministeel", {}),
                         ("wyvern", {})):
        if args.only and name not in args.only:
            continue
        game = get_game(name)
        cfg = game.make_config(config)
        rules = game.rules
        names = game.action_names(cfg)
        bot = LLMBot(cfg, 0, spec, game)
        client = bot.client = StubClient()
        decisions, requests, sent, new, refused = [], [], [], [], 0
        sections: dict[str, int] = {}
        for _ in range(args.games):
            state = rules.new_game(cfg, Chance(rng.randrange(2**31)))
            tracker = EventTracker()  # every step's lines, as the table engine hands them to the bot
            bot.begin_game(0)
            bot.observe_events(tracker.see(game, state, 0))
            client.requests.clear()
            mine = 0
            while not rules.is_terminal(state):
                # The moves are drawn as random play draws them, seat 0's included, so every run of this
                # script plays the same games.
                if game.simultaneous:
                    joint = {seat: rng.choice(rules.legal_actions(state, seat)) for seat in rules.acting_seats(state)}
                    chosen = joint.get(0)
                else:
                    action = rng.choice(rules.legal_actions(state))
                    chosen = action if rules.current_seat(state) == 0 else None
                if chosen is not None:
                    mine += 1
                    client.answer = names[chosen]
                    bot.observe_view(game.encoder.view(state, 0))
                    bot.observe_information_state(rules.information_state(state, 0), 0)
                    legal = set(seat_legal(game, state, 0))
                    played = bot.act({"observation": None, "action_mask": [i in legal for i in range(len(names))]})
                    assert played == chosen, (name, played, chosen)
                if game.simultaneous:
                    rules.apply_joint(state, joint)
                else:
                    rules.apply(state, action)
                bot.observe_events(tracker.see(game, state, 0))
            stats = bot.game_stats()
            refused += stats["illegal"] + stats["forfeits"]
            texts = [request_text(messages) for messages in client.requests]
            if args.breakdown:
                for k, messages in enumerate(client.requests):
                    new_by_section(client.requests[k - 1] if k else [], messages, sections)
            decisions.append(mine)
            requests.append(len(texts))
            sent.append(sum(map(len, texts)))
            new.append(sum(len(text) - (shared_prefix(texts[k - 1], text) if k else 0)
                           for k, text in enumerate(texts)))
        label = f"{name} ({rules.num_seats(cfg)}p)"
        mean = statistics.mean
        print(f"{label:<20}{mean(decisions):>11.1f}{mean(requests):>10.1f}{mean(sent):>12.0f}{mean(new):>11.0f}"
              f"{mean(sent) / 4:>14.0f}{mean(new) / 4:>13.0f}{mean(new) / 4 / FIRST_MEASURE[name]:>10.3f}"
              f"{refused:>9}")
        if args.breakdown:
            total = sum(sections.values())
            for section, chars in sorted(sections.items(), key=lambda item: -item[1]):
                print(f"    {section:<58}{chars / args.games:>10.0f} new chars a game  {chars / total:>6.1%}")


if __name__ == "__main__":
    main()
