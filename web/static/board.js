// Playing on the board: choose a card in your hand, then its target, a player at the table; and the move clock.
//
// The server sends, with each of a person's frames, every legal action's parts (`parts`: {name: [card, seat]},
// the game's own `action_parts`), so this file keeps no table of any game's action names: a card is
// clickable when a legal action plays it, a player when the chosen card (or, with no card chosen, an action
// without a card, such as Minefield's attacks) aims at them. What the board offers is only ever a legal
// action; the grouped action list under it stays, for the keyboard and screen readers.
"use strict";
(() => {
  const { h, readable, pretty, seatName } = window.TZ;

  let current = null; // {board, frame, options, names, parts, chosen, menu}

  const describe = (name) => readable((current.frame.descriptions || {})[name] || pretty(name));
  const seatOf = (name) => current.parts[name][1];
  const cardOf = (name) => current.parts[name][0];

  function attach(board, frame, options) {
    // The board of a frame that asks the person to choose: `options.act(name)` plays a legal action,
    // `options.irreversible(name)` says which ones are confirmed first (as in the action list). Returns what the
    // board offers now: {cards, players} (how many cards may be clicked, how many players without a card).
    detach();
    const parts = frame.parts || {};
    const names = (frame.view.legal_actions || []).filter((name) => Array.isArray(parts[name]));
    if (!names.length) return { cards: 0, players: 0 };
    current = { board, frame, options, names, parts, chosen: null, menu: null };
    let cards = 0;
    for (const button of board.querySelectorAll("[data-play] button.card[data-card]")) {
      if (!names.some((name) => cardOf(name) === button.dataset.card)) continue;
      button.removeAttribute("aria-disabled");
      button.setAttribute("aria-pressed", "false");
      button.classList.add("playable");
      button.addEventListener("click", () => chooseCard(button.dataset.card));
      cards += 1;
    }
    return { cards, players: drawTargets() };
  }

  function detach() {
    if (!current) return;
    for (const box of current.board.querySelectorAll(".player.targetable")) box.classList.remove("targetable");
    for (const button of current.board.querySelectorAll("button.target, .board-choice")) button.remove();
    current = null;
  }

  function play(name) {
    // An action that cannot be taken back is confirmed in the board's own choice, as in the action list.
    if (current.options.irreversible(name)) { showChoices(`${describe(name)}?`, [name]); return; }
    const { options } = current;
    detach();
    options.act(name);
  }

  function chooseCard(card) {
    if (!current) return;
    if (current.chosen === card) { cancel(); return; } // a second click on the chosen card puts it back
    const all = current.names.filter((name) => cardOf(name) === card);
    // One thing to do with it (a move needing no confirmation; discards and sales wait in the list): play it now.
    const plain = all.filter((name) => !current.options.irreversible(name));
    if (plain.length === 1) { play(plain[0]); return; }
    current.chosen = card;
    for (const button of current.board.querySelectorAll("[data-play] button.card.playable")) {
      button.setAttribute("aria-pressed", String(button.dataset.card === card));
    }
    drawTargets();
    const aimed = all.some((name) => seatOf(name) !== null);
    const rest = all.filter((name) => seatOf(name) === null);
    showChoices(aimed ? `${pretty(card)}: choose its target on the table${rest.length ? ", or" : ""}` : `${pretty(card)}:`, rest);
  }

  function chooseTarget(seat) {
    if (!current) return;
    const choices = current.names.filter((name) => seatOf(name) === seat && cardOf(name) === current.chosen);
    if (choices.length === 1) play(choices[0]);
    else if (choices.length) showChoices(`${seatName(current.frame.view, seat)}:`, choices);
  }

  function drawTargets() {
    // The players the chosen card (or, with none chosen, a move without a card) may aim at: each marked, with a
    // button naming the move (or how many there are), and the whole box clickable.
    const board = current.board;
    for (const box of board.querySelectorAll(".player.targetable")) box.classList.remove("targetable");
    for (const button of board.querySelectorAll("button.target")) button.remove();
    const bySeat = new Map();
    for (const name of current.names) {
      if (seatOf(name) === null || cardOf(name) !== current.chosen) continue;
      if (!bySeat.has(seatOf(name))) bySeat.set(seatOf(name), []);
      bySeat.get(seatOf(name)).push(name);
    }
    for (const [seat, names] of bySeat) {
      const box = board.querySelector(`.player[data-seat="${seat}"]`);
      if (!box) continue;
      box.classList.add("targetable");
      // One move: its description up to the colon where that still names the player ("play dagger on player_2").
      const full = names.length === 1 ? describe(names[0]) : null;
      const words = full ? (full.split(": ")[0].includes(`player_${seat}`) ? full.split(": ")[0] : full)
        : `${current.chosen ? pretty(current.chosen) : "choose"} at ${seatName(current.frame.view, seat)} (${names.length} ways)`;
      const button = h("button", { type: "button", class: "target", "data-target": seat, text: words });
      button.addEventListener("click", (event) => { event.stopPropagation(); chooseTarget(seat); });
      box.append(button);
      if (!box.dataset.aimable) {
        box.dataset.aimable = "true"; // one listener per box: the frame's board is drawn anew each step
        box.addEventListener("click", (event) => {
          if (box.classList.contains("targetable") && !event.target.closest("button")) chooseTarget(seat);
        });
      }
    }
    return bySeat.size;
  }

  function showChoices(title, names) {
    // The choices a click left open (the card's moves without a target, the ways to aim at one player, a move
    // to confirm), beside the hand; Esc or Cancel puts the card back.
    current.menu?.remove();
    const menu = h("div", { class: "board-choice", role: "group", "aria-label": title }, h("p", { text: title }));
    for (const name of names) {
      const text = describe(name);
      const button = h("button", { type: "button", class: "choice", "data-action": name, text });
      button.addEventListener("click", () => {
        if (current.options.irreversible(name) && !button.classList.contains("confirming")) {
          button.classList.add("confirming");
          button.textContent = `${text}: this cannot be undone; press again to confirm (Esc: no)`;
          return;
        }
        const { options } = current;
        detach();
        options.act(name);
      });
      menu.append(button);
    }
    const back = h("button", { type: "button", class: "choice-cancel", text: "Cancel (Esc)" });
    back.addEventListener("click", cancel);
    menu.append(back);
    const you = current.board.querySelector(".seat-you") || current.board;
    you.append(menu);
    current.menu = menu;
    menu.querySelector("button").focus({ preventScroll: true });
    menu.scrollIntoView({ block: "nearest" });
  }

  function cancel() {
    if (!current) return;
    const chosen = current.chosen;
    current.chosen = null;
    current.menu?.remove();
    current.menu = null;
    for (const button of current.board.querySelectorAll("[data-play] button.card.playable")) button.setAttribute("aria-pressed", "false");
    drawTargets();
    if (chosen) current.board.querySelector(`[data-play] button.card.playable[data-card="${CSS.escape(chosen)}"]`)?.focus({ preventScroll: true });
  }

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && current && (current.chosen !== null || current.menu)) cancel();
  });

  // --- the move clock ----------------------------------------------------------------------------------

  const clock = { summary: null, at: 0, timer: null };

  function showClock(element, summary, view) {
    // A table with a clock: the seconds left for the move it waits for (yours, or another person's), counted
    // down here from the server's `clock_left` at each summary; at zero the stand-in plays.
    if (summary !== clock.summary) { clock.summary = summary; clock.at = performance.now(); }
    const tick = () => {
      const s = clock.summary;
      const shown = s && s.clock && s.status !== "over";
      element.hidden = !shown;
      if (!shown) return false;
      if (s.clock_left === null || s.clock_left === undefined || (s.status !== "your_turn" && s.status !== "waiting")) {
        element.textContent = `clock: ${s.clock} s a move`;
        element.classList.remove("low");
        return false;
      }
      const left = Math.max(0, Math.ceil(s.clock_left - (performance.now() - clock.at) / 1000));
      const who = s.status === "your_turn" ? "your move" : `${seatName(view || {}, s.to_move)}'s move`;
      element.textContent = `⏱ ${left} s left for ${who} (of ${s.clock} s), then the stand-in plays it`;
      element.classList.toggle("low", left <= 10);
      return left > 0;
    };
    clearInterval(clock.timer);
    if (tick()) clock.timer = setInterval(() => { if (!tick()) clearInterval(clock.timer); }, 250);
  }

  function stopClock(element) {
    clearInterval(clock.timer);
    clock.summary = null;
    if (element) element.hidden = true;
  }

  window.TZBoard = { attach, detach, showClock, stopClock };
})();
