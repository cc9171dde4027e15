// The page: set-up, a table (played or watched), replays. Talks only to this server (see web/app.py).
"use strict";
(() => {
  const { h, setSpectating, setGlossary, renderView, viewEvents, newEvents, seatName, pretty, readable, fmt, returnText } = window.TZ;
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
    // A seat's (or the spectators') token goes in a header: the server never sees it in an address.
    if (options.token) init.headers["X-Table-Token"] = options.token;
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

  function show(section, address) {
    // Each section has an address of its own (a table's: #table=ID), so that a reload returns to it and
    // Back moves between the page's own sections instead of leaving the app.
    for (const id of ["setup", "table", "replay"]) $(id).hidden = id !== section;
    showError("");
    const hash = address || (section === "setup" ? "#new" : `#${section}`);
    if (!location.hash) history.replaceState(null, "", hash);
    else if (location.hash !== hash) history.pushState(null, "", hash);
  }

  async function route() {
    // The section the address names: a table (while the server keeps it), a replay, or the set-up.
    // A seat's link (#table=ID&seat=TOKEN) or the spectators' (&watch=TOKEN); the table id alone only watches
    // a table of bots.
    const found = /^#table=([\w-]+)(?:&(?:seat|watch)=([\w-]+))?$/.exec(location.hash);
    if (found) {
      if (table && table.summary.id === found[1]) return;
      try {
        openTable(await api(`/api/tables/${found[1]}`, { token: found[2] }), found[2]);
      } catch (error) {
        closeTable();
        show("setup");
        showError(error.message);
      }
      return;
    }
    closeTable();
    show(location.hash === "#replay" ? "replay" : "setup");
    if (location.hash !== "#replay") drawLobby();
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
    // The levels first (a name says how strong; the bot each stands for is in the label), then the bots by spec.
    const levels = (game.levels || []).map((l, i) => [l.spec, `level ${i + 1}: ${l.name} (${l.bot.split(",")[0]})`]);
    const choices = [["human", "you (human)"], ["open", "another person (a link to share)"], ...levels,
      ...game.bots.map((b) => [b, b])];
    for (const u of uploads) if (u.env === game.env) choices.push([u.spec, `uploaded bot ${u.spec}`]);
    choices.push(["other", "other bot spec…"]);
    return choices;
  }

  function drawSeats() {
    const game = currentGame();
    const box = $("seats");
    // What was chosen or typed for each seat survives a redraw (a change of the number of players).
    const before = [...box.querySelectorAll("select")].map((s) => s.value);
    const typed = [...box.querySelectorAll("input")].map((i) => i.value);
    box.replaceChildren(h("legend", { text: "Seats" }));
    const count = seatCount();
    for (let seat = 0; seat < count; seat++) {
      const fallback = seat === 0 ? "human" : game.bots.includes("heuristic") ? "heuristic" : game.bots[0];
      const chosen = before[seat] ?? fallback;
      const select = h("select", { id: `seat-${seat}`, "aria-label": `seat ${seat}` },
        seatChoices(game).map(([value, label]) => h("option", { value, selected: value === chosen, text: label })));
      const other = h("input", { id: `seat-${seat}-spec`, placeholder: "e.g. mcts, zoo:GAME@sample, cmd:python bot.py", hidden: chosen !== "other", "aria-label": `seat ${seat} bot spec`, value: typed[seat] || null });
      select.addEventListener("change", () => { other.hidden = select.value !== "other"; });
      box.append(h("div", { class: "seat" }, h("label", { for: `seat-${seat}`, text: `player_${seat}` }), select, other));
    }
  }

  // The person's "never ask me" setting, in one wording wherever it is offered (set-up and table): the table
  // then answers the game's declinable offers (MiniSteel's Card Draw windows) for them until the game ends.
  const neverAskText = (offers) => `Never ask me at the ${offers}: the table turns each one down for me until the game ends`;

  function drawSetup() {
    const game = currentGame();
    $("setup-never-ask").hidden = !game.offers;
    $("setup-never-ask-box").checked = false;
    if (game.offers) $("setup-never-ask-text").textContent = neverAskText(game.offers);
    $("game-about").textContent = `${game.title} — ${game.players[0] === game.players[1] ? game.players[0] : game.players.join("-")} players`;
    const box = $("options");
    box.replaceChildren(h("legend", { text: "Options" }), ...game.options.map(optionInput));
    const players = document.querySelector("#opt-num_players");
    if (players) players.addEventListener("change", drawSeats);
    $("seats").replaceChildren();
    drawSeats();
    $("fallback").replaceChildren(...(game.levels || []).map((l, i) => h("option", { value: l.spec, selected: l.spec === "level:3", text: `level ${i + 1}: ${l.name}` })));
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
      // The seed goes as its digits: a number past 2^53 would be rounded here, and deal another game.
      const body = { game: currentGame().name, config: readOptions(), seats, seed: seedText || null };
      const clock = $("clock").value.trim();
      if (clock) body.clock = Number(clock);
      if ($("fallback").value) body.fallback = $("fallback").value;
      if ($("lobby-box").checked) body.lobby = true;
      if (currentGame().offers && $("setup-never-ask-box").checked && seats.includes("human")) body.answer_offers = true;
      opened(await api("/api/tables", { json: body }));
    } catch (error) { showError(error.message); }
  }

  function opened(made) {
    // A table this page made: its own seat's token, or (sitting nowhere at a table of people) the spectators';
    // the links for the others are kept for this browser tab, so that a reload still shows them.
    const token = made.token || (made.links && made.links.watch) || null;
    if (made.links && made.links.watch) sessionStorage.setItem(`links:${made.id}`, JSON.stringify(made.links));
    openTable(made, token);
  }

  async function drawLobby() {
    // The lobby: tables whose makers listed them, each with its open seats; Join takes the first one.
    try {
      const { tables } = await api("/api/lobby");
      $("lobby-list").replaceChildren(...(tables.length ? tables.map((t) => h("li", {},
        `${t.title}: ${t.seats.join(", ")} — ${t.open} open seat${t.open === 1 ? "" : "s"}${t.clock ? `, ${t.clock} s a move` : ""} `,
        h("button", { type: "button", class: "join", "data-table": t.id, text: "Join" }))) : [h("li", { class: "muted", text: "none now" })]));
      for (const button of $("lobby-list").querySelectorAll("button.join")) {
        button.addEventListener("click", async () => {
          try {
            const joined = await api(`/api/tables/${button.dataset.table}/join`, { json: {} });
            openTable(joined, joined.token);
          } catch (error) { showError(error.message); drawLobby(); }
        });
      }
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
    if (window.TZ.review) window.TZ.review.close();
    if (!table) return;
    if (table.source) table.source.close();
    clearTimeout(table.timer);
    clearInterval(table.beat);
    window.TZBoard.detach();
    window.TZBoard.stopClock($("move-clock"));
    table = null;
  }

  function openTable(summary, token) {
    closeTable();
    const as = !token ? "" : summary.spectator ? `&watch=${token}` : `&seat=${token}`;
    show("table", `#table=${summary.id}${as}`);
    // logged: the last step whose events are in the log (a frame shown again adds none); catchUp: the
    // frames that were played before this page opened the table are shown at once, not paced.
    table = { summary, queue: [], fetched: -1, shown: null, paused: false, fetching: false, seat: 0, logged: -1,
      catchUp: summary.steps - 1, skip: false, token };
    drawLinks(summary);
    $("table-title").textContent = `${summary.title}`;
    setGlossary((games.find((g) => g.name === summary.game) || {}).cards);
    // The texts under this table's own options (a house rule may change a card), drawn from then on.
    api(`/api/tables/${summary.id}/cards`).then((reply) => { if (table && table.summary.id === summary.id) setGlossary(reply.cards); })
      .catch(() => {});
    $("log").replaceChildren();
    $("board").replaceChildren();
    $("actions").replaceChildren();
    $("turn").textContent = summary.status === "over" ? "" : "the table is being dealt…";
    $("result").hidden = true;
    $("skip").hidden = true;
    const watched = summary.human === null;
    setSpectating(watched);
    $("watch-controls").hidden = !watched;
    $("watch-seat-label").hidden = Boolean(summary.people); // a spectator sees the public table, no seat's view
    if (watched) {
      $("watch-seat").replaceChildren(...summary.seats.map((s) => h("option", { value: s.seat, text: `${s.agent} (${s.player})` })));
      $("pause").textContent = "Pause";
      $("pause").setAttribute("aria-pressed", "false");
    }
    drawSeatbar();
    // An EventSource sends no headers: the token goes in the stream's address (that seat's summary comes back).
    const source = new EventSource(`/api/tables/${summary.id}/events${token ? `?token=${token}` : ""}`);
    // A person's page checks in now and then: one silent too long is away, and the table's stand-in plays for them.
    if (summary.human !== null && token) {
      table.beat = setInterval(() => api(`/api/tables/${summary.id}`, { token }).catch(() => {}), 15000);
    }
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

  function drawLinks(summary) {
    // The links this page's maker hands on: each open seat's, and the spectators' (read-only, no hand shown).
    const links = JSON.parse(sessionStorage.getItem(`links:${summary.id}`) || "null");
    const box = $("links");
    box.hidden = !links;
    if (!links) return;
    const base = `${location.origin}${location.pathname}#table=${summary.id}`;
    const rows = Object.entries(links.seats).filter(([seat]) => Number(seat) !== summary.human)
      .map(([seat, token]) => [`player_${seat}'s seat`, `${base}&seat=${token}`]);
    rows.push(["spectators (public table only)", `${base}&watch=${links.watch}`]);
    $("links-list").replaceChildren(...rows.map(([what, url], i) => h("li", {},
      h("label", { for: `link-${i}`, text: `${what}: ` }),
      h("input", { id: `link-${i}`, readonly: true, value: url, size: 40 }))));
  }

  function drawNeverAsk() {
    // The setting, shown to a person at a game with such offers while it is played; checked while it is on.
    const s = table.summary;
    const shown = Boolean(s.offers) && s.human !== null && s.status !== "over";
    $("never-ask").hidden = !shown;
    if (!shown) return;
    $("never-ask-text").textContent = neverAskText(s.offers);
    $("never-ask-box").checked = Boolean(s.answer_offers);
  }

  async function setNeverAsk() {
    const t = table;
    if (!t) return;
    try {
      t.summary = await api(`/api/tables/${t.summary.id}/act`, { json: { answer_offers: $("never-ask-box").checked }, token: t.token });
      fetchFrames();
    } catch (error) {
      showError(error.message);
    }
    if (t === table) drawNeverAsk();
  }

  function drawSeatbar() {
    drawNeverAsk();
    const s = table.summary;
    window.TZBoard.showClock($("move-clock"), s, table.shown && table.shown.view);
    const acting = table.shown ? table.shown.view.to_act : null;
    $("seatbar").replaceChildren(...s.seats.map((seat) => h("span", {
      class: `chip ${seat.seat === s.human ? "me" : ""} ${seat.seat === acting ? "acting" : ""}`,
      text: `${seat.agent}: ${seat.player}${seat.person && !seat.present && seat.seat !== s.human ? " (away: the stand-in plays)" : ""}`,
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
          const seat = t.summary.human === null && !t.summary.people ? `&seat=${t.seat}` : "";
          const reply = await api(`/api/tables/${t.summary.id}/frames?since=${t.fetched}${seat}`, { token: t.token });
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
    const next = table.queue[0];
    if (table.skip || (next && next.step <= table.catchUp)) return 0;
    return table.summary.human === null ? SPEEDS[Number($("speed").value)] : HUMAN_PACE;
  }

  function pump() {
    // Show the queued frames one by one at a readable pace.
    if (!table) return;
    clearTimeout(table.timer);
    if (table.paused) return;
    if (table.queue.length) {
      showFrame(table.queue.shift());
      table.timer = setTimeout(pump, table.queue.length || asksPerson(table.shown) ? pace() : 0);
      return;
    }
    finishIfOver();
  }

  function showFrame(frame) {
    const previous = table.shown;
    table.shown = frame;
    const view = frame.view;
    const board = renderView(view);
    if (previous && frame.step > previous.step && frame.step > table.catchUp) markChanges(previous.view, view, board);
    $("board").replaceChildren(board);
    if (frame.step > table.logged) {
      // Each step's events once: the server sends the lines each frame adds (two identical events are
      // two lines); a frame without them (an older server) falls back on comparing the views' lists.
      table.logged = frame.step;
      const log = $("log");
      const lines = Array.isArray(frame.events) ? frame.events : newEvents(previous ? viewEvents(previous.view) : [], viewEvents(view));
      if (frame.note) log.append(h("li", { class: "note", text: readable(frame.note) }));
      for (const line of lines) log.append(h("li", { text: readable(line) }));
      while (log.childElementCount > 2000) log.firstElementChild.remove();
      log.scrollTop = log.scrollHeight;
    }
    drawSeatbar();
    drawTurn(view, frame);
    drawChoices(frame);
    if (asksPerson(frame)) table.skip = false;
    $("skip").hidden = table.summary.human === null || table.summary.status === "over" || !table.queue.length;
  }

  // Numbers whose change a player should notice, per seat (any the view has).
  const WATCHED = ["hp", "level", "combat_level", "poison", "hand_size", "draw_tokens", "tier"];

  function markChanges(before, after, board) {
    // A seat whose numbers changed is highlighted for a moment (CSS; none under prefers-reduced-motion)
    // and says what changed in words, for everyone (a screen reader reads the log, not this).
    const old = new Map((before.players || []).map((p) => [p.seat, p]));
    for (const p of after.players || []) {
      const was = old.get(p.seat);
      if (!was) continue;
      const changes = WATCHED.filter((k) => typeof p[k] === "number" && typeof was[k] === "number" && p[k] !== was[k])
        .map((k) => `${pretty(k)} ${p[k] > was[k] ? "+" : "−"}${Math.abs(p[k] - was[k])}`);
      if (!changes.length) continue;
      const box = board.querySelector(`.player[data-seat="${p.seat}"]`);
      if (!box) continue;
      box.classList.add("changed");
      box.querySelector("h4")?.append(h("span", { class: "delta", text: ` (${changes.join(", ")})` }));
    }
    if (JSON.stringify(before.initiative_rolls) !== JSON.stringify(after.initiative_rolls)) board.querySelector(".center")?.classList.add("changed");
  }

  // Whether a frame waits for the person's choice: one with legal actions, unless it is an offer the table
  // answers for them (answer_offers: "answered").
  function asksPerson(frame) {
    return Boolean(frame.view.legal_actions?.length && table.summary.human !== null && !frame.answered);
  }

  function drawTurn(view, frame) {
    const s = table.summary;
    let text = "";
    if (s.status === "over" && !table.queue.length && table.fetched >= s.steps - 1) text = "the game is over";
    else if (asksPerson(frame)) text = "your turn: choose an action";
    else if (s.status === "waiting" && s.to_move !== null) text = `waiting for ${seatName(view, s.to_move)} (a person)`;
    else if (frame.answered) text = `${s.offers}: answered for you`;
    else if (Array.isArray(view.to_act)) text = "everyone chooses";
    else if (view.to_act !== null && view.to_act !== undefined) text = `${seatName(view, view.to_act)} to act`;
    $("turn").textContent = text;
  }

  // Moves that cannot be taken back ask to be confirmed: a second press (click, Enter or its key) plays.
  const IRREVERSIBLE = /^(sell|sell_equipped|discard|decline|forfeit)(:|$)/;
  // Headings of the groups of actions, by the action name's first part; any other part is shown as is.
  const GROUPS = { play: "play a card", attack: "attack", react: "react to the attack", pass: "pass", target: "choose a target",
    equip: "equip", combo: "play a combo", pick: "pick a card", token: "use a Card Draw token", forfeit: "discard",
    fight: "fight", curse: "curse a player", use: "use a card", loot: "loot", offer: "offer help", ask: "ask for help",
    sell: "sell", sell_equipped: "sell an equipped item", discard: "discard", summon: "summon", run: "run away" };

  function drawChoices(frame) {
    // The person's choices: the action list, and the same actions on the board (board.js: a card, then its target).
    drawActions(frame);
    if (!$("actions").querySelector("button.action")) { window.TZBoard.detach(); return; }
    const offered = window.TZBoard.attach($("board"), frame, { act: (name) => act(name, frame.step),
      irreversible: (name) => IRREVERSIBLE.test(name) });
    if (offered.cards) $("turn").textContent = "your turn: choose a card on the board (then its target), or an action below";
    else if (offered.players) $("turn").textContent = "your turn: choose a player on the board, or an action below";
  }

  function drawActions(frame) {
    const box = $("actions");
    box.replaceChildren();
    const s = table.summary;
    const legal = frame.view.legal_actions || [];
    if (s.human === null || !legal.length || table.queue.length || frame.step !== table.fetched) return;
    if (frame.answered) return;  // a declinable offer the table answers for the person (answer_offers)
    const groups = new Map();
    for (const name of legal) {
      const part = name.split(":")[0];
      if (!groups.has(part)) groups.set(part, []);
      groups.get(part).push(name);
    }
    let number = 0;
    for (const [part, names] of groups) {
      const list = h("div", { class: "group-actions" });
      box.append(h("div", { class: "group", role: "group", "aria-label": GROUPS[part] || pretty(part) },
        h("h4", { text: GROUPS[part] || pretty(part) }), list));
      for (const name of names) {
        number += 1;
        const key = number <= 9 ? String(number) : null;
        const description = readable((frame.descriptions || {})[name] || pretty(name));
        // In words, naming players (the server's descriptions); the stable name is only its tooltip.
        const button = h("button", { type: "button", class: "action", "data-action": name, "aria-keyshortcuts": key, title: name },
          h("span", { class: "key", "aria-hidden": "true", text: key || "" }), h("b", { text: description }));
        button.addEventListener("click", () => press(button, name, frame.step));
        list.append(button);
      }
    }
    // A declinable offer (MiniSteel's Card Draw windows) is answered here like any choice; the "never ask me"
    // setting above the actions leaves it and every later one to the table.
    box.querySelector("button")?.focus({ preventScroll: true });
    const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    box.scrollIntoView({ block: "nearest", behavior: reduced ? "auto" : "smooth" });
  }

  function press(button, name, step) {
    if (IRREVERSIBLE.test(name) && !button.classList.contains("confirming")) {
      for (const other of $("actions").querySelectorAll("button.confirming")) unconfirm(other);
      button.classList.add("confirming");
      button.dataset.label = button.querySelector("b").textContent;
      button.querySelector("b").textContent = `${button.dataset.label}: this cannot be undone; press again to confirm (Esc: no)`;
      button.focus();
      return;
    }
    act(name, step);
  }

  function unconfirm(button) {
    button.classList.remove("confirming");
    button.querySelector("b").textContent = button.dataset.label;
  }

  function actionKeys(event) {
    // Space never plays a move (it would press the focused button); the arrows, Home and End move
    // between the actions, so every action is reachable from the keyboard, not only the first nine.
    if (event.key === " ") { event.preventDefault(); return; }
    const buttons = [...$("actions").querySelectorAll("button.action")];
    const at = buttons.indexOf(document.activeElement);
    let next = null;
    if (event.key === "ArrowDown" || event.key === "ArrowRight") next = at + 1;
    else if (event.key === "ArrowUp" || event.key === "ArrowLeft") next = at - 1;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = buttons.length - 1;
    else if (event.key === "Escape") { for (const b of buttons) if (b.classList.contains("confirming")) unconfirm(b); return; }
    if (next === null || !buttons.length) return;
    event.preventDefault();
    buttons[(next + buttons.length) % buttons.length].focus();
  }

  async function act(name, step) {
    const said = readable(((table.shown && table.shown.descriptions) || {})[name] || pretty(name));
    $("actions").replaceChildren(h("span", { class: "muted", text: `you chose: ${said}…` }));
    try {
      const body = { action: name, step };
      table.summary = await api(`/api/tables/${table.summary.id}/act`, { json: body, token: table.token });
      fetchFrames();
    } catch (error) {
      showError(error.message);
      if (table.shown) drawChoices(table.shown);
    }
  }

  function finishIfOver() {
    const s = table.summary;
    if (s.status !== "over" || table.fetched < s.steps - 1 || table.queue.length) return;
    if (table.shown) drawTurn(table.shown.view, table.shown);
    const r = s.result || {};
    const standings = standingsOf(s);
    $("verdict").textContent = r.verdict || standings.headline;
    $("standings").replaceChildren(...standings.rows.map((text) => h("li", { text })));
    const parts = [];
    if (r.forfeit) parts.push(`player_${r.forfeit.seat} (${r.forfeit.bot}) forfeits: ${pretty(r.forfeit.kind)}: ${r.forfeit.reason}`);
    if (r.end_reason) parts.push(`the game ended by ${pretty(r.end_reason)}`);
    parts.push(`seed ${s.seed}`);
    $("result-detail").textContent = parts.join("; ");
    // A link sends no headers: at a table of people the record (every hand) takes this seat's token in its address.
    $("download").href = `/api/tables/${s.id}/record${table.token && s.people ? `?token=${encodeURIComponent(table.token)}` : ""}`;
    $("download").setAttribute("download", `${s.game}-${s.seed}.json`);
    $("result").hidden = false;
    $("actions").replaceChildren();
    if (window.TZ.review) window.TZ.review.offer();
  }

  function standingsOf(s) {
    // The final standings in words, best first: who won, who shared, who lost (from the scores, each
    // seat's share of the win); a game cut off without a winner says so.
    const r = s.result || {};
    const name = (seat) => (seat.seat === s.human ? `you (${seat.agent})` : `${seat.agent} (${seat.player})`);
    if (!r.scores) return { headline: r.forfeit ? "A bot forfeited" : "The game is over", rows: [] };
    // The places the server sends follow the game's own finishing order (Minefield: the last one out is
    // second, though every loser's return is the same); without them, equal scores share a place.
    const order = s.seats.map((seat) => ({ seat, score: r.scores[seat.seat], place: r.places ? r.places[seat.seat] : null }))
      .sort((a, b) => (a.place !== null ? a.place - b.place : b.score - a.score));
    const best = order[0].score;
    const winners = order.filter((o) => o.score === best);
    const rows = order.map((o) => {
      const place = o.place ?? order.findIndex((p) => p.score === o.score) + 1;
      const words = o.score === 1 ? "wins" : o.score === 0 ? "does not win" : `shares the win (${Math.round(o.score * 100)}%)`;
      return `${place}. ${name(o.seat)} ${words}` + (r.returns ? ` — return ${returnText(r.returns[o.seat.seat])}` : "");
    });
    let headline;
    if (winners.length === 1 && best === 1) headline = `${name(winners[0].seat)} wins`;
    else if (winners.length === order.length) headline = "Nobody wins: the win is shared by all";
    else headline = `${winners.map((w) => name(w.seat)).join(" and ")} share the win`;
    return { headline: headline[0].toUpperCase() + headline.slice(1), rows };
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
    stopAutoplay();
    const game = replay.games[Number($("replay-game").value)];
    setGlossary((games.find((g) => g.name === game.game) || {}).cards);
    $("replay-seat").replaceChildren(...(game.seats || []).map((name, i) => h("option", { value: i, text: `player_${i} (${name})` })));
    $("replay-step").max = game.steps - 1;
    $("replay-step").value = 0;
    const r = game.forfeit ? `player_${game.forfeit.seat} forfeited` : game.returns ? winnersText(game) : "unfinished";
    $("replay-summary").textContent = `${game.steps - 1} steps; ${r}${game.end_reason ? `; ended by ${pretty(game.end_reason)}` : ""}`;
    $("replay-log").replaceChildren();
    replay.previous = null;
    showReplayStep();
  }

  function winnersText(game) {
    // Who won a recorded game, in words (the highest return wins; equal highest share the win).
    const best = Math.max(...game.returns);
    const name = (i) => `player_${i}${game.seats && game.seats[i] ? ` (${game.seats[i]})` : ""}`;
    const winners = game.returns.map((v, i) => [v, i]).filter(([v]) => v === best).map(([, i]) => name(i));
    if (winners.length === game.returns.length) return "nobody wins: every seat ends level";
    return winners.length === 1 ? `${winners[0]} wins` : `${winners.join(" and ")} share the win`;
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
      $("replay-note").textContent = frame.note ? `step ${step}: ${readable(frame.note)}` : "the deal";
      const lines = Array.isArray(frame.events) ? frame.events : viewEvents(frame.view);
      $("replay-log").replaceChildren(...(lines.length ? lines : ["nothing happened that this seat could see"]).map((line) => h("li", { text: readable(line) })));
    } catch (error) { showError(error.message); stopAutoplay(); }
  }

  let autoplay = null;

  function stopAutoplay() {
    clearTimeout(autoplay);
    autoplay = null;
    $("replay-play").textContent = "Play";
    $("replay-play").setAttribute("aria-pressed", "false");
  }

  function autoplayStep() {
    const slider = $("replay-step");
    if (Number(slider.value) >= Number(slider.max)) { stopAutoplay(); return; }
    stepReplay(1);
    autoplay = setTimeout(autoplayStep, SPEEDS[Number($("replay-speed").value)]);
  }

  function toggleAutoplay() {
    if (autoplay !== null) { stopAutoplay(); return; }
    const slider = $("replay-step");
    if (Number(slider.value) >= Number(slider.max)) { slider.value = 0; showReplayStep(); }
    $("replay-play").textContent = "Pause";
    $("replay-play").setAttribute("aria-pressed", "true");
    autoplay = setTimeout(autoplayStep, SPEEDS[Number($("replay-speed").value)]);
  }

  function stepReplay(delta) {
    const slider = $("replay-step");
    const next = Math.max(0, Math.min(Number(slider.max), Number(slider.value) + delta));
    if (next !== Number(slider.value)) { slider.value = next; showReplayStep(); }
  }

  // --- wiring ----------------------------------------------------------------------------------------

  document.addEventListener("keydown", (event) => {
    if (event.target.matches("input, select, textarea")) return;
    if (event.target.closest && event.target.closest("#actions")) actionKeys(event);
    if (event.defaultPrevented) return;
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
  // A button is pressed by Space on key up: refuse that too, for the action buttons.
  document.addEventListener("keyup", (event) => {
    if (event.key === " " && event.target.closest && event.target.closest("#actions")) event.preventDefault();
  });

  // What review.js (the review after the game) uses of this page: the server, the table open now, new tables.
  window.TZ.app = { api, opened, showError, current: () => table };

  async function init() {
    for (const button of document.querySelectorAll("nav button")) {
      button.addEventListener("click", () => { closeTable(); show(button.dataset.show); });
    }
    window.addEventListener("popstate", route);
    $("skip").addEventListener("click", () => { if (table) { table.skip = true; pump(); } });
    $("replay-play").addEventListener("click", toggleAutoplay);
    $("setup-form").addEventListener("submit", startGame);
    $("game").addEventListener("change", drawSetup);
    $("upload-button").addEventListener("click", upload);
    $("lobby-refresh").addEventListener("click", drawLobby);
    $("rematch").addEventListener("click", async () => {
      try { opened(await api(`/api/tables/${table.summary.id}/rematch`, { json: {}, token: table.token })); } catch (error) { showError(error.message); }
    });
    $("new-game").addEventListener("click", () => { closeTable(); show("setup"); });
    $("replay-prev").addEventListener("click", stopAutoplay);
    $("pause").addEventListener("click", () => {
      if (!table) return;
      table.paused = !table.paused;
      $("pause").textContent = table.paused ? "Play" : "Pause";
      $("pause").setAttribute("aria-pressed", String(table.paused));
      pump();
    });
    $("watch-seat").addEventListener("change", restartWatch);
    $("never-ask-box").addEventListener("change", setNeverAsk);
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
      await route();
      document.body.dataset.ready = "true";
    } catch (error) { showError(`cannot load the games: ${error.message}`); }
  }

  init();
})();
