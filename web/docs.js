// docs.js: renders /openapi.json as the /docs page (plain DOM, no library).
"use strict";

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

// Follows a local "$ref" ("#/components/...") in doc.
function deref(doc, o) {
  if (!o || !o.$ref) return o;
  return o.$ref.slice(2).split("/").reduce((a, k) => a && a[k], doc) || o;
}

// A JSON Schema shown as a compact type sketch; refs become schema names.
function sketch(doc, s, depth) {
  if (!s) return "any";
  if (s.$ref) {
    const name = s.$ref.split("/").pop();
    return depth > 0 ? name : sketch(doc, deref(doc, s), depth + 1);
  }
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf) return s.anyOf.map((x) => sketch(doc, x, depth + 1)).join(" | ");
  const t = [].concat(s.type || (s.properties ? "object" : "any"));
  if (t[0] === "array") return "[" + sketch(doc, s.items, depth + 1) + ", ...]";
  if (t[0] === "object" && s.properties) {
    if (depth > 2) return "{...}";
    const pad = "  ".repeat(depth + 1), req = s.required || [];
    const lines = Object.entries(s.properties).map(
      ([k, v]) => pad + k + (req.includes(k) ? "" : "?") + ": " + sketch(doc, v, depth + 1));
    return "{\n" + lines.join(",\n") + "\n" + "  ".repeat(depth) + "}";
  }
  return t.join(" | ");
}

function content(doc, c) {
  if (!c) return null;
  const div = el("div");
  for (const [type, m] of Object.entries(c))
    div.append(el("div", {}, el("code", {}, type)), el("pre", {}, sketch(doc, m.schema, 0)));
  return div;
}

function operation(doc, path, method, op) {
  const open = op.security && op.security.length === 1 && !Object.keys(op.security[0]).length;
  const sum = el("summary", {}, el("span", { class: "method " + method }, method.toUpperCase()),
    el("code", {}, path), " ", op.summary || "", open ? el("span", { class: "nokey" }, "no key") : null);
  const d = el("details", { class: "op", id: op.operationId || method + path }, sum);
  if (op.description) d.append(el("p", {}, op.description));
  if (op.parameters && op.parameters.length) {
    const t = el("table", {}, el("tr", {}, el("th", {}, "parameter"), el("th", {}, "in"), el("th", {}, "type"), el("th", {}, "")));
    for (const p0 of op.parameters) {
      const p = deref(doc, p0);
      t.append(el("tr", {}, el("td", {}, el("code", {}, p.name)), el("td", {}, p.in),
        el("td", {}, sketch(doc, p.schema, 1)), el("td", {}, p.description || "")));
    }
    d.append(t);
  }
  if (op.requestBody) d.append(el("h4", {}, "Request body"), content(doc, deref(doc, op.requestBody).content));
  d.append(el("h4", {}, "Responses"));
  for (const [code, r0] of Object.entries(op.responses || {})) {
    const r = deref(doc, r0);
    d.append(el("div", {}, el("strong", {}, code), " " + (r.description || "")), content(doc, r.content));
  }
  return d;
}

function render(doc) {
  document.getElementById("title").textContent = doc.info.title + " API " + doc.info.version;
  const out = document.getElementById("doc");
  out.textContent = "";
  if (doc.info.description) out.append(el("p", {}, doc.info.description));
  const tags = (doc.tags || []).map((t) => t.name);
  const nav = el("nav");
  out.append(nav);
  for (const tag of tags) {
    const tdef = doc.tags.find((t) => t.name === tag);
    nav.append(el("a", { href: "#tag-" + tag }, tag));
    out.append(el("h2", { id: "tag-" + tag }, tag + (tdef.description ? ": " + tdef.description : "")));
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        if ((op.tags || [])[0] === tag) out.append(operation(doc, path, method, op));
  }
  out.append(el("h2", { id: "auth" }, "Authentication"));
  for (const [name, s] of Object.entries(doc.components.securitySchemes || {}))
    out.append(el("p", {}, el("code", {}, name), ": " + (s.description || s.type)));
  out.append(el("h2", { id: "schemas" }, "Schemas"));
  for (const [name, s] of Object.entries(doc.components.schemas || {}))
    out.append(el("h3", { id: "schema-" + name }, name), el("pre", {}, sketch(doc, s, 0)));
}

fetch("/openapi.json")
  .then((r) => r.json())
  .then(render)
  .catch((e) => { document.getElementById("doc").textContent = "cannot load /openapi.json: " + e; });
