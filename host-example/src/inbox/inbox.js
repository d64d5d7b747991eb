// Warden's approval inbox. Every value shown comes from the service and is
// attacker-influenced (tool arguments, reasons, IDs): it is only ever set
// with textContent, never parsed as HTML. The token lives in this tab's
// sessionStorage and travels only in the Authorization header, so no cookie
// is ever sent and no other site can make this page act (no CSRF).
"use strict";

const KEY = "warden.token";
const SCOPES = ["once", "session", "always"];

function token() { return sessionStorage.getItem(KEY); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function showError(message) { document.getElementById("error").textContent = message || ""; }

async function api(method, path, body) {
  const init = { method, headers: { Authorization: "Bearer " + token() }, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (response.status === 401) { forget(); throw new Error("the token was refused"); }
  if (!response.ok) throw new Error((data && data.error) || ("HTTP " + response.status));
  return data;
}

function when(ms) { return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC"); }

function renderAsk(ask) {
  const box = el("div", null, "ask");
  box.dataset.id = ask.id;
  const head = el("div");
  head.appendChild(el("strong", ask.toolName, "tool"));
  head.appendChild(document.createTextNode(" "));
  head.appendChild(el("span", "risk " + ask.risk, "risk-" + ask.risk));
  box.appendChild(head);
  box.appendChild(el("div", ask.rule + ": " + ask.reason, "reason"));
  const who = [
    "agent " + (ask.agentId || "-"), "sender " + (ask.senderId || "-"),
    "session " + (ask.sessionId || "-"), "asked " + when(ask.createdMs), "expires " + when(ask.expiresMs),
  ].join(" · ");
  box.appendChild(el("div", who, "meta"));
  box.appendChild(el("pre", ask.arguments, "arguments"));
  const offered = SCOPES.indexOf(ask.scope);
  const buttons = el("div");
  SCOPES.forEach((scope, i) => {
    if (i > offered) return; // never broader than the ask offers
    const b = el("button", "Approve " + scope, "approve");
    b.type = "button";
    b.dataset.scope = scope;
    b.addEventListener("click", () => answer(ask.id, "allow", scope));
    buttons.appendChild(b);
  });
  const deny = el("button", "Deny", "deny");
  deny.type = "button";
  deny.addEventListener("click", () => answer(ask.id, "deny", ask.scope));
  buttons.appendChild(deny);
  box.appendChild(buttons);
  return box;
}

async function answer(id, word, scope) {
  showError("");
  try {
    await api("POST", "/v1/asks/" + encodeURIComponent(id), { answer: word, scope });
  } catch (e) {
    showError(e.message);
  }
  await refresh();
}

async function refresh() {
  try {
    const [asks, recent] = await Promise.all([api("GET", "/v1/asks"), api("GET", "/v1/asks/recent")]);
    const list = document.getElementById("asks");
    list.replaceChildren();
    if (asks.asks.length === 0) list.appendChild(el("p", "No pending asks.", "empty"));
    asks.asks.forEach((a) => list.appendChild(renderAsk(a)));
    const rows = document.getElementById("recent");
    rows.replaceChildren();
    recent.recent.forEach((r) => {
      const tr = el("tr");
      [when(r.answeredMs), r.toolName, r.rule, r.answer, r.scope].forEach((v) => tr.appendChild(el("td", v)));
      rows.appendChild(tr);
    });
    document.body.dataset.loaded = String(Date.now());
  } catch (e) {
    showError(e.message);
  }
  try {
    const s = await api("GET", "/v1/gate/status");
    const d = s.decisions || {};
    document.getElementById("ledger").textContent =
      `${s.consents} consents · ${s.optOuts} opt-outs · ${s.openThreads} open threads · ${s.entries} ledger lines · ` +
      `pass ${d.pass || 0} · approve ${d.approve || 0} · block ${d.block || 0}`;
  } catch (e) {
    document.getElementById("ledger").textContent = "not available: " + e.message;
  }
}

function forget() {
  sessionStorage.removeItem(KEY);
  document.getElementById("main").hidden = true;
  document.getElementById("login").hidden = false;
}

function show() {
  if (!token()) { forget(); return; }
  document.getElementById("login").hidden = true;
  document.getElementById("main").hidden = false;
  refresh();
}

function start() {
  // A token in the URL fragment (never sent to the server) is taken once and removed from the address.
  const m = /^#token=([^&]+)$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname);
  }
  document.getElementById("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(KEY, document.getElementById("token").value.trim());
    document.getElementById("token").value = "";
    show();
  });
  document.getElementById("refresh").onclick = refresh;
  document.getElementById("logout").onclick = forget;
  show();
}

start();
