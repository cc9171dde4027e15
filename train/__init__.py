"""Self-play training (MaskablePPO with an opponent league) lands here with its own issue.

Nothing is exported yet: the package exists so that the installed layout (tavernzoo.train) is fixed.
"""
