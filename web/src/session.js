// session.js: the playground's session mode: one sandbox that keeps its state
// between cells (variables, imports, files), package installs and the
// session's files with downloads. Shown only when this judge serves
// /v1/sessions (its /openapi.json says so).
import { $, el, api, authHeaders, fmtMs, fmtKb, ApiError } from "./common.js";

export async function sessionsServed() {
  try {
    const res = await fetch("/openapi.json", { cache: "no-store", credentials: "omit" });
    const doc = await res.json();
    return Object.keys(doc.paths || {}).some((p) => p.startsWith("/v1/sessions"));
  } catch {
    return false;
  }
}

const MANAGERS = { python: "pip", node: "npm" };

export class Session {
  constructor(page) {
    this.page = page; // {view, setNotice, keyNotice, currentLang}
    this.id = null;
    this.busy = false;
    this.built = false;
    sessionsServed().then((on) => {
      $("mode-session-label").hidden = !on;
    });
  }

  // Builds the panel once: start/close, cells, install, files.
  build() {
    if (this.built) return;
    this.built = true;
    const b = (id, text, onclick, extra) => el("button", Object.assign({ type: "button", id, onclick }, extra || {}), text);
    $("session-body").replaceChildren(
      el("div", { class: "row" },
        b("session-start", "Start session", () => this.start(), { class: "primary" }),
        b("session-run", "Run cell", () => this.runCell(), { class: "primary", disabled: true, title: "Runs the editor's code in the session (Ctrl-Enter)" }),
        b("session-close", "Close session", () => this.close(), { disabled: true }),
        el("span", { id: "session-state", role: "status", text: "No session yet: Start session uses the language chosen above." })),
      el("h3", { text: "Cells" }),
      el("ol", { id: "cells", class: "cells", "aria-label": "Cells run so far", "aria-live": "polite" }),
      el("form", { id: "install-form", class: "row", "aria-label": "Install packages" },
        el("div", { class: "field" }, el("label", { for: "install-manager", text: "Package manager" }),
          el("select", { id: "install-manager" }, el("option", { value: "pip", text: "pip" }), el("option", { value: "npm", text: "npm" }))),
        el("div", { class: "field" }, el("label", { for: "install-packages", text: "Packages (separated by spaces)" }),
          el("input", { id: "install-packages", size: "30", spellcheck: "false" })),
        el("button", { type: "submit", id: "install-run", disabled: true }, "Install")),
      el("p", { id: "install-result", role: "status" }),
      el("div", { class: "row" }, el("h3", { text: "Files" }),
        b("files-refresh", "Refresh files", () => this.files(), { disabled: true })),
      el("table", { id: "files", class: "files" },
        el("thead", {}, el("tr", {}, ...["Name", "Size", "Download"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody")));
    $("install-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.install();
    });
  }

  show() {
    this.build();
    $("install-manager").value = MANAGERS[this.page.currentLang()] || "pip";
  }

  setOpen(open) {
    $("session-start").disabled = open;
    $("session-run").disabled = !open;
    $("session-close").disabled = !open;
    $("install-run").disabled = !open;
    $("files-refresh").disabled = !open;
    $("language").disabled = open; // a session has one language
  }

  state(text) {
    $("session-state").textContent = text;
  }

  async call(method, path, body) {
    try {
      return await api(method, "/v1/sessions/" + this.id + path, body);
    } catch (e) {
      // the session ended under us (idle, lifetime, a lost worker)
      if (e instanceof ApiError && (e.status === 404 || e.status === 410)) {
        this.id = null;
        this.setOpen(false);
        this.state("The session ended: " + e.message);
      }
      throw e;
    }
  }

  async start() {
    this.build();
    this.page.setNotice("");
    this.state("Starting…");
    $("session-start").disabled = true;
    try {
      const s = await api("POST", "/v1/sessions", { language: this.page.currentLang() });
      this.id = s.id;
      $("cells").replaceChildren();
      this.setOpen(true);
      this.state("Session " + s.id.slice(0, 8) + " (" + s.language + ") is " + s.status + ".");
      this.files();
    } catch (e) {
      $("session-start").disabled = false;
      this.state("No session.");
      this.page.keyNotice(e);
    }
  }

  async runCell() {
    if (!this.id) {
      this.page.setNotice("Start a session first.", true);
      return;
    }
    if (this.busy) return;
    this.busy = true;
    $("session-run").disabled = true;
    const code = this.page.view.state.doc.toString();
    const cell = el("li", { class: "cell" }, el("pre", { class: "code", "aria-label": "Cell code", text: code }),
      el("p", { class: "verdict pending", text: "Running…" }));
    $("cells").append(cell);
    try {
      const r = await this.call("POST", "/execute", { code });
      const out = [el("p", { class: "cell-status verdict " + (r.status === "ok" ? "good" : "bad"),
        text: "[" + r.execution_count + "] " + r.status + " · " + fmtMs(r.time_ms) + " · " + fmtKb(r.memory_kb) })];
      if (r.stdout) out.push(el("pre", { class: "stdout", tabindex: "0", "aria-label": "Cell output", text: r.stdout }));
      if (r.stderr) out.push(el("pre", { class: "stderr", tabindex: "0", "aria-label": "Cell errors", text: r.stderr }));
      if (r.result != null) out.push(el("pre", { class: "value", tabindex: "0", "aria-label": "Cell value", text: r.result }));
      if (r.error) {
        const er = r.error;
        const head = (er.name ? er.name + ": " : "") + (er.value ?? er.message ?? "");
        const tb = er.traceback ? [].concat(er.traceback).join("\n") : "";
        // a traceback usually ends with the error's own line already
        const text = tb.trimEnd().endsWith(head.trimEnd()) ? tb.trimEnd() : (tb ? tb.trimEnd() + "\n" : "") + head;
        out.push(el("pre", { class: "stderr cell-error", tabindex: "0", "aria-label": "Cell error", text }));
      }
      if (r.message) out.push(el("p", { class: "message", text: r.message }));
      cell.lastChild.replaceWith(...out);
      this.files();
    } catch (e) {
      cell.lastChild.replaceWith(el("p", { class: "message", text: e.message }));
    } finally {
      this.busy = false;
      if (this.id) $("session-run").disabled = false;
    }
  }

  async install() {
    const packages = $("install-packages").value.split(/\s+/).filter(Boolean);
    if (!packages.length) {
      $("install-result").textContent = "Name at least one package.";
      return;
    }
    $("install-run").disabled = true;
    $("install-result").textContent = "Installing " + packages.join(", ") + "…";
    try {
      const r = await this.call("POST", "/install", { manager: $("install-manager").value, packages });
      $("install-result").textContent = "Install " + r.status + (r.time_ms != null ? " in " + fmtMs(r.time_ms) : "") + (r.message ? ": " + r.message : "");
    } catch (e) {
      $("install-result").textContent = "Install failed: " + e.message;
    } finally {
      if (this.id) $("install-run").disabled = false;
    }
  }

  async files() {
    if (!this.id) return;
    try {
      const r = await this.call("GET", "/files");
      const rows = (r.files || []).filter((f) => f.type !== "dir").map((f) => el("tr", {},
        el("th", { scope: "row", text: f.name }), el("td", { text: String(f.size) }),
        el("td", {}, el("button", { type: "button", "aria-label": "Download " + f.name, onclick: () => this.download(f.name) }, "Download"))));
      $("files").tBodies[0].replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: "3", text: "No files yet." }))]));
    } catch (e) {
      $("files").tBodies[0].replaceChildren(el("tr", {}, el("td", { colspan: "3", text: e.message })));
    }
  }

  // The file through fetch (the key is a header, so a plain link cannot carry
  // it), then saved from a blob: URL.
  async download(name) {
    try {
      const res = await fetch("/v1/sessions/" + this.id + "/files/" + name.split("/").map(encodeURIComponent).join("/"),
        { headers: authHeaders(), cache: "no-store", credentials: "omit" });
      if (!res.ok) throw new Error("download failed: HTTP " + res.status);
      // as bytes, whatever the file's type: a blob: URL has this page's
      // origin, so an HTML or SVG file opened from it would run as the page
      const url = URL.createObjectURL(new Blob([await res.arrayBuffer()], { type: "application/octet-stream" }));
      const a = el("a", { href: url, download: name.split("/").pop(), hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (e) {
      this.page.setNotice(e.message, true);
    }
  }

  async close() {
    if (!this.id) return;
    try {
      await this.call("DELETE", "");
    } catch {
      // ended already
    }
    this.id = null;
    this.setOpen(false);
    this.state("Session closed.");
  }
}
