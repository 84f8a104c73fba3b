// problems.js: the page at /problems — the problems this key may see, with
// their versions; upload a zipped package (the judge checks it and grades its
// example submissions on a worker: the page polls until the verification
// ends and shows its report), publish or retire one of the key's own, and try
// one in the playground (/?problem=ID).
import { $, el, api, keyForm, keyFromFragment, fmtMs, ApiError } from "./common.js";

const STATE_TEXT = { ready: "Ready", verifying: "Verifying…", refused: "Refused", failed: "Cannot be graded" };
const STATE_CLASS = { ready: "good", verifying: "pending", refused: "bad", failed: "bad" };
const ID_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
let busy = false;

function setNotice(text, error) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = !text;
  n.classList.toggle("error", !!error);
}

function showError(e) {
  if (e instanceof ApiError && e.status === 401)
    setNotice("This judge needs an API key: paste the key that `judge up` printed (jk_…) into the key field above.", true);
  else setNotice(e.message || String(e), true);
}

// ---- the list ----
async function loadList() {
  try {
    const { problems } = await api("GET", "/v1/problems");
    const rows = problems.map((p) => {
      const last = (p.versions || [])[p.versions.length - 1] || {};
      const actions = [
        el("button", { type: "button", text: "Report", "aria-label": "Report of " + p.id, onclick: () => showProblem(p.id) }),
      ];
      if (p.supported) actions.push(el("a", { href: "/?problem=" + encodeURIComponent(p.id), text: "Try", "aria-label": "Try " + p.id + " in the playground" }));
      if (p.mine) {
        const pub = p.visibility === "public";
        actions.push(el("button", { type: "button", text: pub ? "Make private" : "Publish", "aria-label": (pub ? "Make private " : "Publish ") + p.id,
          onclick: () => change(p.id, "PATCH", { visibility: pub ? "private" : "public" }) }));
        actions.push(el("button", { type: "button", text: "Retire", "aria-label": "Retire " + p.id,
          onclick: () => { if (confirm("Retire " + p.id + "? New submissions will be refused; old ones keep their results.")) change(p.id, "DELETE"); } }));
      }
      return el("tr", { "data-id": p.id },
        el("th", { scope: "row" }, el("span", { text: p.name }), el("br"), el("code", { text: p.id })),
        el("td", { text: p.version == null ? "–" : String(p.version) }),
        el("td", { class: "state " + (STATE_CLASS[last.status] || ""), text: STATE_TEXT[last.status] || last.status || "–" }),
        el("td", { text: p.visibility === "public" ? "every key" : "this key" + (p.mine ? "" : " (its owner)") }),
        el("td", { text: p.mine ? "yes" : "no" }),
        el("td", { class: "actions" }, ...actions));
    });
    $("list").replaceChildren(el("table", { id: "problems" },
      el("caption", { text: problems.length + " problem" + (problems.length === 1 ? "" : "s") + " this key may see" }),
      el("thead", {}, el("tr", {}, ...["Problem", "Current version", "Newest version", "Visible to", "Yours", "Actions"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, rows)));
    setNotice("");
  } catch (e) {
    showError(e);
  }
}

async function change(id, method, body) {
  try {
    await api(method, "/v1/problems/" + encodeURIComponent(id), body);
    await loadList();
  } catch (e) {
    showError(e);
  }
}

// ---- the report ----
function showReport(p) {
  const rep = p.verification?.report;
  const st = $("report-state");
  st.textContent = STATE_TEXT[p.status] || p.status;
  st.className = "verdict " + (STATE_CLASS[p.status] || "");
  st.dataset.status = p.status;
  const facts = el("dl", { class: "facts" },
    el("dt", { text: "Problem" }), el("dd", { text: p.name + " (" + p.id + ")" }),
    el("dt", { text: "Version" }), el("dd", { text: String(p.version) + (p.current_version === p.version ? " (current)" : "") }),
    el("dt", { text: "Format" }), el("dd", { text: p.format_version || "–" }),
    el("dt", { text: "Tests" }), el("dd", { text: String(p.tests ?? "–") }),
    el("dt", { text: "Time limit" }), el("dd", { text: p.limits?.time_ms ? fmtMs(p.limits.time_ms) : "–" }));
  const kids = [facts];
  if (!rep) {
    kids.push(el("p", { class: "help", text: p.status === "verifying" ? "A worker grades the package's submissions…" : p.source === "dir" ? "Loaded from the server's problems_dir: not verified here." : "No report." }));
  } else {
    if (rep.error) kids.push(el("p", { class: "message", text: rep.error }));
    if (rep.message) kids.push(el("p", { class: "message", text: rep.message }));
    kids.push(el("p", { text: (rep.passed ?? 0) + " as expected, " + (rep.failed ?? 0) + " not, " + (rep.skipped ?? 0) + " skipped" }));
    for (const n of rep.notes || []) kids.push(el("p", { class: "help", text: n }));
    const rows = (rep.submissions || []).map((s) => el("tr", { class: s.outcome === "ok" ? "ok" : s.outcome === "fail" ? "ko" : "" },
      el("th", { scope: "row", text: s.path }),
      el("td", { text: s.language || "–" }),
      el("td", { text: s.expected }),
      el("td", { class: "status", text: s.outcome === "ok" ? "as expected" : s.outcome === "fail" ? "NOT as expected" : "skipped" }),
      el("td", { text: s.status || "–" }),
      el("td", { text: s.time_ms == null ? "–" : fmtMs(s.time_ms) }),
      el("td", { text: s.message || "" })));
    kids.push(el("table", { class: "tests", id: "report-table" },
      el("caption", { text: "Example submissions" }),
      el("thead", {}, el("tr", {}, ...["Submission", "Language", "Folder", "Outcome", "Verdict", "Time", "Details"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, rows)));
  }
  if (p.status === "ready" && p.current_version === p.version && p.supported)
    kids.push(el("p", {}, el("a", { href: "/?problem=" + encodeURIComponent(p.id), id: "try", text: "Try " + p.id + " in the playground" })));
  $("report-body").replaceChildren(...kids);
  $("report").hidden = false;
}

async function showProblem(id) {
  try {
    showReport(await api("GET", "/v1/problems/" + encodeURIComponent(id)));
  } catch (e) {
    showError(e);
  }
}

// Polls version v of id until its verification ends.
async function follow(id, v) {
  for (;;) {
    const p = await api("GET", "/v1/problems/" + encodeURIComponent(id) + "?version=" + v);
    showReport(p);
    if (p.status !== "verifying") return p;
    await new Promise((r) => setTimeout(r, 1500));
  }
}

// ---- upload ----
function idFromFile(name) {
  const base = name.replace(/\.zip$/i, "").toLowerCase();
  return ID_RE.test(base) ? base : "";
}

async function upload() {
  if (busy) return;
  const file = $("up-file").files[0];
  const id = $("up-id").value.trim() || (file ? idFromFile(file.name) : "");
  if (!file) return setNotice("Choose the package's zip first.", true);
  if (!ID_RE.test(id)) return setNotice("Give the problem an id: lower-case letters, digits, - and _.", true);
  const replace = $("up-replace").checked;
  const q = new URLSearchParams({ wait: "0", visibility: $("up-visibility").value });
  if (!replace) q.set("id", id);
  if ($("up-keep").checked) q.set("keep", "true");
  const path = (replace ? "/v1/problems/" + encodeURIComponent(id) : "/v1/problems") + "?" + q;
  busy = true;
  $("up-go").disabled = true;
  setNotice("");
  try {
    const zip = new Blob([file], { type: "application/zip" });
    let p;
    try {
      p = await api(replace ? "PUT" : "POST", path, zip);
    } catch (e) {
      // refused or failed: the answer carries the problem with its report
      if (e instanceof ApiError && e.data && e.data.problem) {
        showReport(e.data.problem);
        setNotice(e.message, true);
        return;
      }
      throw e;
    }
    showReport(p);
    p = await follow(id, p.version);
    if (p.status === "refused") setNotice("Version " + p.version + " was refused: some example submissions did not get their folders' verdicts (check \u201ckeep\u201d to store it anyway).", true);
    else if (p.status === "failed") setNotice("Version " + p.version + " cannot be graded.", true);
    await loadList();
  } catch (e) {
    showError(e);
  } finally {
    busy = false;
    $("up-go").disabled = false;
  }
}

function main() {
  keyFromFragment();
  keyForm(loadList);
  $("up-go").addEventListener("click", upload);
  $("refresh").addEventListener("click", loadList);
  $("up-file").addEventListener("change", () => {
    const f = $("up-file").files[0];
    if (f && !$("up-id").value) $("up-id").placeholder = idFromFile(f.name) || "an id";
  });
  loadList();
  document.body.dataset.ready = "1";
}

main();
