// The review after the game, in place on the table: step through the finished game from any seat's view (a
// spectator: the public table), each decision of the seat marked with what it cost, and "Play on from here": a
// new table, the game replayed to that step, the same bots (web/review.py; docs/web.md, "Review").
"use strict";
(() => {
  const { h, renderView, setSpectating, readable } = window.TZ;
  const $ = (id) => document.getElementById(id);
  let review = null; // {table, step, steps, seat, marks, asked}

  function offer() {
    // The game is over: the result offers the review (once the page has the whole game).
    const table = window.TZ.app.current();
    $("review-open").hidden = !table;
  }

  function close() {
    if (!review) return;
    const table = review.table;
    review = null;
    $("review").hidden = true;
    $("review-marks-box").hidden = true;
    $("review-open").hidden = false;
    // The board as the game ended, as it was before the review.
    if (table && table === window.TZ.app.current() && table.shown) {
      setSpectating(table.summary.human === null);
      $("board").replaceChildren(renderView(table.shown.view));
    }
  }

  async function open() {
    const table = window.TZ.app.current();
    if (!table || table.summary.status !== "over") return;
    const s = table.summary;
    const spectator = Boolean(s.spectator);
    review = { table, step: 0, steps: 1, seat: spectator ? null : s.human ?? 0, marks: null, asked: 0 };
    // A person may look from every seat once the game is over; a spectator sees the public table alone.
    $("review-seat-label").hidden = spectator;
    $("review-seat").replaceChildren(...s.seats.map((seat) => h("option", {
      value: seat.seat, selected: seat.seat === review.seat,
      text: seat.seat === s.human ? `${seat.agent} (you)` : `${seat.agent} (${seat.player})` })));
    $("review").hidden = false;
    $("review-open").hidden = true;
    $("review-marks-box").hidden = spectator;
    $("review-branch").hidden = spectator;
    await show(null); // the end first: the game as it finished
    $("review-prev").focus();
    if (!spectator) loadMarks();
  }

  async function show(step) {
    if (!review) return;
    const r = review;
    const asked = ++r.asked;
    const seat = r.seat === null ? "" : `&seat=${r.seat}`;
    const where = step === null ? "" : `step=${step}`;
    try {
      const frame = await window.TZ.app.api(`/api/tables/${r.table.summary.id}/review?${where}${seat}`, { token: r.table.token });
      if (review !== r || asked !== r.asked) return; // stepped on meanwhile
      r.step = frame.step;
      r.steps = frame.steps;
      r.frame = frame;
      $("review-step").max = frame.steps - 1;
      $("review-step").value = frame.step;
      $("review-where").textContent = `step ${frame.step} of ${frame.steps - 1}`;
      // Looking from another seat than one's own is watching it: the board says "player_N", not "you".
      setSpectating(r.seat !== r.table.summary.human);
      $("board").replaceChildren(renderView(frame.view));
      $("review-note").textContent = frame.step === 0 ? "step 0: the deal"
        : `step ${frame.step}: ${frame.note ? readable(frame.note) : "a move this view does not show"}`;
      const lines = frame.events && frame.events.length ? frame.events : ["nothing happened that this view shows"];
      $("review-log").replaceChildren(...lines.map((line) => h("li", { text: readable(line) })));
      $("review-branch").disabled = !frame.branch;
      $("review-branch").textContent = frame.branch ? `Play on from step ${frame.step}` : "Play on from here (the game ends here)";
      drawMark();
    } catch (error) { window.TZ.app.showError(error.message); }
  }

  function stepBy(delta) {
    if (!review) return;
    const next = Math.max(0, Math.min(review.steps - 1, review.step + delta));
    if (next !== review.step) show(next);
  }

  async function loadMarks() {
    const r = review;
    $("review-method").textContent = "marking the decisions…";
    $("review-marks").replaceChildren();
    $("review-all-list").replaceChildren();
    try {
      const seat = r.seat === null ? "" : `?seat=${r.seat}`;
      const marks = await window.TZ.app.api(`/api/tables/${r.table.summary.id}/review/marks${seat}`, { token: r.table.token });
      if (review !== r || marks.seat !== r.seat) return;
      r.marks = marks;
      drawMarks();
    } catch (error) { if (review === r) $("review-method").textContent = `no marks: ${error.message}`; }
  }

  const costText = (cost) => (cost === null ? "not marked (the server's time for the review ran out)"
    : cost === 0 ? "as good as the best" : `cost ${Number(cost.toPrecision(2))}`);

  function markButton(mark) {
    const best = mark.cost ? ` (best: ${readable(mark.best_said)})` : "";
    const button = h("button", { type: "button", class: `mark ${mark.cost ? "costly" : ""}`, "data-step": mark.step },
      `step ${mark.step}: ${readable(mark.said)} — ${costText(mark.cost)}${best}`);
    button.addEventListener("click", () => show(mark.step));
    return h("li", {}, button);
  }

  function drawMarks() {
    const marks = review.marks;
    const who = review.seat === review.table.summary.human ? "your" : `player_${review.seat}'s`;
    $("review-marks-title").textContent = `${who[0].toUpperCase()}${who.slice(1)} decisions marked`;
    $("review-method").textContent = `${marks.decisions.length} decisions; ${marks.exact ? "exact costs" : "estimated costs"}, `
      + `in expected final return (+1 a win, -1 a loss in a game of two) — ${readable(marks.method)}`
      + (marks.complete ? "" : "; the later decisions were not reached in the server's time");
    const worst = marks.worst.map((step) => marks.decisions.find((m) => m.step === step));
    $("review-marks").replaceChildren(...(worst.length ? worst.map(markButton)
      : [h("li", { text: "no decision cost anything by this judge" })]));
    $("review-all-title").textContent = `Every decision (${marks.decisions.length})`;
    $("review-all-list").replaceChildren(...marks.decisions.map(markButton));
    drawMark();
  }

  function drawMark() {
    // The decision made at the step shown, with its mark, when the seat chose there.
    const mark = review && review.marks && review.marks.decisions.find((m) => m.step === review.step);
    $("review-mark").textContent = mark ? `decision here: ${readable(mark.said)} — ${costText(mark.cost)}`
      + (mark.cost ? `; the best: ${readable(mark.best_said)}` : "") : "";
  }

  async function branch() {
    if (!review || !review.frame || !review.frame.branch) return;
    const r = review;
    const body = { step: r.step };
    if (r.table.summary.human === null) body.seat = r.seat ?? 0; // a table of bots: play the seat looked from
    try {
      const made = await window.TZ.app.api(`/api/tables/${r.table.summary.id}/branch`, { json: body, token: r.table.token });
      window.TZ.app.opened(made);
    } catch (error) { window.TZ.app.showError(error.message); }
  }

  document.addEventListener("keydown", (event) => {
    if (!review || $("table").hidden || event.target.matches("input, select, textarea")) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity };
    if (!(event.key in moves)) return;
    event.preventDefault();
    stepBy(moves[event.key]);
  });

  $("review-open").addEventListener("click", open);
  $("review-close").addEventListener("click", close);
  $("review-prev").addEventListener("click", () => stepBy(-1));
  $("review-next").addEventListener("click", () => stepBy(1));
  $("review-step").addEventListener("input", () => show(Number($("review-step").value)));
  $("review-seat").addEventListener("change", () => {
    review.seat = Number($("review-seat").value);
    show(review.step);
    loadMarks();
  });
  $("review-branch").addEventListener("click", branch);
  $("review-open").hidden = true;

  window.TZ.review = { offer, close, open };
})();
