"""Evaluation: the match loop (:mod:`.match`) and its statistics (:mod:`.stats`)."""
