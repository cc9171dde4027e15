// Drawing a seat's view of each game. Every renderer reads the view dict the server sent (the env's
// view(agent)) and draws what is there; a missing field is skipped, and an unknown game gets the
// generic drawing, so a renderer never breaks when a game's view gains or loses a field.
"use strict";

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "style") el.style.cssText = value; // CSSOM: the page's policy forbids style attributes
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const has = (value) => value !== null && value !== undefined;
// Watching or replaying, the view's own seat is the one looked from, not "you".
let spectating = false;
const setSpectating = (value) => { spectating = Boolean(value); };
const seatName = (view, seat) => (seat !== view.you ? `player_${seat}` : spectating ? `player_${seat} (seen from)` : `you (player_${seat})`);
const handLabel = (view) => (spectating ? `player_${view.you}'s hand` : "your hand");
const pretty = (name) => String(name).replace(/_/g, " ");
// The one place a game's names become words for people: every name the games use (a card, a monster, a bad
// stuff, a phase: "steel_shield", "lose_armor") is a snake_case word, read with spaces, wherever it stands in
// a value or in a line the server wrote ("discarding hook_rope"). Seats (player_2) and bot specs after a colon
// (zoo:tiny_minotaur) are left as they are: they are addresses, not words.
const GAME_NAME = /(?<![\w:/.])[a-z]+(?:_[a-z]+)+(?![\w])/g;
const readable = (text) => String(text).replace(GAME_NAME, pretty);

function fmt(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(fmt).join(", ") : "none";
  if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${pretty(k)} ${fmt(v)}`).join(", ");
  return readable(value);
}

function returnText(value) {
  // A return as a person reads it: signed, to 3 significant digits (-0.333, not -0.3333333333333333), as the
  // terminal prints it (eval/play.py return_text).
  if (typeof value !== "number" || !Number.isFinite(value)) return fmt(value);
  if (value === 0) return "0";
  const text = String(Number(value.toPrecision(3)));
  return value > 0 ? `+${text}` : text;
}

function facts(pairs) {
  // A definition list of the pairs whose value is present.
  const dl = h("dl", { class: "facts" });
  for (const [label, value] of pairs) {
    if (!has(value)) continue;
    dl.append(h("dt", { text: label }), h("dd", { text: fmt(value) }));
  }
  return dl;
}

function bar(value, max, label) {
  const share = Math.max(0, Math.min(1, max > 0 ? value / max : 0));
  return h("div", { class: "bar", role: "img", "aria-label": `${label} ${value}` },
    h("div", { class: "fill", style: `width:${Math.round(share * 100)}%` }),
    h("span", { text: `${label} ${value}` }));
}

// Each card's text by name, for the game on show (GET /api/games sends it where the game has them).
let glossary = {};
const setGlossary = (texts) => { glossary = texts || {}; };
const cardText = (name) => glossary[name] || null;

function card(name, count, extra, owner, playable) {
  // A card: its name, how many, and its text where the game has one (what it does, in words). A card the
  // person may play (their hand) is a button, its text shown on hover and focus (board.js enables the
  // ones a legal action plays: aria-disabled until then, so that its text can still be focused and read).
  const text = cardText(name);
  return h(playable ? "button" : "span", { class: `card ${playable ? "hand-card" : ""} ${extra || ""}`, "data-card": name,
    type: playable ? "button" : null, "aria-disabled": playable ? "true" : null },
  h("span", { class: "card-name", text: pretty(name) }), has(count) && count !== 1 ? h("b", { text: `×${count}` }) : null,
  owner ? h("span", { class: "card-owner", text: owner }) : null,
  text ? h("small", { class: "card-text", text }) : null);
}

function cardsOf(counts, playable) {
  // {kind: count} or [names] as a row of cards; ``playable``: the person's own, which they play by clicking
  // (never while watching or replaying: those show a seat's cards, nobody plays them).
  const mine = Boolean(playable) && !spectating;
  const row = h("div", { class: "cards", "data-play": mine });
  if (Array.isArray(counts)) counts.forEach((name) => row.append(card(name, null, "", null, mine)));
  else if (counts && typeof counts === "object") {
    for (const [name, count] of Object.entries(counts)) if (count) row.append(card(name, count, "", null, mine));
  }
  if (!row.childElementCount) row.append(h("span", { class: "muted", text: "none" }));
  return row;
}

function faces(window) {
  // A d20 window as [low, high]: the view sends "16-20 (25%)"; [16, 20] is read too. null: none.
  if (Array.isArray(window) && window.length === 2 && window.every(Number.isInteger)) return window;
  const found = /^\s*(\d+)\s*[-–]\s*(\d+)/.exec(String(window ?? ""));
  return found ? [Number(found[1]), Number(found[2])] : null;
}

function windowText(window) {
  const range = faces(window);
  if (typeof window === "string") return window.replace(/^(\d+)-(\d+)/, "$1–$2");
  return range ? `${range[0]}–${range[1]}` : fmt(window);
}

function d20Bands(windows) {
  // Each window as a band of faces, in the view's order: [{kind, low, high}] (a window that is not one is left
  // out). Windows overlap (Tiny Minotaur's heal 12-20 holds dodge 15-20, stronk 8-13 sits inside middling
  // 3-13), so each gets a band of its own: one colour per face would hide one of them.
  return Object.entries(windows || {}).map(([kind, w]) => [kind, faces(w)]).filter(([, r]) => r)
    .map(([kind, [low, high]]) => ({ kind, low: Math.max(1, low), high: Math.min(20, high) })).filter((b) => b.low <= b.high);
}

function d20(windows, marks) {
  // The faces 1..20 (marked faces ringed) over one band per window, stacked: every window whole, overlaps and all.
  const label = Object.entries(windows || {}).map(([k, w]) => `${pretty(k)} ${windowText(w)}`).join(", ");
  const strip = h("div", { class: "d20", role: "img", "aria-label": "d20 windows: " + (label || "none") });
  strip.append(h("span", { class: "band-name", text: "d20" }));
  for (let face = 1; face <= 20; face++) {
    strip.append(h("span", { class: `face ${(marks || []).includes(face) ? "mark" : ""}`, "data-face": face, text: face }));
  }
  for (const band of d20Bands(windows)) {
    // grid-column through the CSSOM (h's style): the page's policy forbids style attributes.
    strip.append(h("span", { class: `band-name w-${band.kind}`, text: pretty(band.kind) }),
      h("span", { class: `band w-${band.kind}`, "data-kind": band.kind, "data-low": band.low, "data-high": band.high,
        style: `grid-column:${band.low + 1} / ${band.high + 2}` }));
  }
  return strip;
}

function playerBox(view, player, body) {
  const seat = player.seat;
  const classes = ["player", seat === view.you ? "me" : "", seat === view.to_act ? "acting" : "",
    player.alive === false || player.dead ? "out" : ""].join(" ");
  return h("article", { class: classes, "data-seat": seat, "aria-label": seatName(view, seat) },
    h("h4", { text: seatName(view, seat) + (seat === view.to_act ? " — to act" : "") }), ...body);
}

function attackText(view, a) {
  // An attack waiting for its answer, in words; each field is read only if the view has it.
  const parts = [`${has(a.damage) ? `${a.damage} damage` : "an attack"}`];
  if (a.poison === true) parts.push("and a Poison token if it gets through");
  else if (typeof a.poison === "number" && a.poison) parts.push(`and ${a.poison} Poison`);
  let text = `${seatName(view, a.attacker)} attacks ${seatName(view, a.target)} with ${pretty(a.card)}${a.combo ? " (a combo)" : ""}: ${parts.join(" ")}`;
  if (a.shield) text += `; ${seatName(view, a.target)} raised ${pretty(a.shield)}`;
  return text;
}

// Wyvern's statuses in words (docs/rules/wyvern.md: each lasts to the end of the victim's next turn).
const STATUS_WORDS = { paralyzed: "paralysed: loses the next turn", slowed: "slowed: -2 to run away",
  confused: "confused: -3 combat level" };

function statusWords(p) {
  const on = Object.keys(STATUS_WORDS).filter((key) => p[key]).map((key) => STATUS_WORDS[key]);
  return on.length ? on : null;
}

const renderers = {
  tiny_minotaur(view) {
    const root = h("div", { class: "board tm" });
    const maxHp = Math.max(100, ...(view.players || []).map((p) => p.hp || 0));
    for (const p of view.players || []) {
      root.append(playerBox(view, p, [
        bar(p.hp ?? 0, maxHp, "HP"),
        facts([["class", p.class], ["tier", p.tier], ["boss", p.boss]]),
        h("div", { class: "label", text: "cards" }), cardsOf(p.cards, p.seat === view.you),
        h("div", { class: "label", text: "hit windows (d20)" }), d20(p.windows),
        h("div", { class: "legend" }, ...Object.entries(p.windows || {}).map(([k, w]) => h("span", { class: `w-${k} key`, text: `${pretty(k)} ${windowText(w)}` }))),
      ]));
    }
    const hit = view.pending_hit;
    root.append(h("div", { class: "center" },
      facts([["phase", view.phase], ["turn", has(view.turn) ? `${view.turn} of ${view.max_turns ?? "?"}` : null],
        ["initiative", view.initiative_rolls], ["first", has(view.first_seat) ? `player_${view.first_seat}` : null]]),
      hit ? h("p", { class: "pending", text: `incoming: player_${hit.attacker}'s ${pretty(hit.card)} for ${hit.damage} damage` }) : null));
    return root;
  },

  minefield(view) {
    const root = h("div", { class: "board mf" });
    const alive = new Set(view.alive || []);
    const seats = new Set([...(view.alive || []), ...(view.eliminated_order || [])]);
    if (has(view.you)) seats.add(view.you);
    // Battles are d100 against d100: the grid is 1..100, this round's mines filled, the last round's
    // mine numbers ringed, the last round's rolls marked.
    const mines = view.mines || [];
    const last = view.last_round || {};
    const lastMines = (last.mine_rolls || []).flatMap((r) => r.numbers || []);
    const rolled = (last.attacks || []).flatMap((a) => (a.rolls || []).flat()).filter((n) => n > 0);
    const grid = h("div", { class: "d100", role: "img", "aria-label": "mines: " + fmt(mines) });
    for (let n = 1; n <= 100; n++) {
      const kinds = [mines.includes(n) ? "mine" : "", lastMines.includes(n) ? "was-mine" : "", rolled.includes(n) ? "mark" : ""];
      grid.append(h("span", { class: `face ${kinds.join(" ")}`, text: n, title: `${n}${mines.includes(n) ? ": a mine" : ""}${rolled.includes(n) ? " (rolled last round)" : ""}` }));
    }
    root.append(h("div", { class: "center" },
      facts([["round", view.round], ["variant", view.variant], ["double whammy", view.double_whammy],
        ["finals next", view.finals_next]]),
      h("p", { class: "mines-text", text: view.mines_text || `mines: ${mines.length ? fmt(mines) : "none"}` }),
      h("div", { class: "label", text: "d100: the mines above (filled), last round's mine rolls (ringed), last round's attack rolls (bold)" }), grid));
    const players = h("div", { class: "players" });
    for (const seat of [...seats].sort((a, b) => a - b)) {
      players.append(playerBox(view, { seat, alive: alive.has(seat) }, [
        h("p", { text: alive.has(seat) ? "in the game" : `out (${(view.eliminated_order || []).indexOf(seat) + 1}. out)` })]));
    }
    root.append(players);
    const lines = [];
    for (const r of last.mine_rolls || []) lines.push(`mine roll d10 ${r.d10} (${r.pick}): ${fmt(r.numbers)}`);
    for (const a of last.attacks || []) lines.push(`player_${a.attacker} attacks player_${a.defender}: ${pretty(a.outcome)} (rolls ${fmt(a.rolls)})`);
    if ((last.eliminated || []).length) lines.push(`eliminated: ${last.eliminated.map((s) => `player_${s}`).join(", ")}`);
    if (lines.length) root.append(h("div", { class: "center" }, h("div", { class: "label", text: "last round" }), h("ul", {}, lines.map((t) => h("li", { text: t })))));
    return root;
  },

  ministeel(view) {
    const root = h("div", { class: "board ms" });
    const players = h("div", { class: "players" });
    const maxHp = Math.max(10, ...(view.players || []).map((p) => p.hp || 0));
    for (const p of view.players || []) {
      const worn = Object.entries(p.equipment || {}).filter(([, v]) => v).map(([k]) => pretty(k));
      players.append(playerBox(view, p, [
        bar(p.hp ?? 0, maxHp, "HP"),
        facts([["poison", p.poison], ["draw tokens", p.draw_tokens], ["cards in hand", p.hand_size],
          ["equipped", worn.length ? worn : null], ["skips", p.skips || null], ["alive", p.alive === false ? false : null]]),
        has(p.hand) ? h("div", { class: "hand", "data-owner": p.seat }, h("div", { class: "label", text: handLabel(view) }), cardsOf(p.hand, p.seat === view.you)) : null,
      ]));
    }
    root.append(players);
    const a = view.pending_attack;
    const pick = view.pick;
    root.append(h("div", { class: "center" },
      facts([["phase", view.phase], ["turn of", has(view.turn_seat) ? seatName(view, view.turn_seat) : null],
        ["actions left", view.actions_left], ["deck", view.deck_size], ["turn", has(view.turn) ? `${view.turn} of ${view.max_turns ?? "?"}` : null]]),
      a ? h("p", { class: "pending", text: attackText(view, a) }) : null,
      pick ? h("div", {}, h("p", { text: `${seatName(view, pick.seat)} picks from ${pretty(pick.source)}` }), has(pick.cards) ? cardsOf(pick.cards, pick.seat === view.you) : null) : null,
      // v2's Card Draw window: who may use a token now (draw 3 or pass), and who is asked after.
      view.draw_window ? h("p", { class: "pending", text: `Card Draw window${view.draw_window.turn_boundary ? " at the turn boundary" : " between actions"}: ${seatName(view, view.draw_window.seat)} may draw 3 or pass` + (view.draw_window.asked.length > 1 ? `; then ${view.draw_window.asked.slice(1).map((s) => seatName(view, s)).join(", ")}` : "") }) : null,
      view.discard ? h("div", {}, h("div", { class: "label", text: "discard pile" }), cardsOf(view.discard)) : null));
    return root;
  },

  wyvern(view) {
    const root = h("div", { class: "board wy" });
    const players = h("div", { class: "players" });
    const win = view.win_level || 10;
    for (const p of view.players || []) {
      players.append(playerBox(view, p, [
        bar(p.level ?? 0, win, "level"),
        facts([["combat level", p.combat_level], ["race", p.race], ["class", p.class], ["deck", p.deck],
          ["run bonus", p.run_bonus], ["cards in hand", p.hand_size], ["deck / discard", has(p.deck_size) ? `${p.deck_size} / ${p.discard_size}` : null],
          ["summon", p.summon], ["dead", p.dead ? "dead until their next turn" : null],
          ["statuses", statusWords(p)]]),
        h("div", { class: "label", text: "equipped" }), cardsOf(p.equipped || [], p.seat === view.you),
      ]));
    }
    root.append(players);
    const c = view.combat;
    const center = h("div", { class: "center" },
      facts([["phase", view.phase], ["active", has(view.active) ? seatName(view, view.active) : null],
        ["turn", has(view.turn) ? `${view.turn} of ${view.max_turns ?? "?"}` : null], ["door card", view.door_card],
        ["gold this turn", view.gold_this_turn]]));
    if (c) {
      center.append(h("div", { class: "combat" },
        h("p", { class: "pending", text: `combat: ${pretty(c.monster)} (level ${c.level}) — monster ${c.monster_strength} vs party ${c.party_strength}: ${c.party_wins ? "the party wins" : "the monster wins"}` }),
        cardText(c.monster) ? h("p", { class: "card-text", text: `${pretty(c.monster)}: ${cardText(c.monster)}` }) : null,
        facts([["fighter", has(c.fighter) ? seatName(view, c.fighter) : null], ["helper", has(c.helper) ? seatName(view, c.helper) : null],
          ["treasures", c.treasures], ["bad stuff", c.bad_stuff], ["asked", has(c.asked) ? seatName(view, c.asked) : null]]),
        (c.table || []).length ? h("div", { class: "cards" }, (c.table || []).map(([owner, key]) => card(key, null, "", `played by ${seatName(view, owner)}`))) : null));
    }
    if (view.door_card && cardText(view.door_card)) center.append(h("p", { class: "card-text", text: `door card ${pretty(view.door_card)}: ${cardText(view.door_card)}` }));
    if (view.looting) center.append(h("p", { text: `looting the body of player_${view.looting.dead}` }));
    root.append(center);
    if (has(view.hand)) root.append(h("div", { class: "hand", "data-owner": view.you }, h("div", { class: "label", text: handLabel(view) }), cardsOf(view.hand, true)));
    return root;
  },
};

const SKIP = new Set(["game", "env", "agent", "legal_actions", "you"]);

function renderGeneric(view) {
  return h("div", { class: "board" }, facts(Object.entries(view).filter(([k, v]) => !SKIP.has(k) && !/event/.test(k) && typeof v !== "object").map(([k, v]) => [pretty(k), v])),
    h("pre", { text: JSON.stringify(Object.fromEntries(Object.entries(view).filter(([k, v]) => !SKIP.has(k) && typeof v === "object")), null, 1) }));
}

function aroundTable(root, view) {
  // A game's drawing laid out as a table: the others around it in their seat order from the seat looked from
  // (the next to play on its left, the one before on its right, the rest across), the middle of the board
  // (phase, the attack waiting, the discard pile, the d100 grid) on the felt, that seat and its hand at the
  // bottom. A drawing without players' boxes (the generic one) is left as it is.
  const boxes = [...root.querySelectorAll(".player[data-seat]")];
  if (!boxes.length) return root;
  const middle = [...root.children].filter((child) => !child.matches(".players, .player, .hand"));
  const hands = [...root.children].filter((child) => child.matches(".hand"));
  const seats = boxes.map((box) => Number(box.dataset.seat));
  const me = seats.includes(view.you) ? view.you : null;
  const count = Math.max(...seats) + 1;
  const from = me ?? -1;
  const order = (seat) => (seat - from - 1 + count) % count;
  const others = boxes.filter((box) => Number(box.dataset.seat) !== me)
    .sort((a, b) => order(Number(a.dataset.seat)) - order(Number(b.dataset.seat)));
  const sides = others.length >= 2 && me !== null;
  const left = sides ? others.shift() : null;
  const right = sides ? others.pop() : null;
  // In the order of play (a screen reader and Tab meet the others as they play); the grid places them around.
  const table = h("div", { class: `${root.className} around ${sides ? "with-sides" : ""}` },
    left ? h("div", { class: "seat-left" }, left) : null,
    others.length ? h("div", { class: "seat-top" }, others) : null,
    right ? h("div", { class: "seat-right" }, right) : null,
    h("div", { class: "felt" }, middle),
    me !== null || hands.length ? h("div", { class: "seat-you" }, boxes.filter((box) => Number(box.dataset.seat) === me), hands) : null);
  return table;
}

function renderView(view) {
  const draw = renderers[view.game] || renderGeneric;
  try {
    return aroundTable(draw(view), view);
  } catch (error) {
    console.error(error);
    return renderGeneric(view);
  }
}

function viewEvents(view) {
  for (const key of ["last_events", "events"]) if (Array.isArray(view[key])) return view[key].map(String);
  return [];
}

function newEvents(previous, current) {
  // The events of `current` not already shown: the longest tail of `previous` that heads `current`.
  for (let k = Math.min(previous.length, current.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k; i++) if (previous[previous.length - k + i] !== current[i]) { same = false; break; }
    if (same) return current.slice(k);
  }
  return current;
}

function resultText(view) {
  if (!view) return "";
  const parts = [];
  if (has(view.winner)) parts.push(`winner: ${seatName(view, view.winner)}`);
  if (has(view.end_reason)) parts.push(`(${pretty(view.end_reason)})`);
  return parts.join(" ");
}

window.TZ = { h, setSpectating, setGlossary, renderView, d20Bands, viewEvents, newEvents, seatName, pretty, readable, fmt, returnText,
  resultText };
