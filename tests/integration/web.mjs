// web.mjs: the playground, the problems page and the dashboard in a real browser (Debian's
// chromium driven by playwright-core; never a downloaded browser). Prints one
// "ok NAME" / "FAIL NAME -- DETAIL" / "skip NAME -- WHY" line per check;
// tests/integration/web.sh counts them.
// Usage: node web.mjs URL KEY ADMIN_KEY OFF_URL SHOTS_DIR PACKAGE_ZIP
import { chromium } from "playwright-core";

const [, , U, KEY, ADMIN, OFF, SHOTS, PACKAGE_ZIP, EGRESS_SESSION] = process.argv;
const ok = (n) => console.log("ok " + n);
const bad = (n, d) => console.log("FAIL " + n + " -- " + String(d).replace(/\s+/g, " ").slice(0, 400));
const skip = (n, d) => console.log("skip " + n + " -- " + d);

async function check(name, fn) {
  try {
    const r = await fn();
    if (r === "skip") return;
    ok(name);
  } catch (e) {
    bad(name, e && e.message ? e.message : e);
  }
}
function assert(c, msg) {
  if (!c) throw new Error(msg);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
});
const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const problems = []; // console errors (CSP violations are logged there), page errors
function watch(page) {
  page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
  page.on("pageerror", (e) => problems.push("pageerror: " + e.message));
  return page;
}
const shot = (page, name) => page.screenshot({ path: SHOTS + "/" + name + ".png", fullPage: true });
const verdict = (page) => page.locator("#verdict");
async function finalVerdict(page, timeout = 60000) {
  await page.waitForFunction(() => {
    const v = document.getElementById("verdict");
    return v && v.dataset.status && !v.classList.contains("pending");
  }, null, { timeout });
  return page.locator("#verdict").getAttribute("data-status");
}
async function setCode(page, text) {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.locator(".cm-content").evaluate((e, t) => {
    // insert as one paste-like change: typing would auto-indent
    const dt = new DataTransfer();
    dt.setData("text/plain", t);
    e.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  }, text);
}

// Is live output served? The router answers "no such endpoint" for a path it
// does not know.
const probe = await ctx.request.get(U + "/v1/submissions/999999999/events", { headers: { Authorization: "Bearer " + KEY } });
const liveServed = !(await probe.text()).includes("no such endpoint");

// ---- the playground, with the key from the address judge up prints ----
const page = watch(await ctx.newPage());
await check("the playground loads; #key= is kept in sessionStorage and cleared from the address", async () => {
  const res = await page.goto(U + "/#key=" + KEY);
  const csp = res.headers()["content-security-policy"] || "";
  assert(/script-src 'self'/.test(csp) && /style-src 'self';/.test(csp) && !/unsafe-inline/.test(csp), "csp: " + csp);
  await page.waitForFunction(() => document.querySelectorAll("#language option").length > 0, null, { timeout: 15000 });
  assert(!page.url().includes("#key"), "url still has the key: " + page.url());
  const stored = await page.evaluate(() => sessionStorage.getItem("judge.key"));
  assert(stored === KEY, "sessionStorage has " + stored);
  assert(await page.locator(".cm-content").count() === 1, "no editor");
  assert(await page.locator(".cm-editor .tok-keyword, .cm-editor span[class^='ͼ']").count() > 0, "no syntax highlighting in the editor");
});
await check("no cookies are set (the key goes as a Bearer header only)", async () => {
  const cookies = await ctx.cookies();
  assert(cookies.length === 0, JSON.stringify(cookies));
});
await check("every control has a label", async () => {
  const unlabeled = await page.evaluate(() => {
    const out = [];
    for (const e of document.querySelectorAll("input, select, textarea, button")) {
      const name = (e.labels && e.labels.length && e.labels[0].textContent.trim()) || e.getAttribute("aria-label") ||
        (e.getAttribute("aria-labelledby") && document.getElementById(e.getAttribute("aria-labelledby"))?.textContent.trim()) ||
        (e.tagName === "BUTTON" && e.textContent.trim());
      if (!name) out.push(e.outerHTML.slice(0, 80));
    }
    const cm = document.getElementById("editor").shadowRoot.querySelector(".cm-content");
    if (!cm.getAttribute("aria-label")) out.push("editor");
    return out;
  });
  assert(unlabeled.length === 0, unlabeled.join(" | "));
});
await check("an accepted program: verdict, time and memory", async () => {
  await page.selectOption("#language", "python");
  await setCode(page, 'name = input()\nprint(f"hello, {name}")\n');
  await page.fill("#stdin", "world");
  await page.fill("#expected", "hello, world");
  await page.click("#run-expected");
  const st = await finalVerdict(page);
  assert(st === "accepted", "status " + st);
  assert(/\d+ ms/.test(await page.locator("#fact-time").textContent()), "no time");
  assert(/\d+(\.\d)? (KiB|MiB)/.test(await page.locator("#fact-memory").textContent()), "no memory");
  await shot(page, "01-accepted");
});
await check("a wrong program: wrong_answer with the first difference side by side", async () => {
  await setCode(page, 'print("hello, word")\n');
  await page.click("#run-expected");
  const st = await finalVerdict(page);
  assert(st === "wrong_answer", "status " + st);
  const row = page.locator("#diff tr.diff-line");
  await row.waitFor({ timeout: 5000 });
  const exp = await row.locator("td.expected").textContent(), got = await row.locator("td.got").textContent();
  assert(exp === "hello, world" && got === "hello, word", "expected/got: " + exp + " / " + got);
  assert(await row.locator("td.got mark").textContent() === "d", "mark: " + await row.locator("td.got mark").textContent());
  await shot(page, "02-wrong-answer");
});
await check("a compile error shows the compiler's message", async () => {
  await page.selectOption("#language", "c");
  await setCode(page, "int main(void) { return x; }\n");
  await page.click("#run");
  const st = await finalVerdict(page);
  assert(st === "compile_error", "status " + st);
  assert(/x/.test(await page.locator(".output.compile pre").textContent()), "no compiler output");
  await page.selectOption("#language", "python");
});
await check("a problem: statement, samples, Submit and the per-test table", async () => {
  await page.check("input[name=mode][value=problem]");
  await page.waitForFunction(() => document.querySelectorAll("#problem option").length > 1);
  await page.selectOption("#problem", "sum");
  await page.locator("#statement-text").waitFor();
  assert(/a \+ b/.test(await page.locator("#statement-text").textContent()), "statement");
  assert((await page.inputValue("#stdin")).trim().length > 0, "sample input not filled");
  await setCode(page, "a, b = map(int, input().split())\nprint(a + b)\n");
  // counts the test verdicts shown live, before the final result
  await page.evaluate(() => {
    window.liveTests = 0;
    new MutationObserver((ms) => { for (const m of ms) window.liveTests += m.addedNodes.length; })
      .observe(document.getElementById("live-tests"), { childList: true });
  });
  await page.click("#submit");
  const st = await finalVerdict(page, 120000);
  assert(st === "accepted", "status " + st);
  const rows = await page.locator("#tests tbody tr").count();
  assert(rows >= 2, rows + " test rows");
  const live = await page.evaluate(() => window.liveTests);
  if (liveServed) assert(live === rows, live + " tests shown live, " + rows + " in the result");
  await setCode(page, "a, b = map(int, input().split())\nprint(a - b)\n");
  await page.click("#submit");
  const st2 = await finalVerdict(page, 120000);
  assert(st2 === "wrong_answer", "status " + st2);
  assert(await page.locator("#tests tbody tr.ko").count() >= 1, "no failing row");
  assert(await page.locator("#diff tr.diff-line").count() === 1, "no difference shown");
  await shot(page, "03-problem-wrong-answer");
  await page.check("input[name=mode][value=program]");
});
await check("live output is visible before the run ends", async () => {
  if (!liveServed) {
    skip("live output is visible before the run ends", "this judge has no live output (GET /v1/submissions/{id}/events)");
    return "skip";
  }
  await setCode(page, 'import time\nprint("first", flush=True)\ntime.sleep(3)\nprint("second")\n');
  await page.fill("#expected", "");
  await page.click("#run");
  await page.locator("#live").filter({ hasText: "first" }).waitFor({ timeout: 15000 });
  const pending = await page.locator("#verdict").evaluate((v) => v.classList.contains("pending"));
  const live = await page.locator("#live").textContent();
  assert(pending && !live.includes("second"), "the run had ended: " + live);
  await shot(page, "04-live-output");
  const st = await finalVerdict(page);
  assert(st === "completed", "status " + st);
});

// ---- a session: state kept across cells, a file written and downloaded ----
await check("a session keeps a variable across two cells, installs a package; its file downloads", async () => {
  const on = await page.locator("#mode-session-label").isVisible();
  if (!on) {
    skip("a session keeps a variable across two cells, installs a package; its file downloads", "this judge has no sessions (/v1/sessions)");
    return "skip";
  }
  // a build whose runner has no sessions yet says so when one is started
  const h = { Authorization: "Bearer " + KEY, "Content-Type": "application/json" };
  const p = await ctx.request.post(U + "/v1/sessions", { headers: h, data: { language: "python" } });
  const pj = await p.json();
  if (p.status() === 503 && /without the runner's session support/.test(pj.error?.message || "")) {
    skip("a session keeps a variable across two cells, installs a package; its file downloads", "this build cannot start sessions: " + pj.error.message);
    return "skip";
  }
  assert(p.status() === 201, "POST /v1/sessions: " + p.status() + " " + JSON.stringify(pj));
  await ctx.request.delete(U + "/v1/sessions/" + pj.id, { headers: h });
  await page.selectOption("#language", "python");
  await page.check("input[name=mode][value=session]");
  await page.click("#session-start");
  await page.waitForFunction(() => !document.getElementById("session-run").disabled, null, { timeout: 60000 });
  await setCode(page, "x = 41\n");
  await page.click("#session-run");
  await page.locator("#cells li .cell-status").first().waitFor({ timeout: 60000 });
  await setCode(page, 'print(x + 1)\nopen("answer.txt", "w").write(str(x + 1))\n');
  await page.keyboard.press("Control+Enter");
  await page.locator("#cells li:nth-child(2) .cell-status").waitFor({ timeout: 60000 });
  const out = await page.locator("#cells li:nth-child(2) pre.stdout").textContent();
  assert(out.trim() === "42", "second cell printed " + JSON.stringify(out));
  // a missing package, installed from the page, then imported
  await setCode(page, "import tinypkg\n");
  await page.click("#session-run");
  await page.locator("#cells li:nth-child(3) .cell-status").waitFor({ timeout: 60000 });
  const err = await page.locator("#cells li:nth-child(3) .cell-error").textContent();
  assert(/ModuleNotFoundError/.test(err), "import before install: " + err);
  await page.selectOption("#install-manager", "pip");
  await page.fill("#install-packages", "tinypkg==1.0");
  await page.press("#install-packages", "Enter");
  await page.locator("#install-result").filter({ hasText: /^Install (ok|error)/ }).waitFor({ timeout: 120000 });
  const inst = await page.locator("#install-result").textContent();
  assert(/^Install ok/.test(inst), inst);
  await setCode(page, "import tinypkg\nprint(tinypkg.hello())\nx\n");
  await page.click("#session-run");
  await page.locator("#cells li:nth-child(4) .cell-status").waitFor({ timeout: 60000 });
  const out4 = await page.locator("#cells li:nth-child(4) pre.stdout").textContent();
  assert(out4.trim() === "hello from tinypkg 1.0", "after install: " + out4);
  assert((await page.locator("#cells li:nth-child(4) pre.value").textContent()) === "41", "x is kept after the install");
  const row = page.locator("#files tbody tr", { hasText: "answer.txt" });
  await row.waitFor({ timeout: 15000 });
  const [dl] = await Promise.all([page.waitForEvent("download"), row.locator("button").click()]);
  const fs = await import("node:fs/promises");
  const text = await fs.readFile(await dl.path(), "utf8");
  assert(text === "42", "downloaded " + JSON.stringify(text));
  await shot(page, "08-session");
  await page.click("#session-close");
  await page.check("input[name=mode][value=program]");
});

// ---- keyboard only: a new page, no mouse ----
await check("keyboard only: Tab to the editor, type, Ctrl-Enter runs", async () => {
  const kp = watch(await ctx.newPage());
  await kp.goto(U + "/#key=" + KEY);
  await kp.waitForFunction(() => document.querySelectorAll("#language option").length > 0);
  let inEditor = false;
  for (let i = 0; i < 30 && !inEditor; i++) {
    await kp.keyboard.press("Tab");
    inEditor = await kp.evaluate(() => document.getElementById("editor").shadowRoot.activeElement?.classList.contains("cm-content") ?? false);
  }
  assert(inEditor, "Tab never reached the editor");
  await kp.keyboard.press("Control+A");
  await kp.keyboard.type("print(input()[::-1])");
  await kp.keyboard.press("Tab"); // leaves the editor (it does not trap Tab)
  const where = await kp.evaluate(() => document.activeElement.id);
  assert(where === "stdin", "Tab from the editor went to " + where);
  await kp.keyboard.press("Control+A");
  await kp.keyboard.type("olleh");
  await kp.keyboard.press("Tab");
  await kp.keyboard.press("Control+A");
  await kp.keyboard.type("hello");
  await kp.keyboard.press("Control+Enter");
  const st = await finalVerdict(kp);
  assert(st === "accepted", "status " + st);
  await shot(kp, "05-keyboard");
  await kp.close();
});

// ---- the dashboard ----
const dash = watch(await ctx.newPage());
await check("dashboard: a key without the admin flag is told so", async () => {
  await dash.goto(U + "/dashboard#key=" + KEY);
  await dash.locator("#notice").filter({ hasText: "not an admin key" }).waitFor({ timeout: 10000 });
});
await check("dashboard: an admin key shows the queue, workers, failures and keys", async () => {
  await dash.fill("#key-input", ADMIN);
  await dash.press("#key-input", "Enter");
  await dash.waitForFunction(() => Number(document.body.dataset.loaded || 0) > 0, null, { timeout: 10000 });
  assert(/^\d+$/.test(await dash.locator("#m-queue").textContent()), "queue");
  assert(/^\d+$/.test(await dash.locator("#m-sessions").textContent()), "open sessions");
  // web.sh paused a session of KEY before: counted, its image's bytes shown, on its key's row
  assert(Number(await dash.locator("#m-paused").textContent()) >= 1, "paused sessions");
  assert(/^\d+(\.\d)? (KiB|MiB)$/.test(await dash.locator("#m-images").textContent()), "stored images");
  const paused = dash.locator("#keys tbody tr").filter({ has: dash.locator("td:nth-child(6)", { hasText: /^[1-9]/ }) });
  assert(await paused.count() === 1, "one key's row has a paused session");
  assert(await dash.locator("#workers tbody tr:not(.dead) th").count() >= 1, "no live worker row");
  assert(await dash.locator("#keys tbody tr").count() >= 2, "keys");
  const f = await dash.locator("#failures tbody").textContent();
  assert(f.includes("injected: the sandbox could not start"), "recent failures: " + f);
});
await check("dashboard: the sessions' network attempts (web.sh injected two)", async () => {
  const refused = dash.locator("#egress tbody tr.refused", { hasText: "evil.test" });
  await refused.waitFor({ timeout: 10000 });
  const cells = await refused.locator("th, td").allTextContents();
  assert(cells[0] === EGRESS_SESSION && cells[2] === "evil.test" && cells[3] === "80" && cells[4] === "refused" &&
    cells[5].startsWith("evil.test:80 is not") && cells[6] === "0 / 0", "refused row: " + cells.join(" | "));
  const allowed = await dash.locator("#egress tbody tr.allowed", { hasText: "api.test" }).locator("td").allTextContents();
  assert(allowed[3] === "allowed" && allowed[5] === "517 / 4096", "allowed row: " + allowed.join(" | "));
  // one session's: another id shows none, then its own again
  await dash.fill("#egress-session", "00000000-0000-0000-0000-000000000000");
  await dash.click("#egress-filter button[type=submit]");
  await dash.locator("#egress tbody", { hasText: "No network attempt in this session." }).waitFor({ timeout: 10000 });
  await dash.fill("#egress-session", EGRESS_SESSION);
  await dash.click("#egress-filter button[type=submit]");
  await dash.locator("#egress tbody tr.refused").waitFor({ timeout: 10000 });
  assert(await dash.locator("#egress tbody tr").count() === 2, "one session's rows");
  // the keys table shows each key's own egress cap
  const caps = await dash.locator("#keys tbody td:nth-child(5)").allTextContents();
  assert(caps.length >= 2 && caps.every((c) => c === "judge.ini's" || /^(off|allowlist|open)/.test(c)), "egress caps: " + caps);
});
await check("dashboard: the numbers move after a submission", async () => {
  const before = Number(await dash.locator("#m-finished").textContent());
  const r = await dash.request.post(U + "/v1/execute", {
    headers: { Authorization: "Bearer " + KEY, "Content-Type": "application/json" },
    data: { language: "python", source: "print(1)" },
  });
  assert(r.status() === 200, "execute " + r.status());
  await dash.waitForFunction((b) => Number(document.getElementById("m-finished").textContent) > b, before, { timeout: 15000 });
  assert(Number(await dash.locator("#m-throughput").textContent()) >= 1, "throughput");
  // the execute's key shows in the queue by key, with the claim it just had
  await dash.locator("#queue-keys tbody tr th").first().waitFor({ timeout: 15000 });
  assert(await dash.locator("#queue-keys tbody tr").count() >= 1, "no row in the queue by key");
  assert(await dash.locator("#c-throughput rect").count() >= 1, "no bar in the throughput chart");
  await shot(dash, "06-dashboard");
});
await check("dashboard: create a key (shown once) and revoke it", async () => {
  await dash.fill("#new-key-name", "from the dashboard");
  await dash.click("#key-create button[type=submit]");
  await dash.locator("#new-key-value").filter({ hasText: /^jk_[0-9a-f]{40}$/ }).waitFor({ timeout: 10000 });
  const newKey = await dash.locator("#new-key-value").textContent();
  const use = await dash.request.get(U + "/v1/languages", { headers: { Authorization: "Bearer " + newKey } });
  assert(use.status() === 200, "the new key gets " + use.status());
  const row = dash.locator("#keys tbody tr", { hasText: "from the dashboard" });
  await row.waitFor();
  dash.once("dialog", (d) => d.accept());
  await row.locator("button").click();
  await dash.locator("#keys tbody tr.revoked", { hasText: "from the dashboard" }).waitFor({ timeout: 10000 });
  let st = 200;
  for (let i = 0; i < 40 && st === 200; i++) {
    await new Promise((r) => setTimeout(r, 250));
    st = (await dash.request.get(U + "/v1/languages", { headers: { Authorization: "Bearer " + newKey } })).status();
  }
  assert(st === 401, "the revoked key still gets " + st);
  await shot(dash, "07-keys");
});

// ---- the problems page: upload a zip, read the report, try it in the playground ----
const pp = watch(await ctx.newPage());
await check("problems page: lists the problems this key sees", async () => {
  await pp.goto(U + "/problems#key=" + KEY); // a new tab: the key lives in each tab's sessionStorage
  await pp.locator("#problems tbody tr[data-id=hello]").waitFor({ timeout: 15000 });
  const txt = await pp.locator("#problems tbody tr[data-id=hello]").innerText();
  assert(/every key/.test(txt), "hello's row: " + txt);
});
await check("problems page: a zip uploaded, verified by a worker, its report shown", async () => {
  await pp.setInputFiles("#up-file", PACKAGE_ZIP);
  await pp.fill("#up-id", "webprob");
  await pp.click("#up-go");
  await pp.waitForFunction(() => {
    const s = document.getElementById("report-state");
    return s && s.dataset.status && s.dataset.status !== "verifying";
  }, null, { timeout: 180000 });
  const st = await pp.locator("#report-state").getAttribute("data-status");
  assert(st === "ready", "status " + st + ": " + (await pp.locator("#report-body").innerText()).slice(0, 300));
  const row = await pp.locator("#report-table tbody tr", { hasText: "accepted/double.py" }).innerText();
  assert(/as expected/.test(row) && /accepted/.test(row), "report row: " + row);
  await pp.locator("#problems tbody tr[data-id=webprob]").waitFor({ timeout: 10000 });
  await shot(pp, "10-problem-report");
});
await check("problems page: Try opens it in the playground, where a solution is accepted", async () => {
  await pp.click("#try");
  await pp.waitForURL(/\?problem=webprob/, { timeout: 10000 });
  await pp.waitForFunction(() => document.getElementById("problem").value === "webprob" &&
    !document.getElementById("statement").hidden, null, { timeout: 15000 });
  assert(await pp.locator("input[name=mode][value=problem]").isChecked(), "not in Problem mode");
  await pp.selectOption("#language", "python");
  await setCode(pp, "print(2 * int(input()))\n");
  await pp.click("#submit");
  const st = await finalVerdict(pp, 120000);
  assert(st === "accepted", "the solution got " + st);
  await shot(pp, "11-problem-tried");
});
await check("problems page: publish and retire the key's own problem", async () => {
  await pp.goto(U + "/problems");
  const row = pp.locator("#problems tbody tr[data-id=webprob]");
  await row.waitFor({ timeout: 15000 });
  await row.getByRole("button", { name: "Publish webprob" }).click();
  await pp.locator("#problems tbody tr[data-id=webprob]", { hasText: "every key" }).waitFor({ timeout: 10000 });
  pp.once("dialog", (d) => d.accept());
  await pp.locator("#problems tbody tr[data-id=webprob]").getByRole("button", { name: "Retire webprob" }).click();
  await pp.locator("#problems tbody tr[data-id=webprob]").waitFor({ state: "detached", timeout: 10000 });
});
await check("problems page: a refused package shows what failed", async () => {
  const before = problems.length;
  await pp.setInputFiles("#up-file", { name: "junk.zip", mimeType: "application/zip", buffer: Buffer.from("not a zip") });
  await pp.fill("#up-id", "junk");
  await pp.click("#up-go");
  await pp.locator("#notice", { hasText: "not a zip" }).waitFor({ timeout: 15000 });
  // the browser logs the refusal it was asked for (a 422) as a console error: that one is expected
  for (let i = problems.length - 1; i >= before; i--)
    if (/status of 422/.test(problems[i])) problems.splice(i, 1);
});

// ---- auth = off on loopback: no key at all ----
await check("auth = off on loopback: the playground runs with no key", async () => {
  const c2 = await browser.newContext();
  const p2 = watch(await c2.newPage());
  await p2.goto(OFF + "/");
  await p2.waitForFunction(() => document.querySelectorAll("#language option").length > 0, null, { timeout: 15000 });
  await p2.click("#run-expected");
  const st = await finalVerdict(p2);
  assert(st === "accepted", "the starter program got " + st);
  await p2.goto(OFF + "/dashboard");
  await p2.waitForFunction(() => Number(document.body.dataset.loaded || 0) > 0, null, { timeout: 10000 });
  await c2.close();
});

await check("no console errors and no Content-Security-Policy violations", async () => {
  // a 401/403 the pages asked for on purpose is logged by the browser too
  const real = problems.filter((p) => !/status of 40[13]/.test(p));
  assert(real.length === 0, real.join(" | "));
});
await browser.close();
