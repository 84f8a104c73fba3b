// dashboard.js: the operator's page at /dashboard: queue, throughput and
// latency over time, workers and slots, the queue of each API key, recent
// failures, open sessions, the sessions' network attempts and the API keys (create, revoke). Needs an
// admin key (or auth = off on loopback).
import { $, el, api, keyForm, keyFromFragment, fmtMs, fmtKb, ApiError } from "./common.js";

const SVG = "http://www.w3.org/2000/svg";
let timer = null;
let egressSession = ""; // the session whose network attempts are shown; "" for every session's last

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

function notice(text, error) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = !text;
  n.classList.toggle("error", !!error);
}

const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : "–");
const set = (id, v) => { $(id).textContent = String(v); };

// Bars per minute of the last hour; series: [{t_ms, ...}], bars: [[field, class]].
function chart(id, series, nowMs, bars, unit) {
  const box = $(id), W = 600, H = 140, top = 14, bottom = 14;
  const start = Math.floor(nowMs / 60000) * 60000 - 59 * 60000;
  const max = Math.max(1, ...series.flatMap((m) => bars.map(([f]) => m[f] || 0)));
  const kids = [svg("text", { x: 2, y: 10 }, "max " + (unit === "ms" ? fmtMs(max) : max))];
  const bw = W / 60;
  for (const m of series) {
    const i = Math.round((m.t_ms - start) / 60000);
    if (i < 0 || i > 59) continue;
    for (const [f, cls] of bars) {
      const v = m[f] || 0, h = ((H - top - bottom) * v) / max;
      kids.push(svg("rect", { class: cls, x: i * bw + 1, y: H - bottom - h, width: bw - 2, height: h },));
      kids[kids.length - 1].append(svg("title", {}, new Date(m.t_ms).toLocaleTimeString() + ": " + f + " " + (unit === "ms" ? fmtMs(v) : v)));
    }
  }
  kids.push(svg("text", { x: 2, y: H - 2 }, "-60 min"), svg("text", { x: W - 30, y: H - 2 }, "now"));
  box.replaceChildren(...kids);
}

// bytes as fmtKb shows them (a started KiB counts)
const fmtBytes = (n) => fmtKb(n == null ? null : Math.ceil(n / 1024));

function render(s) {
  set("m-queue", s.queue_depth);
  set("m-running", s.running);
  set("m-throughput", s.finished_last_minute);
  set("m-finished", s.finished_total);
  const last = s.series.length ? s.series[s.series.length - 1] : null;
  const fresh = last && s.now_ms - last.t_ms < 60000;
  set("m-latency", fresh ? fmtMs(last.latency_p50_ms) + " / " + fmtMs(last.latency_p95_ms) : "–");
  const alive = s.workers.filter((w) => w.alive);
  set("m-workers", alive.length);
  set("m-slots", alive.reduce((a, w) => a + w.busy, 0) + " / " + alive.reduce((a, w) => a + w.slots, 0));
  set("m-failures", s.series.reduce((a, m) => a + m.failed, 0));
  set("m-sessions", s.sessions == null ? "n/a" : s.sessions.open);
  set("m-paused", s.sessions == null ? "n/a" : s.sessions.paused ?? 0);
  set("m-images", s.sessions == null ? "n/a" : fmtBytes(s.sessions.images_stored));
  chart("c-throughput", s.series, s.now_ms, [["finished", "bar"], ["failed", "bar fail"]], "n");
  chart("c-latency", s.series, s.now_ms, [["latency_p95_ms", "p95"], ["latency_p50_ms", "bar"]], "ms");
  $("workers").tBodies[0].replaceChildren(...(s.workers.length ? s.workers.map((w) => el("tr", { class: w.alive ? null : "dead" },
    el("th", { scope: "row", text: w.name }), el("td", { text: w.backend }), el("td", { text: String(w.slots) }),
    el("td", { text: String(w.busy) }), el("td", { text: when(w.started_ms) }),
    el("td", { text: when(w.seen_ms) + (w.alive ? "" : " (not heard from: stopped or died)") })))
    : [el("tr", {}, el("td", { colspan: "6", text: "No worker has reported. Start one: judge worker (judge up starts one)." }))]));
  const keys = s.keys || [];
  $("queue-keys").tBodies[0].replaceChildren(...(keys.length ? keys.map((k) => el("tr", {},
    el("th", { scope: "row", text: k.id ? String(k.id) : "–" }), el("td", { text: k.id ? k.name : "(no key)" }),
    el("td", { text: String(k.weight) }), el("td", { text: String(k.queued) }), el("td", { text: String(k.running) }),
    el("td", { text: k.queued ? fmtMs(k.oldest_ms) : "–" }), el("td", { text: String(k.claimed) }),
    el("td", { text: k.claimed ? fmtMs(k.wait_p50_ms) : "–" }), el("td", { text: k.claimed ? fmtMs(k.wait_p99_ms) : "–" }),
    el("td", { text: k.claimed ? fmtMs(k.wait_max_ms) : "–" })))
    : [el("tr", {}, el("td", { colspan: "10", text: "Nothing queued or claimed in the last 5 minutes." }))]));
  $("failures").tBodies[0].replaceChildren(...(s.failures.length ? s.failures.map((f) => el("tr", {},
    el("th", { scope: "row", text: "#" + f.id }), el("td", { text: when(f.finished_ms) }), el("td", { text: f.language || "" }),
    el("td", { text: String(f.attempts) }), el("td", { text: f.worker || "" }), el("td", { text: f.message })))
    : [el("tr", {}, el("td", { colspan: "6", text: "No internal errors." }))]));
  const eg = s.egress || [];
  $("egress").tBodies[0].replaceChildren(...(eg.length ? eg.map((g) => el("tr", { class: g.decision },
    el("th", { scope: "row", text: g.session_id }), el("td", { text: when(g.at_ms) }), el("td", { text: g.host }),
    el("td", { text: String(g.port) }), el("td", { text: g.decision }), el("td", { text: g.reason }),
    el("td", { text: g.bytes_out + " / " + g.bytes_in })))
    : [el("tr", {}, el("td", { colspan: "7", text: egressSession ? "No network attempt in this session." : "No session has tried to reach the network." }))]));
  set("updated", "updated " + new Date(s.now_ms).toLocaleTimeString());
}

function renderKeys({ keys, own_id }) {
  $("keys").tBodies[0].replaceChildren(...keys.map((k) => el("tr", { class: k.revoked_ms ? "revoked" : null, "data-id": k.id },
    el("th", { scope: "row", text: String(k.id) }), el("td", { text: k.name }), el("td", { text: k.admin ? "yes" : "no" }), el("td", { text: String(k.weight ?? 1) }),
    el("td", { text: k.egress ? k.egress.mode + (k.egress.allow && k.egress.allow.length ? ": " + k.egress.allow.join(", ") : "") : "judge.ini's" }),
    el("td", { text: String(k.paused_sessions ?? 0) }), el("td", { text: fmtBytes(k.images_stored) }),
    el("td", { text: new Date(k.created_ms).toLocaleString() }), el("td", { text: k.revoked_ms ? new Date(k.revoked_ms).toLocaleString() : "–" }),
    el("td", {}, k.revoked_ms ? null : el("button", {
      type: "button", "aria-label": "Revoke key " + k.id + " (" + k.name + ")",
      onclick: () => revoke(k, k.id === own_id),
    }, "Revoke")))));
}

function failed(e) {
  if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
    notice(e.status === 401 ? "The dashboard needs an admin API key: paste it above (judge keys create --admin, or the key judge up printed)."
      : "This key is not an admin key: create one with  judge keys create --name NAME --admin", true);
    $("key-input").focus();
    return true;
  }
  notice(e.message, true);
  return false;
}

async function refresh() {
  try {
    const [s, k] = await Promise.all([api("GET", "/v1/admin/stats" + (egressSession ? "?egress_session=" + encodeURIComponent(egressSession) : "")), api("GET", "/v1/admin/keys")]);
    render(s);
    renderKeys(k);
    notice("");
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  } catch (e) {
    failed(e);
  }
}

async function revoke(k, own) {
  if (!confirm((own ? "This is the key this page uses. " : "") + "Revoke key " + k.id + " (" + k.name + ")? "
    + "Its queued submissions are cancelled and its sessions closed.")) return;
  try {
    const r = await api("DELETE", "/v1/admin/keys/" + k.id);
    notice("Key " + k.id + " revoked: " + (r.cancelled ?? 0) + " queued submission(s) cancelled, "
      + (r.sessions_closed ?? 0) + " session(s) closed.");
    refresh();
  } catch (e) {
    failed(e);
  }
}

function schedule() {
  clearInterval(timer);
  timer = $("auto").checked ? setInterval(refresh, 2000) : null;
}

function main() {
  keyFromFragment();
  keyForm(refresh);
  $("refresh").addEventListener("click", refresh);
  $("auto").addEventListener("change", schedule);
  $("egress-filter").addEventListener("submit", (ev) => {
    ev.preventDefault();
    egressSession = $("egress-session").value.trim();
    refresh();
  });
  $("key-create").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const k = await api("POST", "/v1/admin/keys", { name: $("new-key-name").value, admin: $("new-key-admin").checked });
      $("new-key-value").textContent = k.key;
      $("new-key").hidden = false;
      $("new-key-name").value = "";
      refresh();
    } catch (e) {
      failed(e);
    }
  });
  refresh();
  schedule();
}

main();
