"""tavernzoo: PettingZoo environments, self-play bots and tournaments for tabletop and chat games."""

__version__ = "0.1.0"
