// mcp_sdk.mjs: an official MCP TypeScript SDK against the judge, over one transport.
// Usage: node mcp_sdk.mjs SDK stdio JUDGE_BINARY INI URL KEY ROOT
//        node mcp_sdk.mjs SDK http URL KEY ROOT
// SDK: v1 (@modelcontextprotocol/sdk 1.x: initialize, the 2025 era) or v2
// (@modelcontextprotocol/client 2.x pinned to protocol revision 2026-07-28: no
// initialize, server/discover, per-request _meta and headers). tests/integration/
// mcp_sdk.sh copies it next to its node_modules. Prints one line per check, "ok NAME"
// or "FAIL NAME -- DETAIL", which the shell script counts.
import { readFileSync } from "node:fs";

const [sdk, mode, ...rest] = process.argv.slice(2);
const v2 = sdk === "v2";
const MODERN = "2026-07-28";
let Client, StdioClientTransport, StreamableHTTPClientTransport, LATEST_PROTOCOL_VERSION;
if (v2) {
  ({ Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/client/stdio"));
} else {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
  ({ LATEST_PROTOCOL_VERSION } = await import("@modelcontextprotocol/sdk/types.js"));
}
const root = rest[rest.length - 1];
const problemDir = `${root}/problems/hello`;
const newTransport = () => {
  if (mode === "stdio") {
    const [bin, ini, url, key] = rest;
    return new StdioClientTransport({
      command: bin,
      args: ["--config", ini, "mcp", "--url", url, "--key", key],
      stderr: "inherit", // the bridge's log, into the shell script's run.err
    });
  }
  const [url, key] = rest;
  return new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
};
const transport = newTransport();

const check = (name, cond, detail) => {
  const where = `${sdk} ${mode}`;
  console.log(cond ? `ok ${where}: ${name}` : `FAIL ${where}: ${name} -- ${JSON.stringify(detail).slice(0, 500)}`);
};
// callTool's options are its second argument in 2.x, its third in 1.x
const callTool = (params, opts) => (v2 ? client.callTool(params, opts) : client.callTool(params, undefined, opts));
// call NAME ARGS: the tool's structuredContent, checked against its text content. The
// SDK's Client.callTool itself validates structuredContent against the outputSchema
// listTools gave (and throws when it does not conform), so each call checks it too.
const call = async (name, args) => {
  const r = await callTool({ name, arguments: args });
  const text = r.content?.[0]?.text;
  const same = text !== undefined && JSON.stringify(JSON.parse(text)) === JSON.stringify(r.structuredContent);
  return { r, s: r.structuredContent ?? {}, ok: r.isError === false && same };
};
// raw NAME ARGS: a tools/call whose result is an error, through callTool as an agent
// calls it (an error result has no structuredContent for it to check)
const raw = (name, args) => callTool({ name, arguments: args });
const step = async (name, fn) => {
  try {
    await fn();
  } catch (e) {
    check(name, false, String(e?.stack ?? e));
  }
};

// v2: pinned to 2026-07-28, so connect is a server/discover that must offer it
const client = v2
  ? new Client({ name: "judge-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
  : new Client({ name: "judge-test", version: "1.0.0" });
let subId;
const connectName = v2 ? "connect (server/discover, no initialize)" : "connect (initialize)";
await step(connectName, async () => {
  await client.connect(transport);
  const v = client.getServerVersion();
  check(connectName, v?.name === "judge", v);
});
await step("listTools: all 22", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const want = ["execute", "execute_with_expected", "get_problem", "get_submission", "list_languages", "list_problems",
    "session_close", "session_create", "session_execute", "session_fork", "session_history", "session_install_packages",
    "session_list_files", "session_pause", "session_read_file", "session_resume", "session_snapshot",
    "session_write_file", "snapshot_delete", "snapshot_list", "solve_problem", "upload_problem"];
  check("listTools: all 22", JSON.stringify(names) === JSON.stringify(want), names);
  const bad = tools.filter((t) => t.outputSchema?.type !== "object").map((t) => t.name);
  check("listTools: every tool has an outputSchema of type object", bad.length === 0, bad);
});
// the version the server answered (the HTTP transport sends it in MCP-Protocol-Version):
// the SDK's latest when the server knows it (2025-11-25 and older), else 2025-11-25
await step("protocol version negotiated", async () => {
  if (v2) {
    const got = client.getNegotiatedProtocolVersion();
    check("protocol version negotiated", got === MODERN, { got });
    return;
  }
  const ours = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
  const want = ours.includes(LATEST_PROTOCOL_VERSION) ? LATEST_PROTOCOL_VERSION : ours[0];
  const got = mode === "http" ? transport.protocolVersion : want;
  check("protocol version negotiated", got === want, { got, want, sdk: LATEST_PROTOCOL_VERSION });
});
await step("execute_with_expected: accepted", async () => {
  const { s, ok, r } = await call("execute_with_expected", {
    language: "python", source: "print(input()[::-1])", stdin: "abc", expected_output: "cba",
  });
  check("execute_with_expected: accepted", ok && s.status === "accepted", r);
});
await step("execute", async () => {
  const { s, ok, r } = await call("execute", { language: "python", source: "print(6*7)" });
  subId = s.id;
  check("execute", ok && typeof s.id === "number" && s.status === "completed" && s.stdout === "42\n", r);
});
await step("solve_problem hello: accepted", async () => {
  const source = readFileSync(`${problemDir}/submissions/accepted/hello.py`, "utf8");
  const { s, ok, r } = await call("solve_problem", { problem: "hello", language: "python", source });
  check("solve_problem hello: accepted", ok && s.status === "accepted", r);
});
await step("get_submission", async () => {
  const { s, ok, r } = await call("get_submission", { id: subId });
  check("get_submission", ok && s.id === subId && typeof s.status === "string", r);
});
await step("list_languages", async () => {
  const { s, ok, r } = await call("list_languages", {});
  check("list_languages", ok && s.languages?.some((l) => l.name === "python"), r);
});
await step("list_problems", async () => {
  const { s, ok, r } = await call("list_problems", {});
  check("list_problems", ok && s.problems?.some((p) => p.id === "hello"), r);
});
await step("get_problem hello", async () => {
  const { s, ok, r } = await call("get_problem", { id: "hello" });
  check("get_problem hello", ok && s.id === "hello" && s.samples?.length > 0, r);
});
// the session tools: the agent loop of the README, each result checked against its
// outputSchema by the SDK (callTool throws when it does not conform)
let sid;
await step("session_create", async () => {
  const { s, ok, r } = await call("session_create", { language: "python", idle_ttl: 120 });
  sid = s.id;
  check("session_create", ok && s.status === "ready" && typeof s.id === "string", r);
});
await step("session_write_file", async () => {
  const { s, ok, r } = await call("session_write_file", { session_id: sid, path: "in/data.csv", content: "x,y\n1,2\n3,4\n" });
  check("session_write_file", ok && s.size === 12, r);
});
await step("session_execute: reads the file, keeps state", async () => {
  await call("session_execute", { session_id: sid, code: "rows = open('in/data.csv').read().split()[1:]" });
  const { s, ok, r } = await call("session_execute", { session_id: sid, code: "open('out.txt', 'w').write(str(len(rows)))\nlen(rows)" });
  check("session_execute: reads the file, keeps state", ok && s.status === "ok" && s.result === "2", r);
});
await step("session_execute: env for one cell", async () => {
  const { s, ok, r } = await call("session_execute", { session_id: sid, code: "import os\nos.environ.get('TOKEN_FOR_CELL')", env: { TOKEN_FOR_CELL: "t1" } });
  const next = await call("session_execute", { session_id: sid, code: "os.environ.get('TOKEN_FOR_CELL')" });
  check("session_execute: env for one cell", ok && s.result === "'t1'" && next.ok && next.s.result === null, r + " " + next.r);
});
await step("session_execute: an error names the exception", async () => {
  const { s, ok, r } = await call("session_execute", { session_id: sid, code: "import no_such_module_here" });
  check("session_execute: an error names the exception", ok && s.status === "error" && s.error?.name === "ModuleNotFoundError", r);
});
await step("session_execute: an image result is image content", async () => {
  const code = "class P:\n    def _repr_png_(self):\n        return b'\\x89PNG\\r\\n\\x1a\\n' + bytes(24)\n    def __repr__(self):\n        return 'P()'\nP()";
  const r = await raw("session_execute", { session_id: sid, code });
  const img = (r.content ?? []).find((c) => c.type === "image");
  const text = JSON.parse(r.content?.[0]?.text ?? "{}");
  const png = Buffer.from(img?.data ?? "", "base64");
  check("session_execute: an image result is image content, left out of the text",
    r.isError === false && img?.mimeType === "image/png" && png.subarray(0, 4).toString("latin1") === "\x89PNG" &&
    png.length === 32 && text.result === "P()" && !/iVBOR/.test(r.content[0].text) &&
    r.structuredContent?.results?.[0]?.["image/png"] === img.data, JSON.stringify(r).slice(0, 600));
});
await step("session_list_files", async () => {
  const { s, ok, r } = await call("session_list_files", { session_id: sid });
  const names = (s.files ?? []).map((f) => f.name);
  check("session_list_files", ok && names.includes("in") && names.includes("out.txt"), r);
});
await step("session_read_file", async () => {
  const { s, ok, r } = await call("session_read_file", { session_id: sid, path: "out.txt" });
  check("session_read_file", ok && s.encoding === "utf-8" && s.content === "2", r);
});
await step("session_pause, session_resume: the files come back, restarted", async () => {
  const p = await call("session_pause", { session_id: sid });
  check("session_pause", p.ok && p.s.status === "paused" && p.s.id === sid, p.r);
  const q = await call("session_resume", { session_id: sid });
  check("session_resume", q.ok && q.s.status === "ready" && q.s.restarted === true, q.r);
  const f = await call("session_read_file", { session_id: sid, path: "out.txt" });
  check("session_resume: the file is back", f.ok && f.s.content === "2", f.r);
});
await step("session_fork: a new session with the files", async () => {
  const { s, ok, r } = await call("session_fork", { session_id: sid, name: "branch" });
  check("session_fork", ok && s.status === "ready" && s.forked_from === sid && s.id !== sid, r);
  const f = await call("session_read_file", { session_id: s.id, path: "out.txt" });
  check("session_fork: the file is in the fork", f.ok && f.s.content === "2", f.r);
  await call("session_close", { session_id: s.id });
});
await step("session_snapshot, snapshot_list, snapshot_delete", async () => {
  const { s, ok, r } = await call("session_snapshot", { session_id: sid, name: "kept" });
  check("session_snapshot: an id, its name and session", ok && s.snapshot_id?.length === 36 && s.name === "kept" &&
    s.session_id === sid, r);
  const l = await call("snapshot_list", {});
  const mine = l.s?.snapshots?.find((x) => x.id === s.snapshot_id);
  check("snapshot_list: holds it, with its size, and the key's stored bytes", l.ok && mine?.name === "kept" &&
    mine.size > 0 && l.s.stored > 0 && l.s.cap > 0, l.r);
  const d = await call("snapshot_delete", { snapshot_id: s.snapshot_id });
  check("snapshot_delete", d.ok && d.s.id === s.snapshot_id && d.s.deleted === true, d.r);
  const again = await raw("snapshot_delete", { snapshot_id: s.snapshot_id });
  check("snapshot_delete again: an error result, not found", again.isError === true &&
    /not_found/.test(again.content?.[0]?.text), again);
  const after = await call("snapshot_list", {});
  check("snapshot_list after the delete: gone", after.ok && !after.s.snapshots.some((x) => x.id === s.snapshot_id),
    after.r);
});
await step("session_install_packages: a refused name is an error result", async () => {
  const r = await raw("session_install_packages", { session_id: sid, manager: "pip", packages: ["--index-url=http://x/"] });
  check("session_install_packages: a refused name is an error result", r.isError === true && /invalid_package/.test(r.content?.[0]?.text), r);
});
await step("session_close", async () => {
  const { s, ok, r } = await call("session_close", { session_id: sid });
  check("session_close", ok && s.status === "closed", r);
  const again = await raw("session_execute", { session_id: sid, code: "1" });
  check("session_execute after close: an error result", again.isError === true && /session_closed/.test(again.content?.[0]?.text), again);
});
await step("unknown tool: an error", async () => {
  let threw = false;
  try {
    const r = await callTool({ name: "no_such_tool", arguments: {} });
    threw = r.isError === true;
  } catch (e) {
    threw = /-32602|no_such_tool|unknown/i.test(String(e));
  }
  check("unknown tool: an error", threw, "no error");
});
// Streamable HTTP with SSE: a tools/call with a progress token is answered as a
// stream of notifications/progress (the run's live output), then the result
let progressId;
const SLEEPY = 'import time\nprint("one", flush=True)\ntime.sleep(1.5)\nprint("two")';
await step("progress: live output while the run goes on", async () => {
  const seen = [];
  const t0 = Date.now();
  const r = await callTool({ name: "execute", arguments: { language: "python", source: SLEEPY } },
    { onprogress: (p) => seen.push({ ...p, t: Date.now() - t0 }) });
  const done = Date.now() - t0;
  const s = r.structuredContent ?? {};
  progressId = s.id;
  const first = seen.find((p) => (p.message ?? "").startsWith("stdout: one"));
  const shown = seen.map((p) => p.message).join("|");
  if (mode === "stdio") {
    // the bridge answers with one JSON line: no progress, the same result
    check("progress: over stdio the result comes, without progress", s.status === "completed" && seen.length === 0, { s, shown });
    return;
  }
  check("progress: stdout one arrives > 1 s before the result", first && done - first.t > 1000, { seen, done });
  check("progress: values increase, a test event is told", seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress) &&
    seen.some((p) => p.message === "test 1: completed"), shown);
  check("progress: then the same result as without a stream", r.isError === false && s.status === "completed" &&
    s.stdout === "one\ntwo\n" && typeof s.id === "number", r);
});
// (2026-07-28: over HTTP the client's closing the stream is the cancellation)
await step("cancel: the aborted call ends at once, the run is stored", async () => {
  if (mode === "stdio") return;
  const ac = new AbortController();
  const started = Date.now();
  const p = callTool({ name: "execute", arguments: { language: "python", source: SLEEPY } },
    { signal: ac.signal, onprogress: () => ac.abort("enough") });
  let err = null;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  const ended = Date.now();
  // the run goes on and is stored (the submission after the progress call's)
  const { s } = await call("get_submission", { id: progressId + 1, wait_s: 10 });
  // ended before the run did (its second line is 1.5 s after the first): no
  // duration is asserted, the machine may be loaded
  check("cancel: the call ends at the first progress, not with the run",
    err !== null && typeof s.finished_ms === "number" && ended < s.finished_ms,
    { err: String(err), took: ended - started, ended, finished_ms: s.finished_ms });
  check("cancel: the run itself completed and was stored", s.status === "completed" &&
    s.result?.stdout === "one\ntwo\n", s);
  const again = await call("execute", { language: "python", source: "print(1)" });
  check("cancel: the client goes on (the next call is answered)", again.ok && again.s.stdout === "1\n", again.r);
});
// subscriptions/listen: acknowledged with nothing honored (no list here ever changes),
// then ended by the server at once
if (v2) {
  await step("listen: acknowledged, nothing honored, ended gracefully", async () => {
    const sub = await client.listen({ toolsListChanged: true });
    const how = await sub.closed;
    check("listen: acknowledged, nothing honored, ended gracefully",
      JSON.stringify(sub.honoredFilter) === "{}" && how === "graceful", { f: sub.honoredFilter, how });
  });
}
// v2's "auto" mode: probes with server/discover and stays modern on a modern answer
if (v2) {
  await step("auto negotiation: 2026-07-28", async () => {
    const c = new Client({ name: "judge-auto", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await c.connect(newTransport());
    const { tools } = await c.listTools();
    check("auto negotiation: 2026-07-28", c.getNegotiatedProtocolVersion() === MODERN && tools.length === 22,
      { v: c.getNegotiatedProtocolVersion(), n: tools.length });
    await c.close();
  });
}
await step("close", async () => {
  await client.close();
  check("close", true);
});
