// live.js: a run whose output arrives as it is written. The request asks for
// Server-Sent Events (Accept: text/event-stream); a judge that answers plain
// JSON instead is handled the same way, so the page works with either.
import { authHeaders, ApiError } from "./common.js";

// Parses an event stream from a fetch body; calls onEvent(name, data) per event.
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value.replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const f = i < 0 ? line : line.slice(0, i);
        const v = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
        if (f === "event") name = v;
        else if (f === "data") data.push(v);
      }
      if (data.length || name !== "message") onEvent(name, data.join("\n"));
    }
  }
}

function json(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// The text of a stdout/stderr event: a JSON object with the chunk ("data",
// "text" or "chunk"), a JSON string, or the raw data.
function chunkText(data) {
  const v = json(data);
  if (typeof v === "string") return v;
  if (v && typeof v === "object") return v.data ?? v.text ?? v.chunk ?? v.output ?? "";
  return data;
}

const isResult = (v) => v && typeof v === "object" && typeof v.status === "string" && ("time_ms" in v || "compile" in v || "message" in v || "stdout" in v);

// POST path with body; onEvent(name, value) for each stdout/stderr chunk (a
// string) and each test's verdict (name "test", the test's JSON).
// Resolves to the result JSON (with id), or {id, status, httpStatus: 202}
// when the stream ended before the result (the caller waits for it).
export async function streamRun(path, body, signal, onEvent) {
  let res;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify(body),
      signal,
      cache: "no-store",
      credentials: "omit",
    });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "network", "the judge cannot be reached (" + e.message + ")");
  }
  const type = res.headers.get("Content-Type") || "";
  if (!type.startsWith("text/event-stream")) {
    const data = json(await res.text());
    if (!res.ok) {
      const err = (data && data.error) || {};
      throw new ApiError(res.status, err.code || "http_" + res.status, err.message || res.statusText);
    }
    Object.defineProperty(data, "httpStatus", { value: res.status });
    return data;
  }
  let result = null, id = null, error = null;
  await readEvents(res.body, (name, data) => {
    const v = json(data);
    if (v && typeof v === "object" && v.id != null) id = v.id;
    if (name === "stdout" || name === "stderr") onEvent(name, chunkText(data));
    else if (name === "test" && v) onEvent("test", v);
    else if (name === "result" && isResult(v)) result = v;
    else if (name === "done" && isResult(v)) result = result || v;
    else if (name === "error") error = v && (v.error || v);
  });
  if (result) {
    if (result.id == null && id != null) result.id = id;
    return result;
  }
  if (error && id == null) throw new ApiError(500, error.code || "error", error.message || String(error));
  const pending = { id, status: "running" };
  Object.defineProperty(pending, "httpStatus", { value: 202 });
  return pending;
}
