"""MiniSteel v1's rules: the one engine of :mod:`.rules` with v1's options (:class:`~.rules.ConfigV1`:
no ``token_timing``; Card Draw tokens only in your own main phase).

``ministeel_v1`` is kept playable so that its records replay and its bots (``zoo:ministeel_v1``) play
the game they were trained on. Nothing here is a second engine: every function is v2's, and the rules
read ``config.draw_windows`` (always False for a ConfigV1) where the two versions differ.
"""

from .rules import *  # noqa: F403 - the whole engine; only the Config differs
from .rules import ConfigV1 as Config  # noqa: F401 - the Config a Game builds from its rules module
