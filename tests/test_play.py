"""Playing in the terminal: a scripted session per game, bad input at the prompt, hidden information kept hidden."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys

import pytest

from tavernzoo.envs import games, get_game
from tavernzoo.eval.play import PUBLIC_GAMES, TerminalGame, choose, parse_choice, view_text

# The installed command, as a user runs it (main() turns a ValueError into exit status 2).
CLI = ["-m", "tavernzoo.cli"]


class Script:
    """A person at the keyboard: a few wrong answers first, then always ``answer``."""

    def __init__(self, first=("", "fly to the moon", "0", "999", "?"), answer="1", limit=5000):
        self.first = list(first)
        self.answer = answer
        self.prompts = 0
        self.limit = limit

    def __call__(self, prompt: str) -> str:
        self.prompts += 1
        if self.prompts > self.limit:
            raise EOFError
        return self.first.pop(0) if self.first else self.answer


@pytest.mark.parametrize("name", sorted(games()))
def test_a_scripted_session_plays_a_whole_game(name, monkeypatch):
    game = get_game(name)
    if name not in PUBLIC_GAMES:
        # The full rendering shows every hand: a hidden-information game must only ever draw the person's seat.
        full = game.encoder.render

        def seat_only(state, seat=None):
            if seat != 1:
                pytest.fail(f"render(seat={seat}) shows what seat 1 may not see")
            return full(state, seat=seat)

        if "seat" in inspect.signature(full).parameters:
            monkeypatch.setattr(game.encoder, "render", seat_only)
        else:
            monkeypatch.setattr(game.encoder, "render", lambda state: pytest.fail("render() shows hidden information"))
    lines: list[str] = []
    script = Script()
    returns = TerminalGame(name, ["random"], seat=1, seed=3, read=script, write=lines.append).play()
    text = "\n".join(lines)
    seats = game.rules.num_seats(game.make_config())
    assert returns is not None and len(returns) == seats
    assert text.startswith(f"{game.title}: you are player_1 (seat 1)")
    assert "hint: 'fly to the moon' is not a legal action here" in text
    assert "hint: there is no action 0" in text and "hint: there is no action 999" in text
    assert "your move (a number or a name; ? the table again, log the whole history, q quits):" in text
    assert "  1) " in text
    assert text.splitlines()[-1].startswith("game over: you ")


def test_returns_are_printed_for_people():
    from tavernzoo.eval.play import return_text

    shown = [return_text(value) for value in (-1 / 3, 1.0, 0.0, -0.0, 2 / 3, -0.5)]
    assert shown == ["-0.333", "+1", "0", "0", "+0.667", "-0.5"]
    # A four-player Minefield pays each loser -1/3: the terminal's last line says -0.333.
    lines: list[str] = []
    TerminalGame("minefield", ["random"], seat=0, seed=1, config={"num_players": 4}, read=Script(first=()),
                 write=lines.append).play()
    assert "-0.333" in lines[-1] and "0.3333" not in lines[-1], lines[-1]


@pytest.mark.parametrize("name", sorted(set(games()) - PUBLIC_GAMES))
def test_hidden_information_games_show_only_the_players_own_hand(name):
    if "seat" in inspect.signature(get_game(name).encoder.render).parameters:
        pytest.skip("drawn by render(state, seat): the game's own tests check what a seat's rendering shows")
    lines: list[str] = []
    TerminalGame(name, ["heuristic"], seat=0, seed=4, read=Script(first=()), write=lines.append).play()
    text = "\n".join(lines)
    players = [line for line in text.splitlines() if line.startswith(("   player_", " > player_"))]
    assert players and all("(you)" in line for line in players if line.startswith(" > "))
    # Other seats show their hand sizes only; the player's own hand is listed (as hand= or hand:).
    assert not [line for line in players if "(you)" not in line and " hand=" in line]
    assert " hand=" in text or "\nhand: " in text
    game = get_game(name)
    from tavernzoo.eval.match import make_env

    env = make_env(game)
    env.reset(seed=4)
    text = view_text(env.unwrapped.view(env.possible_agents[0]))
    assert "you are player_0" in text


def test_the_person_reads_labels_naming_players_sees_the_whole_history_and_only_its_own_hand():
    lines: list[str] = []
    table = TerminalGame("ministeel", ["heuristic"], seat=0, seed=4, read=Script(first=("log",)), write=lines.append)
    table.play()
    text = "\n".join(lines)
    lines = text.splitlines()
    # Every event is printed once, as it happens, and kept: the history holds the whole game, in order.
    assert lines[1] == "  " + table.history[0] and table.history[0].startswith("initiative rolls (by seat)")
    printed = iter(lines)
    assert all(any(line == "  " + event for line in printed) for event in table.history)
    assert len(table.history) > 40 and "is vanquished" in table.history[-1]
    # ``log`` prints the history so far.
    at = lines.index("history:")
    shown = lines[at + 1:at + 1 + len([line for line in lines[:at] if line.startswith("  ") and
                                       line[2:] in table.history])]
    assert shown == ["  " + event for event in table.history[:len(shown)]] and shown
    # What a person reads names players; codes have a legend; the person's own hand is listed.
    assert " at player_" in text and "legend: > decides now; gear: G Spiked Glove" in text
    assert "your hand: " in text and "(you)" in text


def test_a_forced_move_is_played_for_the_person():
    lines: list[str] = []
    returns = TerminalGame("minefield", ["random"], seat=0, seed=1, config={"num_players": 2},
                           read=lambda prompt: pytest.fail("asked for a move that had no alternative"),
                           write=lines.append).play()
    assert returns is not None
    assert "your only move: attack player_1 (played for you)" in lines
    assert any(line.startswith("  round 1:") for line in lines)  # the round, as it happened


def test_minefield_labels_the_mines_a_player_sees_as_last_rounds():
    lines: list[str] = []
    TerminalGame("minefield", ["random"], seat=0, seed=5, config={"num_players": 4}, read=Script(first=()),
                 write=lines.append).play()
    text = "\n".join(lines)
    assert "mines: none yet (this round's are rolled after everyone has chosen a target)" in text
    assert "last round's mines: " in text and "1) attack player_1" in text


def test_a_stable_action_name_is_accepted_where_the_list_shows_labels():
    labels, names = ["hatchet at player_2", "take it (no reaction)"], ["play:hatchet>seat+2", "react:none"]
    assert choose("2", labels, names) == (1, "")
    assert choose("hatchet", labels, names) == (0, "")
    assert choose("react:none", labels, names) == (1, "")
    position, hint = choose("sword", labels, names)
    assert position is None and "'sword' is not a legal action here" in hint


def test_choices_by_number_name_or_unique_part():
    names = ["react:dodge", "react:heal", "react:take"]
    assert parse_choice("2", names) == (1, "")
    assert parse_choice("react:take", names) == (2, "")
    assert parse_choice("dod", names) == (0, "")
    assert parse_choice("heal", names) == (1, "")
    position, hint = parse_choice("react", names)
    assert position is None and "could be react:dodge, react:heal, react:take" in hint
    assert "number from 1 to 3" in parse_choice("4", names)[1]


def test_each_other_seat_can_get_its_own_bot_and_bad_setups_are_refused():
    table = TerminalGame("ministeel", ["random", "heuristic", "random"], seat=2, seed=1,
                         read=Script(first=()), write=lambda line: None)
    assert table.specs == ["random", "heuristic", "you", "random"]
    assert [bot.name for _, bot in sorted(table.bots.items())][1] != "random"
    with pytest.raises(ValueError, match="has 4 seats: give one --vs for all the bots or one per other seat \\(3\\)"):
        TerminalGame("ministeel", ["random", "random"])
    with pytest.raises(ValueError, match="--seat 2 is not a seat of tiny_minotaur with 2 players; valid: 0-1"):
        TerminalGame("tiny_minotaur", ["random"], seat=2)


def test_q_leaves_the_game():
    lines: list[str] = []
    assert TerminalGame("tiny_minotaur", ["random"], seed=2, read=lambda prompt: "q", write=lines.append).play() is None
    assert lines[-1] == "you left the game"


def test_the_play_command_in_a_real_terminal_session():
    moves = "nonsense\n" + "1\n" * 400
    result = subprocess.run([sys.executable, *CLI, "play", "tiny_minotaur", "--vs", "heuristic", "--seed", "7",
                             "--set", "classes=sword,cloak"], input=moves, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "hint: 'nonsense' is not a legal action" in result.stdout
    assert "game over: you" in result.stdout and "sword" in result.stdout
    early = subprocess.run([sys.executable, *CLI, "play", "minefield", "--vs", "random", "--set", "num_players=3"],
                           input="", capture_output=True, text=True, timeout=120)
    assert early.returncode == 0 and "you left the game" in early.stdout
    bad = subprocess.run([sys.executable, *CLI, "play", "tiny_minotaur", "--vs", "grandmaster"], input="",
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown bot spec 'grandmaster'" in bad.stderr


def test_tiny_minotaur_shows_the_persons_own_outcome_keeps_a_history_and_speaks_of_others_neutrally():
    lines: list[str] = []
    table = TerminalGame("tiny_minotaur", ["heuristic"], seat=0, seed=3, read=Script(first=("1", "log")),
                         write=lines.append)
    table.play()
    # The person's own attack and its outcome appear, as the opponent's do (seed 3: player_0 opens with a
    # regular attack, which always hits).
    first = lines.index("  player_0 attacks with regular (always hits): hit")
    assert lines[first + 2] == "  player_1 takes 10 (HP 90)"
    # ``log`` prints the history kept so far, not "no history kept".
    assert "no history kept for this game" not in lines
    logged = next(line for line in lines if line.startswith("history:")).splitlines()
    assert logged[1:] == ["  " + event for event in table.history[:len(logged) - 1]] and len(logged) > 2
    assert len(table.history) > 10
    # Each event is printed once: a decision's events are not repeated when the reaction to it is added.
    printed = [line for line in lines if line.startswith("  player_") and "plays" not in line]
    assert printed[:len(table.history)] == ["  " + event for event in table.history]
    # An opponent's move is told by its name, never in the words addressed to the person choosing.
    announced = [line for line in lines if line.startswith("  player_1 (heuristic) plays ")]
    assert announced and not [line for line in announced if "your" in line]
    assert all(re.fullmatch(r"  player_1 \(heuristic\) plays (attack|react):\w+|  player_1 \(heuristic\) plays pass",
                            line) for line in announced), announced


# Minefield with 12 players: at seed 3 the person lives through two rounds.
TERMINAL_GAMES = {"tiny_minotaur": [], "minefield": ["--set", "num_players=12"],
                  "ministeel": ["--set", "num_players=3"], "wyvern": ["--set", "num_players=3"]}


def play_in_a_pseudo_terminal(game, extra, answers, seconds=60, limit=4 << 20):
    """``tavernzoo play`` on a pseudo-terminal, as a person at a keyboard runs it: each prompt answered with
    the next of ``answers`` (then always ``1``); the whole output (bounded) and the exit status."""
    import os
    import pty
    import select

    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, *CLI, "play", game, "--vs", "heuristic", "--seed", "3", *extra],
                               stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    answers, output = list(answers), b""
    try:
        while len(output) < limit:
            ready, _, _ = select.select([master], [], [], seconds)
            if not ready:
                raise AssertionError(f"{game}: no output for {seconds} s; so far: {output[-500:]!r}")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the program ended and closed the terminal
                break
            if not chunk:
                break
            output += chunk
            if re.search(rb"player_\d+> $", output):
                os.write(master, (answers.pop(0) if answers else "1").encode() + b"\n")
        return process.wait(timeout=seconds), output.decode("utf-8", errors="replace").replace("\r\n", "\n")
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("game", sorted(TERMINAL_GAMES))
def test_a_whole_game_in_a_pseudo_terminal(game):
    status, text = play_in_a_pseudo_terminal(game, TERMINAL_GAMES[game], ["?", "no such move", "1", "log"])
    assert status == 0 and "Traceback" not in text, text[-2000:]
    title = get_game(game).title
    assert text.startswith(f"{title}: you are player_0 (seat 0)")
    assert "history:\n  " in text and "no history kept" not in text  # log: the events so far
    assert "hint: 'no such move' is not a legal action here" in text
    assert len(re.findall(r"player_0> ", text)) >= 5  # the person chose at least two moves (and asked thrice)
    assert text.rstrip().splitlines()[-1].startswith("game over: you ")


def test_each_bot_is_told_its_seat_and_the_end_of_the_game():
    """A bot (a cmd: program too) hears which seat it holds, as in a match, and that the game ended."""
    from tavernzoo.agents.base import BotBase

    calls = []

    class Recorder(BotBase):
        def begin_game(self, seat, seed=None):
            calls.append(("begin", seat))

        def act(self, observation):
            return int(observation["action_mask"].nonzero()[0][0])

        def game_over(self, returns, seat):
            calls.append(("over", seat, returns is not None))

        def close(self):
            calls.append(("close",))

    game = TerminalGame("ministeel", ["random"], seat=1, seed=3, config={"num_players": 3},
                        read=Script(first=()), write=lambda line: None)
    game.bots = {seat: Recorder() for seat in game.bots}
    assert game.play() is not None
    assert sorted(call for call in calls if call[0] == "begin") == [("begin", 0), ("begin", 2)]
    assert sorted(call for call in calls if call[0] == "over") == [("over", 0, True), ("over", 2, True)]
    assert calls.count(("close",)) == 2


def test_card_draw_windows_can_be_left_to_the_terminal_and_asked_again():
    """MiniSteel v2 asks a token holder at every Card Draw window. At one, ``auto`` keeps the tokens and
    answers the later windows the same way, each said in a line; ``ask`` at a later move asks again."""
    lines: list[str] = []
    seen = {"auto": 0, "offered_after_auto": 0, "ask": 0}

    def read(prompt: str) -> str:
        offered = lines[-1].startswith("auto:")
        if offered and not seen["auto"]:
            seen["auto"] += 1
            return "auto"
        if offered and not seen["ask"]:
            seen["offered_after_auto"] += 1
        if seen["auto"] and not offered and not seen["ask"]:
            seen["ask"] += 1
            seen["answered"] = sum("answered for you: Card Draw windows" in line for line in lines)
            return "ask"
        return "1"

    table = TerminalGame("ministeel", ["heuristic"], seat=0, seed=4, config={"num_players": 4}, read=read,
                         write=lines.append)
    table.play()
    assert seen["auto"] == 1 and seen["ask"] == 1 and seen["offered_after_auto"] == 0
    assert seen["answered"] > 0  # windows came and were answered, with the tokens kept
    assert any(line == "the Card Draw windows are asked again" for line in lines) and not table.answering
    auto_line = next(line for line in lines if line.startswith("auto:"))
    assert "no draw now (keep the tokens) now and at every later one of the Card Draw windows" in auto_line


def test_ask_and_auto_are_plain_choices_in_games_without_such_offers():
    """Tiny Minotaur has no declinable offers: ``auto`` and ``ask`` are read as choices (and refused, being
    none), so a game's own action named so keeps its name (Wyvern's ``ask:...``), and no ``auto`` line is shown."""
    lines: list[str] = []
    TerminalGame("tiny_minotaur", ["random"], seat=0, seed=2, read=Script(first=("auto", "ask")),
                 write=lines.append).play()
    assert not any(line.startswith("auto:") or "asked again" in line for line in lines)
    text = "\n".join(lines)
    assert "'auto' is not a legal action here" in text and "'ask' is not a legal action here" in text
