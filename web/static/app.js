// The page: set-up, a table (played or watched), replays. Talks only to this server (see web/app.py).
"use strict";
(() => {
  const { h, setSpectating, renderView, viewEvents, newEvents, seatName, pretty, fmt } = window.TZ;
  const $ = (id) => document.getElementById(id);
  const SPEEDS = [1500, 800, 400, 150, 30]; // ms per shown step, slowest first
  // ms between the bots' moves at a person's table (?pace=MS in the address changes it)
  const asked = Number(new URLSearchParams(location.search).get("pace"));
  const HUMAN_PACE = new URLSearchParams(location.search).has("pace") && asked >= 0 ? asked : 700;
  let games = [];
  const uploads = []; // {spec, env}

  // --- talking to the server -------------------------------------------------------------------------

  async function api(path, options = {}) {
    const init = { ...options, headers: { ...(options.headers || {}) } };
    if (options.json !== undefined) {
      init.method = init.method || "POST";
      init.body = JSON.stringify(options.json);
      init.headers["Content-Type"] = "application/json";
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let body;
    try { body = text ? JSON.parse(text) : {}; } catch { body = { error: text }; }
    if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
    return body;
  }

  function showError(message) {
    const box = $("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  function show(section) {
    for (const id of ["setup", "table", "replay"]) $(id).hidden = id !== section;
    showError("");
  }

  // --- set-up ----------------------------------------------------------------------------------------

  function currentGame() { return games.find((g) => g.name === $("game").value); }

  function optionInput(option) {
    const id = `opt-${option.name}`;
    const d = option.default;
    let input;
    if (option.choices && option.choices.length && !Array.isArray(d)) {
      input = h("select", { id, name: option.name }, option.choices.map((c) => h("option", { value: JSON.stringify(c), selected: c === d, text: String(c) })));
    } else if (typeof d === "boolean") {
      input = h("input", { id, name: option.name, type: "checkbox", checked: d });
    } else if (typeof d === "number") {
      input = h("input", { id, name: option.name, type: "number", value: d, step: Number.isInteger(d) ? 1 : "any" });
    } else {
      input = h("input", { id, name: option.name, value: Array.isArray(d) ? d.join(",") : d ?? "" });
    }
    input.dataset.kind = Array.isArray(d) ? "list" : typeof d;
    const hint = option.help + (option.choices && option.choices.length ? ` (one of: ${option.choices.join(", ")})` : "");
    return h("div", { class: "option" }, h("label", { for: id, text: pretty(option.name) }), input, h("small", { class: "muted", text: hint }));
  }

  function readOptions() {
    const config = {};
    for (const option of currentGame().options) {
      const input = $(`opt-${option.name}`);
      let value;
      if (input.type === "checkbox") value = input.checked;
      else if (input.tagName === "SELECT") value = JSON.parse(input.value);
      else if (input.dataset.kind === "list") value = input.value.split(",").map((s) => s.trim()).filter(Boolean);
      else if (input.dataset.kind === "number") value = Number(input.value);
      else value = input.value;
      if (JSON.stringify(value) !== JSON.stringify(option.default)) config[option.name] = value;
    }
    return config;
  }

  function seatCount() {
    const game = currentGame();
    const players = document.querySelector("#opt-num_players");
    return players ? Number(players.value) || game.seats : game.seats;
  }

  function seatChoices(game) {
    const choices = [["human", "you (human)"], ...game.bots.map((b) => [b, b])];
    for (const u of uploads) if (u.env === game.env) choices.push([u.spec, `uploaded bot ${u.spec}`]);
    choices.push(["other", "other bot spec…"]);
    return choices;
  }

  function drawSeats() {
    const game = currentGame();
    const box = $("seats");
    const before = [...box.querySelectorAll("select")].map((s) => s.value);
    box.replaceChildren(h("legend", { text: "Seats" }));
    const count = seatCount();
    for (let seat = 0; seat < count; seat++) {
      const fallback = seat === 0 ? "human" : game.bots.includes("heuristic") ? "heuristic" : game.bots[0];
      const chosen = before[seat] ?? fallback;
      const select = h("select", { id: `seat-${seat}`, "aria-label": `seat ${seat}` },
        seatChoices(game).map(([value, label]) => h("option", { value, selected: value === chosen, text: label })));
      const other = h("input", { id: `seat-${seat}-spec`, placeholder: "e.g. mcts, zoo:GAME@sample, cmd:python bot.py", hidden: chosen !== "other", "aria-label": `seat ${seat} bot spec` });
      select.addEventListener("change", () => { other.hidden = select.value !== "other"; });
      box.append(h("div", { class: "seat" }, h("label", { for: `seat-${seat}`, text: `player_${seat}` }), select, other));
    }
  }

  function drawSetup() {
    const game = currentGame();
    $("game-about").textContent = `${game.title} — ${game.players[0] === game.players[1] ? game.players[0] : game.players.join("-")} players`;
    const box = $("options");
    box.replaceChildren(h("legend", { text: "Options" }), ...game.options.map(optionInput));
    const players = document.querySelector("#opt-num_players");
    if (players) players.addEventListener("change", drawSeats);
    $("seats").replaceChildren();
    drawSeats();
  }

  async function startGame(event) {
    event.preventDefault();
    showError("");
    try {
      const seats = [];
      for (let seat = 0; seat < seatCount(); seat++) {
        const value = $(`seat-${seat}`).value;
        seats.push(value === "other" ? $(`seat-${seat}-spec`).value.trim() : value);
      }
      const seedText = $("seed").value.trim();
      if (seedText && !/^\d+$/.test(seedText)) throw new Error("the seed must be a whole number (or empty)");
      const body = { game: currentGame().name, config: readOptions(), seats, seed: seedText ? Number(seedText) : null };
      openTable(await api("/api/tables", { json: body }));
    } catch (error) { showError(error.message); }
  }

  async function upload() {
    const files = [...$("upload-files").files];
    const onnx = files.find((f) => f.name.endsWith(".onnx"));
    const json = files.find((f) => f.name.endsWith(".json"));
    try {
      if (!onnx || !json) throw new Error("choose both the bot's .onnx file and its .json manifest");
      const bytes = new Uint8Array(await onnx.arrayBuffer());
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      const manifest = JSON.parse(await json.text());
      const reply = await api("/api/uploads", { json: { manifest, onnx: btoa(binary) } });
      uploads.push(reply);
      $("upload-status").textContent = `uploaded: ${reply.spec} plays ${reply.env}`;
      drawSeats();
    } catch (error) { showError(error.message); }
  }

  // --- a table ---------------------------------------------------------------------------------------

  let table = null; // {summary, queue, shown, fetched, source, timer, paused, events, lastView}

  function closeTable() {
    if (!table) return;
    if (table.source) table.source.close();
    clearTimeout(table.timer);
    table = null;
  }

  function openTable(summary) {
    closeTable();
    show("table");
    table = { summary, queue: [], fetched: -1, shown: null, events: [], paused: false, fetching: false, seat: 0 };
    $("table-title").textContent = `${summary.title}`;
    $("log").replaceChildren();
    $("board").replaceChildren();
    $("actions").replaceChildren();
    $("result").hidden = true;
    const watched = summary.human === null;
    setSpectating(watched);
    $("watch-controls").hidden = !watched;
    if (watched) {
      $("watch-seat").replaceChildren(...summary.seats.map((s) => h("option", { value: s.seat, text: `${s.agent} (${s.player})` })));
      $("pause").textContent = "Pause";
      $("pause").setAttribute("aria-pressed", "false");
    }
    drawSeatbar();
    const source = new EventSource(`/api/tables/${summary.id}/events`);
    source.addEventListener("table", (event) => {
      if (!table || table.summary.id !== summary.id) return;
      table.summary = JSON.parse(event.data);
      drawSeatbar();
      fetchFrames();
      if (table.summary.status === "over") source.close();
    });
    table.source = source;
    fetchFrames();
    pump();
  }

  function drawSeatbar() {
    const s = table.summary;
    const acting = table.shown ? table.shown.view.to_act : null;
    $("seatbar").replaceChildren(...s.seats.map((seat) => h("span", {
      class: `chip ${seat.seat === s.human ? "me" : ""} ${seat.seat === acting ? "acting" : ""}`,
      text: `${seat.agent}: ${seat.player}`,
    })));
  }

  async function fetchFrames() {
    // One fetch at a time; a call while one runs makes it fetch once more (the table may have moved on).
    if (!table) return;
    const t = table;
    if (t.fetching) { t.again = true; return; }
    t.fetching = true;
    try {
      do {
        t.again = false;
        while (t === table) {
          const seat = t.summary.human === null ? `&seat=${t.seat}` : "";
          const reply = await api(`/api/tables/${t.summary.id}/frames?since=${t.fetched}${seat}`);
          if (t !== table) return;
          t.summary = reply.summary;
          for (const frame of reply.frames) { t.queue.push(frame); t.fetched = frame.step; }
          if (!reply.frames.length || t.fetched >= t.summary.steps - 1) break;
        }
      } while (t.again && t === table);
    } catch (error) { showError(error.message); } finally { t.fetching = false; }
    if (t === table) pump();
  }

  function pace() {
    return table.summary.human === null ? SPEEDS[Number($("speed").value)] : HUMAN_PACE;
  }

  function pump() {
    // Show the queued frames one by one at a readable pace.
    if (!table) return;
    clearTimeout(table.timer);
    if (table.paused) return;
    if (table.queue.length) {
      showFrame(table.queue.shift());
      table.timer = setTimeout(pump, table.queue.length || table.shown.view.legal_actions?.length ? pace() : 0);
      return;
    }
    finishIfOver();
  }

  function showFrame(frame) {
    const previous = table.shown;
    table.shown = frame;
    const view = frame.view;
    $("board").replaceChildren(renderView(view));
    const log = $("log");
    const added = [];
    if (frame.note) added.push([frame.note, "note"]);
    for (const line of newEvents(previous ? viewEvents(previous.view) : [], viewEvents(view))) added.push([line, ""]);
    for (const [line, kind] of added) log.append(h("li", { class: kind, text: line }));
    while (log.childElementCount > 300) log.firstElementChild.remove();
    log.scrollTop = log.scrollHeight;
    drawSeatbar();
    drawTurn(view);
    drawActions(frame);
  }

  function drawTurn(view) {
    const s = table.summary;
    let text = "";
    if (s.status === "over" && !table.queue.length && table.fetched >= s.steps - 1) text = "the game is over";
    else if (view.legal_actions && view.legal_actions.length && s.human !== null) text = "your turn: choose an action";
    else if (Array.isArray(view.to_act)) text = "everyone chooses";
    else if (view.to_act !== null && view.to_act !== undefined) text = `${seatName(view, view.to_act)} to act`;
    $("turn").textContent = text;
  }

  function drawActions(frame) {
    const box = $("actions");
    box.replaceChildren();
    const s = table.summary;
    const legal = frame.view.legal_actions || [];
    if (s.human === null || !legal.length || table.queue.length || frame.step !== table.fetched) return;
    legal.forEach((name, i) => {
      const description = (frame.descriptions || {})[name] || "";
      const button = h("button", { type: "button", class: "action", "data-action": name, title: description,
        "aria-keyshortcuts": i < 9 ? String(i + 1) : null },
        h("span", { class: "key", text: i < 9 ? String(i + 1) : "" }), h("b", { text: name }), h("small", { text: description }));
      button.addEventListener("click", () => act(name, frame.step));
      box.append(button);
    });
    box.querySelector("button")?.focus({ preventScroll: true });
  }

  async function act(name, step) {
    $("actions").replaceChildren(h("span", { class: "muted", text: `you chose ${name}…` }));
    try {
      table.summary = await api(`/api/tables/${table.summary.id}/act`, { json: { action: name, step } });
      fetchFrames();
    } catch (error) {
      showError(error.message);
      if (table.shown) drawActions(table.shown);
    }
  }

  function finishIfOver() {
    const s = table.summary;
    if (s.status !== "over" || table.fetched < s.steps - 1 || table.queue.length) return;
    if (table.shown) drawTurn(table.shown.view);
    const r = s.result || {};
    const verdict = r.verdict || (r.forfeit ? "a bot forfeited" : "game over");
    $("verdict").textContent = verdict;
    const parts = [];
    if (r.forfeit) parts.push(`player_${r.forfeit.seat} (${r.forfeit.bot}) forfeits: ${r.forfeit.kind}: ${r.forfeit.reason}`);
    if (r.returns) parts.push(`returns ${r.returns.map((v, i) => `player_${i} ${v > 0 ? "+" : ""}${v}`).join(", ")}`);
    if (r.end_reason) parts.push(`ended by ${pretty(r.end_reason)}`);
    parts.push(`seed ${s.seed}`);
    $("result-detail").textContent = parts.join("; ");
    $("download").href = `/api/tables/${s.id}/record`;
    $("download").setAttribute("download", `${s.game}-${s.seed}.json`);
    $("result").hidden = false;
    $("actions").replaceChildren();
  }

  function restartWatch() {
    // A watched table seen from another seat: from the start, at the same step.
    if (!table) return;
    const at = table.shown ? table.shown.step : -1;
    table.seat = Number($("watch-seat").value);
    table.queue = [];
    table.fetched = at - 1;
    table.shown = null;
    fetchFrames();
  }

  // --- replays ---------------------------------------------------------------------------------------

  let replay = null; // {id, games, seat, step, previous}

  async function openReplay() {
    const file = $("replay-file").files[0];
    if (!file) return;
    showError("");
    try {
      const response = await fetch("/api/replays", { method: "POST", headers: { "Content-Type": "application/octet-stream" }, body: await file.text() });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error);
      replay = { id: body.id, games: body.games };
      setSpectating(true);
      $("replay-game").replaceChildren(...body.games.map((g, i) => h("option", { value: i, text: `${i + 1}. ${g.title}: ${fmt(g.seats)} (seed ${g.seed})` })));
      $("replay-controls").hidden = false;
      chooseReplayGame();
    } catch (error) { showError(error.message); }
  }

  function chooseReplayGame() {
    const game = replay.games[Number($("replay-game").value)];
    $("replay-seat").replaceChildren(...(game.seats || []).map((name, i) => h("option", { value: i, text: `player_${i} (${name})` })));
    $("replay-step").max = game.steps - 1;
    $("replay-step").value = 0;
    const r = game.returns ? `returns ${fmt(game.returns)}` : game.forfeit ? `player_${game.forfeit.seat} forfeited` : "unfinished";
    $("replay-summary").textContent = `${game.steps - 1} steps; ${r}${game.end_reason ? `; ended by ${pretty(game.end_reason)}` : ""}`;
    $("replay-log").replaceChildren();
    replay.previous = null;
    showReplayStep();
  }

  async function showReplayStep() {
    const number = Number($("replay-game").value);
    const step = Number($("replay-step").value);
    const seat = Number($("replay-seat").value || 0);
    $("replay-where").textContent = `step ${step} of ${$("replay-step").max}`;
    try {
      const frame = await api(`/api/replays/${replay.id}/${number}?step=${step}&seat=${seat}`);
      if (Number($("replay-step").value) !== step) return; // the slider moved on meanwhile
      $("replay-board").replaceChildren(renderView(frame.view));
      $("replay-note").textContent = frame.note ? `step ${step}: ${frame.note}` : "the deal";
      $("replay-log").replaceChildren(...viewEvents(frame.view).map((line) => h("li", { text: line })));
    } catch (error) { showError(error.message); }
  }

  function stepReplay(delta) {
    const slider = $("replay-step");
    const next = Math.max(0, Math.min(Number(slider.max), Number(slider.value) + delta));
    if (next !== Number(slider.value)) { slider.value = next; showReplayStep(); }
  }

  // --- wiring ----------------------------------------------------------------------------------------

  document.addEventListener("keydown", (event) => {
    if (event.target.matches("input, select, textarea")) return;
    if (!$("table").hidden && /^[1-9]$/.test(event.key)) {
      const button = $("actions").querySelectorAll("button.action")[Number(event.key) - 1];
      if (button) { event.preventDefault(); button.click(); }
    } else if (!$("table").hidden && event.key === " " && table && table.summary.human === null) {
      event.preventDefault();
      $("pause").click();
    } else if (!$("replay").hidden && replay && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
      event.preventDefault();
      stepReplay(event.key === "ArrowLeft" ? -1 : 1);
    }
  });

  async function init() {
    for (const button of document.querySelectorAll("nav button")) {
      button.addEventListener("click", () => { closeTable(); show(button.dataset.show); });
    }
    $("setup-form").addEventListener("submit", startGame);
    $("game").addEventListener("change", drawSetup);
    $("upload-button").addEventListener("click", upload);
    $("rematch").addEventListener("click", async () => {
      try { openTable(await api(`/api/tables/${table.summary.id}/rematch`, { json: {} })); } catch (error) { showError(error.message); }
    });
    $("new-game").addEventListener("click", () => { closeTable(); show("setup"); });
    $("pause").addEventListener("click", () => {
      if (!table) return;
      table.paused = !table.paused;
      $("pause").textContent = table.paused ? "Play" : "Pause";
      $("pause").setAttribute("aria-pressed", String(table.paused));
      pump();
    });
    $("watch-seat").addEventListener("change", restartWatch);
    $("replay-file").addEventListener("change", openReplay);
    $("replay-game").addEventListener("change", chooseReplayGame);
    $("replay-seat").addEventListener("change", showReplayStep);
    $("replay-step").addEventListener("input", showReplayStep);
    $("replay-prev").addEventListener("click", () => stepReplay(-1));
    $("replay-next").addEventListener("click", () => stepReplay(1));
    try {
      games = (await api("/api/games")).games;
      $("game").replaceChildren(...games.map((g) => h("option", { value: g.name, text: g.title })));
      drawSetup();
      document.body.dataset.ready = "true";
    } catch (error) { showError(`cannot load the games: ${error.message}`); }
  }

  init();
})();
