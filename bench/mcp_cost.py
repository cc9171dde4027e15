"""What ``tavernzoo mcp``'s ``act`` results cost an MCP client per game, against the whole view after every act.

    python bench/mcp_cost.py [--games 5] [--game wyvern]

Plays the client's seat (0) against random opponents through :class:`tavernzoo.web.mcp.Tables` (no MCP
transport), choosing the legal action numbered ``game index mod n``; sums the characters of every ``act``
result (what changed since the client's last view) and of the whole view text (``view``, rules included) at
the same points. Tokens are characters / 4. Not a timed test.
"""

from __future__ import annotations

import argparse
import statistics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--game", default="wyvern")
    args = parser.parse_args()

    from tavernzoo.web.mcp import Tables

    acts, wholes = [], []
    for seed in range(args.games):
        tables = Tables()
        key = tables.new_table(args.game, opponents=["random"], seed=seed)["table"]
        act = whole = 0
        while legal := tables.legal_actions(key):
            act += len(tables.act(key, legal[seed % len(legal)]["number"])["text"])
            whole += len(tables.seat_view(key)[1].text())
        acts.append(act)
        wholes.append(whole)
        tables.close()
    mean = statistics.mean
    print(f"{args.game}: act results ~{mean(acts) / 4:,.0f} tokens a game, the whole view ~{mean(wholes) / 4:,.0f} "
          f"({mean(acts) / mean(wholes):.3f})")


if __name__ == "__main__":
    main()
