// UNO Arena web view: the live matches, and one table live over server-sent events.
// Plain JavaScript, no build step. Every text from the server goes through textContent.
"use strict";

const main = document.getElementById("main");
const where = document.getElementById("where");
const conn = document.getElementById("conn");
let source = null;   // the EventSource of the table on show
let listTimer = null;
let clockTimer = null;
let lastState = null;
let shown = 0;       // counts the views shown: a late answer for an earlier one is dropped

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function card(c, extra) {
  return el("span", { class: `card ${c.color} ${extra || ""}`, "data-card": c.code, text: c.label });
}

function stopAll() {
  shown += 1;
  if (source) { source.close(); source = null; }
  if (listTimer) { clearInterval(listTimer); listTimer = null; }
  if (clockTimer) { clearInterval(clockTimer); clockTimer = null; }
  lastState = null;
}

// ---------------------------------------------------------------- the list of matches

function refusedList(status, reason) {
  // the server answered, and refused the list's filter (a 4xx): its reason, not "unreachable"
  const text = `the server refused this list (HTTP ${status}): ${reason}; fix the address's ` +
    "?label=KEY=VALUE filter, or open the list of all matches";
  conn.textContent = text;
  main.replaceChildren(el("p", { class: "empty problem", text }),
    el("p", {}, el("a", { href: "/", text: "all matches" })));
}

async function loadList() {
  let data;
  const view = shown;
  try {
    const res = await fetch("/api/matches" + location.search);
    if (!res.ok) {
      const reason = await res.text();
      if (res.status < 500) { if (view === shown) refusedList(res.status, reason); return; }
      throw new Error(reason);  // 5xx: the web view could not ask its server
    }
    data = await res.json();
    conn.textContent = "";
  } catch (err) {
    conn.textContent = "server unreachable: " + err.message;
    return;
  }
  if (view !== shown) return;  // a late answer: another view is on show
  // a finished match whose events the server no longer keeps is listed, not offered to open
  const rows = data.matches.map((m) => el("tr", {
    class: m.replayable === false ? `${m.state} expired` : m.state, "data-match": m.match_id },
    el("td", {}, m.replayable === false ? el("span", { text: m.match_id })
      : el("a", { href: `#/match/${encodeURIComponent(m.match_id)}`, text: m.match_id })),
    el("td", { text: m.replayable === false ? `${m.state}, too old to replay` : m.state }),
    el("td", { text: m.seats.join(", ") }),
    el("td", { text: String(m.hand) }),
    el("td", { text: Object.entries(m.labels).map(([k, v]) => `${k}=${v}`).join(" ") }),
    el("td", { text: m.winners.length ? m.winners.map((w) => m.seats[w]).join(", ") : "" }),
  ));
  const table = el("table", { class: "matches" },
    el("thead", {}, el("tr", {}, ["match", "state", "seats", "hand", "labels", "won"].map(
      (h) => el("th", { text: h })))),
    el("tbody", {}, rows));
  const live = data.matches.filter((m) => m.state === "running").length;
  const old = data.matches.some((m) => m.replayable === false);
  const parts = [
    el("h1", { text: `${live} match${live === 1 ? "" : "es"} in play` }),
    data.matches.length ? table : el("p", { class: "empty", text: "No matches yet." })];
  if (old) {
    parts.push(el("p", { class: "empty", id: "too-old", text: "Too old to replay: the server " +
      "keeps a finished match's events only a short while after its end, and its result " +
      "longer. Open a match in play or one that ended recently." }));
  }
  main.replaceChildren(...parts);
}

function showList() {
  stopAll();
  where.textContent = "live matches";
  loadList();
  listTimer = setInterval(loadList, 2000);
}

// ---------------------------------------------------------------- one table

function direction(s) {
  // eliminated seats are passed over
  const playing = s.seats.filter((x) => !x.eliminated).map((x) => x.seat);
  const n = playing.length;
  const start = Math.max(0, playing.indexOf(s.current));
  const order = [];
  for (let k = 0; k < n; k++) order.push(playing[(start + s.direction * k + n * n) % n]);
  return order.join(" → ") + (s.direction > 0 ? "  (seat numbers up)" : "  (seat numbers down)");
}

function logLine(line) {
  const node = el("li", { class: line.kind || null, "data-seq": line.seq, "data-hand": line.hand });
  for (const part of line.parts) {
    if (typeof part === "string") node.append(part);
    else if (part.card) node.append(card(part.card, "small"));
    else if (part.color) node.append(el("span", { class: `named ${part.color}`, text: part.color }));
  }
  return node;
}

function seatBox(s, st) {
  const classes = ["seat"];
  if (st.current === s.seat) classes.push("turn");
  if (st.window && st.window.offender === s.seat) classes.push("window");
  if (st.match_over && st.winners.includes(s.seat)) classes.push("winner");
  if (s.eliminated) classes.push("eliminated");
  const backs = el("div", { class: "backs" });
  for (let i = 0; i < Math.min(s.cards, 20); i++) backs.append(el("span", { class: "back" }));
  const box = el("div", { class: classes.join(" "), "data-seat": s.seat },
    el("div", { class: "name" }, `${s.seat} · ${s.name}`,
      s.eliminated ? el("span", { class: "note", text: " (eliminated)" }) : null,
      s.taken_over ? el("span", { class: "note", text: " (AI plays)" }) : null,
      s.connected ? null : el("span", { class: "note", text: " (offline)" })),
    el("div", { class: "count" }, el("b", { class: "cards", text: String(s.cards) }),
      s.cards === 1 ? " card" : " cards",
      s.uno ? el("span", { class: "uno", text: "UNO" }) : null,
      el("span", { class: "points", text: `${s.total} pts` })),
    backs);
  if (s.eliminated && !s.revealed && st.phase === "over") {
    // it sat the hand out: no hand to show, and it did not go out
    box.append(el("div", { class: "revealed", "data-hand": st.hand }, el("i", { text: "eliminated" })));
  } else if (s.revealed) {
    box.append(el("div", { class: "revealed", "data-hand": st.hand },
      s.revealed.length ? s.revealed.map((c) => card(c, "small")) : el("b", { text: "out!" }),
      s.revealed.length ? el("span", { class: "note", text: ` ${s.points_held || 0} points` }) : null));
  }
  return box;
}

function windowText(st) {
  if (!st.window) return null;
  const name = st.seats[st.window.offender].name;
  let text = `UNO window on ${name}`;
  if (st.window.closes_at) {
    const left = Math.max(0, st.window.closes_at - Date.now() / 1000);
    text += `: ${left.toFixed(1)} s`;
  }
  return el("div", { class: "banner", id: "window", text });
}

function renderTable(st) {
  lastState = st;
  const labels = Object.entries(st.labels).map(([k, v]) => `${k}=${v}`).join(" ");
  where.textContent = `${st.match_id}${labels ? " · " + labels : ""} · hand ${st.hand}` +
    (st.ended ? " · ended" : "");
  const centre = el("div", { class: "centre", "data-hand": st.hand },
    el("div", { class: "top" }, st.top ? card(st.top, "big") : el("span", { text: "no card yet" })),
    el("div", {}, "Colour ", st.color
      ? el("span", { class: `named ${st.color}`, id: "color", text: st.color.toUpperCase() })
      : el("span", { text: "none yet" })),
    el("div", { id: "direction", text: "Direction " + direction(st) }),
    el("div", { text: `Draw pile ${st.draw_pile} · discard pile ${st.discard}` }),
    st.penalty ? el("div", { class: "penalty", text: `penalty waiting: ${st.penalty} cards` }) : null,
    windowText(st),
    st.match_over
      ? el("div", { class: "result", text: st.cancelled ? `Cancelled: ${st.cancelled}`
        : `Match over: ${st.winners.map((w) => st.seats[w].name).join(" and ")} won` })
      : st.phase === "over" && st.winner >= 0
        ? el("div", { class: "result", text: `${st.seats[st.winner].name} won the hand` })
        : null);
  const seats = el("div", { class: "seats" }, st.seats.map((s) => seatBox(s, st)));
  const log = el("ol", { class: "log", id: "log" }, st.log.map(logLine));
  main.replaceChildren(el("section", { class: "table", id: "table", "data-seq": st.seq,
    "data-phase": st.phase }, seats, centre), el("h2", { text: "What happened" }), log);
  log.scrollTop = log.scrollHeight;
}

function eventsUrl(id) {
  // "." and ".." are path segments a browser drops from a URL, even written %2E: such an id
  // goes in the query, so the server answers for it (other ids stay in the path)
  if (id === "." || id === "..") return `/api/events?match=${encodeURIComponent(id)}`;
  return `/api/matches/${encodeURIComponent(id)}/events`;
}

function showMatch(id) {
  stopAll();
  where.textContent = id.length > 40 ? id.slice(0, 40) + "..." : id;
  main.replaceChildren(el("p", { class: "empty", text: "joining ..." }));
  const url = eventsUrl(id);
  let problem = "";  // a problem stays on the page: the end that follows it does not hide it
  const view = shown;
  const say = (text) => {
    if (view !== shown) return;
    conn.textContent = text;
    if (!lastState) main.replaceChildren(el("p", { class: "empty problem", text }));
  };
  source = new EventSource(url);
  source.addEventListener("state", (ev) => { conn.textContent = ""; renderTable(JSON.parse(ev.data)); });
  source.addEventListener("problem", (ev) => { problem = JSON.parse(ev.data).message; say(problem); });
  source.addEventListener("end", () => { source.close(); source = null; say(problem || "match over"); });
  source.onerror = () => {
    if (!source) return;
    if (source.readyState !== EventSource.CLOSED) { conn.textContent = "reconnecting ..."; return; }
    // refused before the stream started (an unknown match, a malformed id): ask once for why
    source = null;
    fetch(url).then(async (res) => {
      if (res.ok) { res.body.cancel(); say("the stream closed; reload to try again"); return; }
      say(await res.text());
    }).catch((err) => say("server unreachable: " + err.message));
  };
  clockTimer = setInterval(() => {
    if (lastState && lastState.window) {
      const banner = document.getElementById("window");
      const fresh = windowText(lastState);
      if (banner && fresh) banner.replaceWith(fresh);
    }
  }, 200);
}

function badLink(raw) {
  // a link whose id is not valid percent-encoding (cut short, typed by hand): say so
  stopAll();
  where.textContent = "bad link";
  const shownRaw = raw.length > 40 ? raw.slice(0, 40) + "..." : raw;
  const text = `the link's match id "${shownRaw}" is not valid percent-encoding (cut short?); ` +
    "go back to the list of matches";
  conn.textContent = text;
  main.replaceChildren(el("p", { class: "empty problem", text }),
    el("p", {}, el("a", { href: "#/", text: "live matches" })));
}

function route() {
  const m = location.hash.match(/^#\/match\/(.+)$/);
  if (!m) { showList(); return; }
  let id;
  try { id = decodeURIComponent(m[1]); } catch (err) { badLink(m[1]); return; }
  showMatch(id);
}

window.addEventListener("hashchange", route);
route();
