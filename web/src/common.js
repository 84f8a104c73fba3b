// common.js: what the playground and the dashboard share: the API key (kept in
// sessionStorage, sent as a Bearer header: no cookies, so no CSRF), fetch
// helpers and a tiny DOM builder. No inline scripts or styles anywhere (CSP).

const KEY_ITEM = "judge.key";

export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v == null) continue;
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k != null) e.append(k);
  return e;
}

export const $ = (id) => document.getElementById(id);

export function getKey() {
  return sessionStorage.getItem(KEY_ITEM) || "";
}

export function setKey(k) {
  if (k) sessionStorage.setItem(KEY_ITEM, k.trim());
  else sessionStorage.removeItem(KEY_ITEM);
}

// `judge up` prints the page's address with #key=...: the fragment never
// reaches the server; keep the key for this tab and drop it from the address.
export function keyFromFragment() {
  const m = /^#key=(jk_[0-9a-f]{40})$/.exec(location.hash);
  if (m) {
    setKey(m[1]);
    history.replaceState(null, "", location.pathname + location.search);
  }
}

export class ApiError extends Error {
  constructor(status, code, message, data) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = data; // the whole answer (a refused package carries its problem)
  }
}

function headers(json) {
  const h = { Accept: "application/json" };
  const k = getKey();
  if (k) h.Authorization = "Bearer " + k;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

// api(method, path, body?): the parsed JSON answer with its HTTP status as
// .status; an error answer throws ApiError(status, code, message, data).
// A Blob body (a file) is sent as it is, with its own type.
export async function api(method, path, body, signal) {
  let res;
  const raw = body instanceof Blob;
  const h = headers(body !== undefined && !raw);
  if (raw) h["Content-Type"] = body.type || "application/octet-stream";
  try {
    res = await fetch(path, {
      method,
      headers: h,
      body: body === undefined || raw ? body : JSON.stringify(body),
      signal,
      cache: "no-store",
      credentials: "omit",
    });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "network", "the judge cannot be reached (" + e.message + ")");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(res.status, err.code || "http_" + res.status, err.message || res.statusText, data);
  }
  if (data && typeof data === "object") Object.defineProperty(data, "httpStatus", { value: res.status });
  return data;
}

// Headers for a request made by hand (SSE through fetch).
export function authHeaders(extra) {
  return Object.assign(headers(false), extra || {});
}

// Wires the key form of a page: #key-form with #key-input, #key-state.
// onChange runs after the key was saved or forgotten.
export function keyForm(onChange) {
  const form = $("key-form"), input = $("key-input"), state = $("key-state");
  const show = () => {
    const k = getKey();
    state.textContent = k ? "key set (" + k.slice(0, 7) + "…)" : "no key";
    input.value = "";
    input.placeholder = k ? "replace the key" : "jk_… (printed by judge up)";
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    setKey(input.value);
    show();
    onChange();
  });
  $("key-forget").addEventListener("click", () => {
    setKey("");
    show();
    onChange();
  });
  show();
}

export function fmtMs(ms) {
  if (ms == null) return "–";
  return ms >= 10000 ? (ms / 1000).toFixed(1) + " s" : Math.round(ms) + " ms";
}

export function fmtKb(kb) {
  if (kb == null) return "–";
  return kb >= 10240 ? (kb / 1024).toFixed(1) + " MiB" : kb + " KiB";
}
