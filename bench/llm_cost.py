"""What an llm: seat costs per game: decisions per game and prompt characters per decision, every game.

    python bench/llm_cost.py [--games 20] [--seed 0]

Plays random-vs-random games at each game's default table (and Minefield with 4 players), and at every
decision of seat 0 builds the prompt the llm: bot would send (system prompt + the seat's text view with
every event line since its previous decision, ``history=turn``). Prints, per game, the mean decisions of
seat 0 per game and the mean prompt characters per decision; tokens are about characters / 4 for English
text with common tokenizers (the tiny test model of tests/llm_gguf.py tokenizes about 2x finer). Not a timed
test.
"""

from __future__ import annotations

import argparse
import random
import statistics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games per game (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from tavernzoo.agents.llm import SYSTEM_PROMPT
    from tavernzoo.agents.text_views import EventTracker, bounded_events, seat_legal, seat_view
    from tavernzoo.envs import Chance, get_game

    rng = random.Random(args.seed)
    print(f"{'game':<22}{'decisions/game':>16}{'chars/prompt':>14}{'~tokens/game':>14}")
    for name, config in (("tiny_minotaur", {}), ("minefield", {"num_players": 4}), ("ministeel", {}),
                         ("wyvern", {})):
        game = get_game(name)
        cfg = game.make_config(config)
        rules = game.rules
        decisions, sizes = [], []
        for _ in range(args.games):
            state = rules.new_game(cfg, Chance(rng.randrange(2**31)))
            tracker = EventTracker()  # every step's lines, as the table engine hands them to the bot
            tracker.see(game, state, 0)
            mine = 0
            while not rules.is_terminal(state):
                legal = seat_legal(game, state, 0)
                if legal:
                    mine += 1
                    since = bounded_events(tracker.take())
                    sizes.append(len(SYSTEM_PROMPT) + len(seat_view(game, state, 0, since).text()))
                if game.simultaneous:
                    rules.apply_joint(state, {seat: rng.choice(rules.legal_actions(state, seat))
                                              for seat in rules.acting_seats(state)})
                else:
                    rules.apply(state, rng.choice(rules.legal_actions(state)))
                tracker.see(game, state, 0)
            decisions.append(mine)
        per_game, per_prompt = statistics.mean(decisions), statistics.mean(sizes) if sizes else 0
        label = f"{name} ({rules.num_seats(cfg)}p)"
        print(f"{label:<22}{per_game:>16.1f}{per_prompt:>14.0f}{per_game * per_prompt / 4:>14.0f}")


if __name__ == "__main__":
    main()
