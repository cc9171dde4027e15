"""``tavernzoo web``: play, watch and replay games in a browser, on loopback (web/, docs/web.md).

The command's parser is still written in web/__init__.py (``add_parser``, ``run_web``), which the web
package's own engineer owns; it imports nothing of the command line.
"""

from __future__ import annotations

from tavernzoo.web import add_parser, run_web

__all__ = ["add_parser", "run_web"]
