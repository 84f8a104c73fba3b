// playground.js: the page at / — pick a language or a problem, edit with
// syntax highlighting, run with stdin and an expected output or submit to a
// problem, and read the verdict: per-test table, time, memory and the first
// difference side by side. Ctrl-Enter runs; every control has a label.
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, highlightSpecialChars } from "@codemirror/view";
import { EditorState, Compartment } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { syntaxHighlighting, defaultHighlightStyle, bracketMatching, indentOnInput, StreamLanguage, indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";
import { cpp } from "@codemirror/lang-cpp";
import { csharp } from "@codemirror/legacy-modes/mode/clike";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { $, el, api, keyForm, keyFromFragment, fmtMs, fmtKb, ApiError } from "./common.js";
import { streamRun } from "./live.js";
import { Session } from "./session.js";

const STARTERS = {
  python: 'name = input()\nprint(f"hello, {name}")\n',
  node: 'const [name] = require("fs").readFileSync(0, "utf8").split("\\n");\nconsole.log(`hello, ${name}`);\n',
  c: '#include <stdio.h>\n\nint main(void)\n{\n\tchar name[100];\n\tif (scanf("%99s", name) == 1)\n\t\tprintf("hello, %s\\n", name);\n\treturn 0;\n}\n',
  cpp: '#include <iostream>\n#include <string>\n\nint main()\n{\n\tstd::string name;\n\tstd::cin >> name;\n\tstd::cout << "hello, " << name << "\\n";\n}\n',
  csharp: 'var name = System.Console.ReadLine();\nSystem.Console.WriteLine($"hello, {name}");\n',
  bash: 'read name\necho "hello, $name"\n',
};
const STARTER_STDIN = "world", STARTER_EXPECTED = "hello, world";

const STATUS_TEXT = {
  accepted: "Accepted", wrong_answer: "Wrong answer", timeout: "Time limit exceeded",
  memory_limit: "Memory limit exceeded", output_limit: "Output limit exceeded",
  runtime_error: "Runtime error", compile_error: "Compile error",
  internal_error: "Internal error (the judge's fault)", completed: "Completed",
  cancelled: "Cancelled (its API key was revoked)", queued: "Queued…", running: "Running…",
};
const FINAL = (s) => s !== "queued" && s !== "running";

function highlighter(lang) {
  const n = (lang || "").toLowerCase();
  if (n.startsWith("python")) return python();
  if (n === "node" || n.startsWith("javascript") || n === "js") return javascript();
  if (n === "c" || n.startsWith("cpp") || n === "c++") return cpp();
  if (n.startsWith("csharp") || n === "c#") return StreamLanguage.define(csharp);
  if (n === "bash" || n === "sh") return StreamLanguage.define(shell);
  return [];
}

// ---- state ----
const state = {
  mode: "program", // program | problem | session
  languages: [],
  problem: null, // the loaded problem
  busy: false,
  abort: null,
  starter: "", // the starter text now in the editor, to replace it unasked
  session: null,
};

// ---- the editor, in a shadow root: its style sheets are constructed ones,
// which a strict style-src allows (a <style> element would need a nonce) ----
const langConf = new Compartment();
let view;

function makeEditor() {
  const host = $("editor");
  const root = host.attachShadow({ mode: "open" });
  root.append(el("link", { rel: "stylesheet", href: "/app.css" }));
  const parent = el("div", { class: "cm-host" });
  root.append(parent);
  // Ctrl-Enter is the page's (run), not the editor's "insert blank line"
  const keys = defaultKeymap.filter((b) => b.key !== "Mod-Enter");
  view = new EditorView({
    root,
    parent,
    state: EditorState.create({
      doc: "",
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(),
        drawSelection(), indentOnInput(), bracketMatching(), highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        indentUnit.of("    "),
        keymap.of([...keys, ...historyKeymap]),
        langConf.of([]),
        EditorView.contentAttributes.of({ "aria-label": "Source code", "aria-describedby": "editor-help" }),
      ],
    }),
  });
}

const source = () => view.state.doc.toString();
function setSource(text) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}

// ---- languages and problems ----
function currentLang() {
  return $("language").value;
}

function onLanguage() {
  const lang = currentLang();
  view.dispatch({ effects: langConf.reconfigure(highlighter(lang)) });
  const starter = STARTERS[lang] || "";
  // replace the code only while it is an untouched starter (or empty)
  if (source() === state.starter || !source().trim()) {
    setSource(starter);
    state.starter = starter;
  }
}

async function loadLanguages() {
  const sel = $("language");
  try {
    const { languages } = await api("GET", "/v1/languages");
    state.languages = languages;
    const keep = sel.value;
    sel.replaceChildren(...languages.map((l) =>
      el("option", { value: l.name, text: l.display_name + (l.version ? " — " + l.version : "") })));
    sel.value = languages.some((l) => l.name === keep) ? keep
      : languages.some((l) => l.name === "python") ? "python" : languages[0]?.name || "";
    onLanguage();
    setNotice("");
    return true;
  } catch (e) {
    keyNotice(e);
    return false;
  }
}

// One list request at a time: setMode and openProblemFromAddress both ask for
// it, and a second reply arriving after the first would reset the chosen problem.
let problemsLoading = null;
function loadProblems() {
  if (!problemsLoading) problemsLoading = fetchProblems().finally(() => { problemsLoading = null; });
  return problemsLoading;
}
async function fetchProblems() {
  const sel = $("problem");
  try {
    const { problems } = await api("GET", "/v1/problems");
    const chosen = sel.value; // kept when the new list still offers it
    sel.replaceChildren(el("option", { value: "", text: "— choose a problem —" }),
      ...problems.map((p) => el("option", { value: p.id, disabled: !p.supported, text: p.name + " (" + p.id + ")" + (p.supported ? "" : " — not supported") })));
    if (problems.some((p) => p.id === chosen && p.supported)) sel.value = chosen;
  } catch (e) {
    keyNotice(e);
  }
}

// /?problem=ID (the Problems page's "Try"): Problem mode with that problem open
async function openProblemFromAddress() {
  const id = new URLSearchParams(location.search).get("problem");
  if (!id) return;
  document.querySelector("input[name=mode][value=problem]").checked = true;
  setMode("problem");
  await loadProblems();
  if (![...$("problem").options].some((o) => o.value === id && !o.disabled)) {
    setNotice("Problem " + id + " cannot be tried with this key (unknown, not ready, or not supported).", true);
    return;
  }
  $("problem").value = id;
  await onProblem();
}

async function onProblem() {
  const id = $("problem").value;
  state.problem = null;
  $("statement").hidden = true;
  if (!id) return updateButtons();
  try {
    const p = await api("GET", "/v1/problems/" + encodeURIComponent(id));
    state.problem = p;
    $("statement-name").textContent = p.name;
    const lim = [p.limits?.time_ms ? "time " + fmtMs(p.limits.time_ms) : null,
      p.limits?.memory_mb ? "memory " + p.limits.memory_mb + " MiB" : null, p.tests + " tests"].filter(Boolean);
    $("statement-limits").textContent = lim.join(" · ");
    $("statement-text").textContent = p.statement || "(no statement)";
    $("statement").hidden = false;
    const s = p.samples && p.samples[0];
    if (s) {
      $("stdin").value = s.input || "";
      $("expected").value = s.output || "";
    }
  } catch (e) {
    setNotice(e.message, true);
  }
  updateButtons();
}

// ---- mode and buttons ----
function setMode(mode) {
  state.mode = mode;
  $("problem-field").hidden = mode !== "problem";
  $("statement").hidden = mode !== "problem" || !state.problem;
  $("session-panel").hidden = mode !== "session";
  $("io").hidden = mode === "session";
  $("run-buttons").hidden = mode === "session";
  if (mode === "session") $("result").hidden = true; // a program's result; cells show their own
  if (mode === "problem" && $("problem").options.length <= 1) loadProblems();
  if (mode === "session") state.session.show();
  // an open session holds its language; the other modes may change it
  $("language").disabled = mode === "session" && !!state.session.id;
  updateButtons();
}

function updateButtons() {
  const busy = state.busy;
  $("run").disabled = busy;
  $("run-expected").disabled = busy;
  $("submit").hidden = state.mode !== "problem";
  $("submit").disabled = busy || !state.problem;
  $("cancel").hidden = !busy;
}

function setNotice(text, error) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = !text;
  n.classList.toggle("error", !!error);
}

function keyNotice(e) {
  if (e instanceof ApiError && e.status === 401) {
    setNotice("This judge needs an API key: paste the key that `judge up` printed (jk_…) into the key field above.", true);
    $("key-input").focus();
  } else {
    setNotice(e.message, true);
  }
}

// ---- running ----
function request(withExpected) {
  const body = { language: currentLang(), source: source(), stdin: $("stdin").value };
  if (withExpected) body.expected_output = $("expected").value;
  return body;
}

async function waitFinal(id, signal, onStatus) {
  for (;;) {
    const sub = await api("GET", "/v1/submissions/" + id + "?wait=30", undefined, signal);
    onStatus(sub.status);
    if (FINAL(sub.status)) return Object.assign({ id: sub.id }, sub.result || { status: sub.status });
  }
}

async function go(kind) {
  if (state.busy) return;
  if (kind === "submit" && !state.problem) {
    setNotice("Choose a problem first.", true);
    $("problem").focus();
    return;
  }
  state.busy = true;
  state.abort = new AbortController();
  const signal = state.abort.signal;
  updateButtons();
  setNotice("");
  const expected = kind === "expected" ? $("expected").value : null;
  showRunning(kind === "submit" ? "queued" : "running");
  const live = $("live");
  live.textContent = "";
  $("live-box").hidden = true;
  $("live-tests").replaceChildren();
  $("live-tests").hidden = true;
  try {
    // output and test verdicts arrive live when the judge streams them (SSE)
    const onEvent = (ev, data) => {
      if (ev === "test") return liveTest(data);
      $("live-box").hidden = false;
      live.append(el("span", { class: ev, text: data }));
    };
    let res;
    if (kind === "submit") {
      const body = { language: currentLang(), source: source(), problem: state.problem.id };
      res = await streamRun("/v1/submissions", body, signal, onEvent);
    } else {
      const path = kind === "expected" ? "/v1/execute_with_expected" : "/v1/execute";
      res = await streamRun(path, request(kind === "expected"), signal, onEvent);
    }
    if (res.httpStatus === 202 || !FINAL(res.status)) res = await waitFinal(res.id, signal, showRunning);
    renderResult(res, { expected });
  } catch (e) {
    if (e.name === "AbortError") {
      showRunning(null);
      setNotice("Stopped waiting (the run goes on in the judge).");
    } else {
      showRunning(null);
      keyNotice(e);
    }
  } finally {
    state.busy = false;
    state.abort = null;
    updateButtons();
  }
}

// A test's verdict while the others still run (problem submissions).
function liveTest(t) {
  if (!t || typeof t !== "object") return;
  const box = $("live-tests");
  box.hidden = false;
  box.append(el("li", { class: t.status === "accepted" ? "ok" : "ko" },
    "Test " + t.name + ": " + (STATUS_TEXT[t.status] || t.status) + (t.time_ms != null ? " (" + fmtMs(t.time_ms) + ")" : "")));
}

// the default action of Ctrl-Enter in each mode
function runDefault() {
  if (state.mode === "session") return state.session.runCell();
  if (state.mode === "problem" && state.problem) return go("submit");
  return go($("expected").value.trim() ? "expected" : "run");
}

// ---- the verdict ----
function showRunning(status) {
  const box = $("result");
  box.hidden = false;
  const badge = $("verdict");
  if (!status) {
    badge.textContent = "";
    badge.className = "verdict";
    return;
  }
  badge.textContent = STATUS_TEXT[status] || status;
  badge.className = "verdict pending";
  $("result-body").replaceChildren();
}

function outputBlock(title, text, cls) {
  if (!text) return null;
  return el("section", { class: "output " + (cls || "") },
    el("h3", { text: title }), el("pre", { tabindex: "0", "aria-label": title, text }));
}

function renderResult(res, ctx) {
  $("result").hidden = false;
  // the final result repeats what arrived live
  $("live-box").hidden = true;
  $("live-tests").hidden = true;
  const badge = $("verdict");
  badge.textContent = STATUS_TEXT[res.status] || res.status;
  badge.className = "verdict " + (res.status === "accepted" || res.status === "completed" ? "good" : "bad");
  badge.dataset.status = res.status;
  const facts = el("dl", { class: "facts" },
    el("dt", { text: "Time" }), el("dd", { id: "fact-time", text: fmtMs(res.time_ms) }),
    el("dt", { text: "Wall" }), el("dd", { text: fmtMs(res.wall_ms) }),
    el("dt", { text: "Memory" }), el("dd", { id: "fact-memory", text: fmtKb(res.memory_kb) }),
    res.exit_code != null ? [el("dt", { text: "Exit code" }), el("dd", { text: String(res.exit_code) })] : null,
    res.signal ? [el("dt", { text: "Signal" }), el("dd", { text: String(res.signal) })] : null,
    res.id != null ? [el("dt", { text: "Submission" }), el("dd", { text: "#" + res.id })] : null);
  const parts = [facts];
  if (res.message) parts.push(el("p", { class: "message", text: res.message }));
  if (res.compile && res.compile.output) parts.push(outputBlock("Compiler output", res.compile.output, "compile"));
  const fb = res.feedback || (res.tests || []).map((t) => t.feedback).find((f) => f && f.line);
  if (fb && fb.line) parts.push(diffView(fb, ctx.expected, ctx.expected != null ? res.stdout : null));
  if (res.tests && res.tests.length) parts.push(testsTable(res));
  parts.push(outputBlock("Standard output", res.stdout, "stdout"));
  if (res.stdout_truncated) parts.push(el("p", { class: "message", text: "(standard output was cut at its limit)" }));
  parts.push(outputBlock("Standard error", res.stderr, "stderr"));
  $("result-body").replaceChildren(...parts.filter(Boolean));
}

// The first difference side by side: the lines around it from the expected
// output and the program's, the differing line marked from its column on.
function diffView(fb, expected, got) {
  const table = el("table", { class: "diff", id: "diff" },
    el("caption", { text: "First difference: " + (fb.message || "line " + fb.line + ", column " + fb.column) }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Line" }), el("th", { scope: "col", text: "Expected" }), el("th", { scope: "col", text: "Program's output" }))));
  const body = el("tbody");
  const mark = (text, col, isLine) => {
    if (!isLine || text == null) return text == null ? el("span", { class: "missing", text: "(no line)" }) : text;
    const at = Math.max(0, Math.min(text.length, (col || 1) - 1));
    return [text.slice(0, at), el("mark", { text: text.slice(at) || "⏎" })];
  };
  if (expected != null && got != null) {
    // a final newline ends the last line; it does not start another
    const lines = (t) => t.replace(/\r?\n$/, "").split(/\r?\n/);
    const e = lines(expected), g = lines(got);
    const from = Math.max(1, fb.line - 2), to = Math.min(Math.max(e.length, g.length), fb.line + 2);
    for (let n = from; n <= to; n++) {
      const isLine = n === fb.line;
      body.append(el("tr", { class: isLine ? "diff-line" : null },
        el("th", { scope: "row", text: String(n) }),
        el("td", { class: "expected" }, mark(e[n - 1], fb.column, isLine)),
        el("td", { class: "got" }, mark(g[n - 1], fb.column, isLine))));
    }
  } else {
    body.append(el("tr", { class: "diff-line" }, el("th", { scope: "row", text: String(fb.line) }),
      el("td", { class: "expected", text: fb.expected ?? "" }), el("td", { class: "got", text: fb.got ?? "" })));
  }
  table.append(body);
  return table;
}

function testsTable(res) {
  const rows = res.tests.map((t) => el("tr", { class: t.status === "accepted" ? "ok" : "ko" },
    el("th", { scope: "row", text: t.name }),
    el("td", { class: "status", text: STATUS_TEXT[t.status] || t.status }),
    el("td", { text: fmtMs(t.time_ms) }), el("td", { text: fmtKb(t.memory_kb) }),
    el("td", { text: t.feedback?.message || "" })));
  const total = res.tests_total && res.tests_total > res.tests.length ? " (" + res.tests.length + " of " + res.tests_total + " run)" : "";
  return el("table", { class: "tests", id: "tests" },
    el("caption", { text: "Tests" + total }),
    el("thead", {}, el("tr", {}, ...["Test", "Verdict", "Time", "Memory", "Details"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows));
}

// ---- start ----
function main() {
  keyFromFragment();
  makeEditor();
  state.session = new Session({ view, setNotice, keyNotice, currentLang });
  keyForm(() => { loadLanguages(); if (state.mode === "problem") loadProblems(); });
  for (const r of document.querySelectorAll("input[name=mode]")) r.addEventListener("change", () => setMode(r.value));
  $("language").addEventListener("change", onLanguage);
  $("problem").addEventListener("change", onProblem);
  $("run").addEventListener("click", () => go("run"));
  $("run-expected").addEventListener("click", () => go("expected"));
  $("submit").addEventListener("click", () => go("submit"));
  $("cancel").addEventListener("click", () => state.abort && state.abort.abort());
  document.addEventListener("keydown", (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") {
      ev.preventDefault();
      runDefault();
    }
  });
  $("stdin").value = STARTER_STDIN;
  $("expected").value = STARTER_EXPECTED;
  setMode(document.querySelector("input[name=mode]:checked").value);
  loadLanguages();
  openProblemFromAddress();
  document.body.dataset.ready = "1";
}

main();
