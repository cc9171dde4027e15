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
    every = BotSpec.parse("mcts:rollout=a,others=b,prior=c,value=d,depth=3")
    assert [str(part) for part in every.within()] == [str(every), "a", "b", "c", "d"]
    assert spec.option("prior") == "random" and spec.option("depth") is None
    with_prior = BotSpec.parse("mcts").with_option("prior", "runs/a")
    assert str(with_prior) == "mcts:prior=runs/a" and with_prior == BotSpec.parse("mcts:prior=runs/a")
    assert str(BotSpec.parse("mcts:40").with_option("prior", "r")) == "mcts:40,prior=r"
    with pytest.raises(ValueError, match="no mcts spec"):
        BotSpec.parse("heuristic").with_option("prior", "r")
    with pytest.raises(ValueError, match="cannot hold"):
        BotSpec.parse("mcts").with_option("prior", "a,b")


def test_which_specs_may_run_a_program_or_read_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    builtins, zoo = ("random", "heuristic"), ("wyvern", "")
    local = ["cmd:true", "b.onnx", "run", "run@sample", "gone", "heuristic@sample", "zoo:nothing", "zoo:wyvern@x",
             "mcts:10,rollout=run", "mcts:10,prior=cmd:true", "mcts:10,rollout=b.onnx", "../../etc/passwd",
             "mcts:value=run", "mcts:value=/etc/passwd", "mcts:others=cmd:true", "mcts:others=b.onnx"]
    remote = ["random", "heuristic", "none", "zoo:wyvern", "zoo:", "zoo:wyvern@sample", "mcts",
              "mcts:10,rollout=heuristic,prior=zoo:wyvern", "mcts:value=zoo:wyvern,others=heuristic"]
    assert [text for text in local if not BotSpec.parse(text).local(builtins, zoo)] == []
    assert [text for text in remote if BotSpec.parse(text).local(builtins, zoo)] == []


def test_whether_a_spec_is_local_never_depends_on_the_disk(tmp_path, monkeypatch):
    """A path that exists and one that does not get the same answer: a server's refusal reveals no file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "there").mkdir()
    for text in ("there", "not-there", "mcts:prior=there", "mcts:prior=not-there"):
        assert BotSpec.parse(text).local(("heuristic",), ())


def test_an_anchored_spec_names_its_existing_files_by_absolute_path_and_keeps_the_rest(tmp_path, monkeypatch):
    """What a run records of its teacher and opponents (train/expert.py): the same files from any directory."""
    monkeypatch.chdir(tmp_path)
    for folder in ("run", "heuristic"):  # a folder named like a built-in bot does not make it a path
        (tmp_path / folder).mkdir()
    (tmp_path / "b.onnx").write_bytes(b"")
    run, onnx = str(tmp_path / "run"), str(tmp_path / "b.onnx")
    cases = {"run": run, "run@sample": f"{run}@sample", "b.onnx": onnx, "./run/../b.onnx": onnx,
             "mcts:400,prior=run,value=run,rollout=heuristic": f"mcts:400,prior={run},value={run},rollout=heuristic",
             "mcts:others=b.onnx,time=1": f"mcts:others={onnx},time=1"}
    for text, expected in cases.items():
        anchored = BotSpec.parse(text).anchored(("heuristic", "random"))
        assert str(anchored) == expected and anchored == BotSpec.parse(expected), text
    for text in ("heuristic", "random", "gone", "gone.onnx", "zoo:ministeel", "level:3", "cmd:python3 run",
                 "mcts:prior=gone,rollout=heuristic", "mcts: 400 ,rollout=random", run):
        assert str(BotSpec.parse(text).anchored(("heuristic", "random"))) == text


def test_the_web_checks_local_specs_through_bot_spec(tmp_path, monkeypatch):
    from tavernzoo.envs import get_game
    from tavernzoo.web.app import _is_local

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    wyvern = get_game("wyvern")
    assert _is_local("mcts:5,prior=run", wyvern) and _is_local("cmd:x", wyvern)
    assert not _is_local("zoo:wyvern", wyvern) and not _is_local("zoo:", wyvern)
    assert not _is_local("mcts:5,prior=heuristic", wyvern)


def test_a_spec_must_be_a_string():
    with pytest.raises(TypeError, match="a bot spec is a string"):
        BotSpec.parse(3)


def test_zoo_at_sample_loads_the_zoo_bot_of_the_game_played_as_the_web_lets_it():
    """``zoo:@sample`` passes the web's check (the game played's zoo bot, sampling); it used to fail in load_bot,
    which wrote the spec back as text and took ``@sample`` for the game's name."""
    from tavernzoo.agents import load_bot
    from tavernzoo.envs import get_game
    from tavernzoo.web.app import _is_local

    game = get_game("tiny_minotaur")
    assert not _is_local("zoo:@sample", game)
    bot = load_bot("zoo:@sample", game, seed=1)
    assert bot.deterministic is False and bot.name == "zoo:tiny_minotaur@sample"
    assert load_bot("zoo:", game, seed=1).deterministic is True


def test_every_kind_is_registered_once_with_its_loader_and_what_it_can_do():
    import tavernzoo.agents as agents
    from tavernzoo.agents.spec import KINDS

    assert all(callable(getattr(agents, kind.loader)) for kind in KINDS.values())
    kinds = ("mcts", "cmd:x", "llm:m@u", "zoo:", "level:3", "a.onnx", "heuristic")
    assert {BotSpec.parse(text).kind for text in kinds} == set(KINDS)
    assert [name for name, kind in KINDS.items() if kind.program] == ["cmd"]
    assert [name for name, kind in KINDS.items() if kind.nested] == ["mcts"]
    assert BotSpec.parse("runs/x@sample").plain == BotSpec.parse("runs/x") and str(BotSpec.parse("zoo:@sample").plain) \
        == "zoo:"
    builtins = ("random", "heuristic")
    assert [BotSpec.parse(text).names_network(builtins) for text in ("heuristic", "runs/x", "zoo:", "cmd:a.onnx")] \
        == [False, True, True, False]
    with pytest.raises(ValueError, match="no zoo: spec"):
        BotSpec.parse("heuristic").zoo_name("wyvern")
