"""Bot specs parsed once (agents/spec.py): kinds, round trips, and which specs touch this machine."""

from __future__ import annotations

import pytest

from tavernzoo.agents.spec import BotSpec

SPECS = [
    ("random", "name", "random", None, ()),
    ("heuristic", "name", "heuristic", None, ()),
    ("runs/x@sample", "name", "runs/x", "sample", ()),
    ("runs/x@", "name", "runs/x", "", ()),
    ("mcts", "mcts", "", None, ()),
    ("mcts:400", "mcts", "", None, ("400",)),
    ("mcts:400,time=0.5,rollout=heuristic", "mcts", "", None, ("400", "time=0.5", "rollout=heuristic")),
    ("cmd:python3 bot.py --fast", "cmd", "python3 bot.py --fast", None, ()),
    ("cmd:x.onnx", "cmd", "x.onnx", None, ()),
    ("zoo:", "zoo", "", None, ()),
    ("zoo:wyvern@sample", "zoo", "wyvern", "sample", ()),
    ("zoo:x.onnx", "zoo", "x.onnx", None, ()),
    ("bots/b.onnx", "onnx", "bots/b.onnx", None, ()),
]


@pytest.mark.parametrize("text, kind, name, mode, options", SPECS)
def test_a_spec_parses_to_its_kind_and_formats_back(text, kind, name, mode, options):
    spec = BotSpec.parse(text)
    assert (spec.kind, spec.name, spec.mode, spec.options) == (kind, name, mode, options)
    assert spec.format() == text == str(spec)
    assert BotSpec.parse(spec.format()) == spec


def test_a_spec_written_loosely_formats_to_its_canonical_text_and_keeps_what_was_written():
    spec = BotSpec.parse("mcts: 400 , ,rollout=heuristic")
    assert spec.options == ("400", "rollout=heuristic")
    assert spec.format() == "mcts:400,rollout=heuristic"
    assert str(spec) == "mcts: 400 , ,rollout=heuristic"  # messages quote the spec as written
    assert BotSpec.parse(spec.format()) == spec


def test_nested_specs_and_options():
    spec = BotSpec.parse("mcts:50,rollout=zoo:wyvern,prior=heuristic,prior=random")
    assert [str(part) for part in spec.within()] == [str(spec), "zoo:wyvern", "heuristic", "random"]
    assert spec.option("prior") == "random" and spec.option("depth") is None
    with_prior = BotSpec.parse("mcts").with_option("prior", "runs/a")
    assert str(with_prior) == "mcts:prior=runs/a" and with_prior == BotSpec.parse("mcts:prior=runs/a")
    assert str(BotSpec.parse("mcts:40").with_option("prior", "r")) == "mcts:40,prior=r"
    with pytest.raises(ValueError, match="no mcts spec"):
        BotSpec.parse("heuristic").with_option("prior", "r")
    with pytest.raises(ValueError, match="cannot hold"):
        BotSpec.parse("mcts").with_option("prior", "a,b")


def test_which_specs_run_a_program_or_read_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    local = ["cmd:true", "b.onnx", "run", "run@sample", "mcts:10,rollout=run", "mcts:10,prior=cmd:true",
             "mcts:10,rollout=b.onnx"]
    remote = ["random", "heuristic", "zoo:wyvern", "mcts", "mcts:10,rollout=heuristic,prior=zoo:wyvern", "gone"]
    assert [text for text in local if not BotSpec.parse(text).local] == []
    assert [text for text in remote if BotSpec.parse(text).local] == []


def test_the_web_checks_local_specs_through_bot_spec(tmp_path, monkeypatch):
    from tavernzoo.web.app import _is_local, _specs_within

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    assert _specs_within("mcts:5,prior=run") == ["mcts:5,prior=run", "run"]
    assert _is_local("mcts:5,prior=run") and _is_local("cmd:x") and not _is_local("zoo:wyvern")


def test_a_spec_must_be_a_string():
    with pytest.raises(TypeError, match="a bot spec is a string"):
        BotSpec.parse(3)
