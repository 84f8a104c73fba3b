// e2b_sdk.mjs: the unmodified @e2b/code-interpreter SDK (from npm) against a judge.
// Env: E2B_API_URL, E2B_SANDBOX_URL (the judge's origin), E2B_API_KEY (a judge key),
// OTHER_KEY (another judge key). Prints "ok NAME" or "FAIL NAME -- DETAIL" per check.
import {
	Sandbox, NotFoundError, SandboxError, AuthenticationError, CommandExitError,
} from '@e2b/code-interpreter';

function check(name, cond, detail) {
	console.log(cond ? `ok ${name}` : `FAIL ${name} -- ${detail ?? ''}`);
}
// GET of the judge's own /v1 API with key
async function v1(path, key) {
	const r = await fetch(process.env.E2B_API_URL + path, { headers: { Authorization: `Bearer ${key}` } });
	return r.json();
}
async function step(name, fn) {
	try {
		await fn();
	} catch (e) {
		console.log(`FAIL ${name} -- threw ${e?.name}: ${String(e?.message).slice(0, 300)}`);
	}
}

let s;
await step('create', async () => {
	s = await Sandbox.create({ timeoutMs: 120000 });
	check('create: a sandbox id', typeof s.sandboxId === 'string' && s.sandboxId.length > 0,
		s.sandboxId);
});
if (!s) process.exit(0);
const id = s.sandboxId;

await step('a judge key written e2b_ + hex', async () => {
	// what E2B's Python SDK requires of a key; the JS SDK sends it the same way
	const t = await Sandbox.create({ apiKey: process.env.E2B_SPELLED_KEY });
	const ex = await t.runCode('6 * 7');
	check('a judge key written e2b_ + hex: create and runCode', ex.text === '42', JSON.stringify(ex));
	check('a judge key written e2b_ + hex: the same key (its sandbox listed by the jk_ form)',
		(await Sandbox.list().nextItems()).some((x) => x.sandboxId === t.sandboxId));
	await t.kill();
});
await step('isRunning', async () => check('isRunning: true', (await s.isRunning()) === true));
await step('getInfo', async () => {
	const info = await s.getInfo();
	check('getInfo: same id, startedAt a date, running',
		info.sandboxId === id && info.startedAt instanceof Date &&
		!isNaN(info.startedAt) && info.state === 'running', JSON.stringify(info));
});
// egress (docs/e2b.md, "Network"): the SDK's default create (allowInternetAccess
// unset) under judge.ini's default cap, egress = off, is not refused: no network
await step('network: the default create under egress = off', async () => {
	const info = await s.getInfo();
	check('network: a default create under egress = off has no internet access',
		info.allowInternetAccess === false && info.network === undefined, JSON.stringify(info));
	check('network: its session\'s network is none',
		(await v1(`/v1/sessions/${id}`, process.env.E2B_API_KEY)).network?.mode === 'none');
});
await step('setTimeout', async () => {
	// the sandbox was made with 120 s: 600 s moves its end past that, 60 s back
	const t0 = Date.now();
	await s.setTimeout(600000);
	let info = await s.getInfo();
	check('setTimeout 600 s: endAt about 600 s away', info.endAt - t0 > 500000 && info.endAt - Date.now() <= 601000,
		`${info.endAt.toISOString()} at ${new Date(t0).toISOString()}`);
	await s.setTimeout(60000);
	info = await s.getInfo();
	check('setTimeout 60 s: endAt about 60 s away', info.endAt - Date.now() <= 61000 && info.endAt - t0 > 30000,
		`${info.endAt.toISOString()} at ${new Date(t0).toISOString()}`);
});
await step('list', async () => {
	const items = await Sandbox.list().nextItems();
	check('list: holds the sandbox', items.some((x) => x.sandboxId === id),
		JSON.stringify(items.map((x) => x.sandboxId)));
});
await step('list: another key sees none of it', async () => {
	const items = await Sandbox.list({ apiKey: process.env.OTHER_KEY }).nextItems();
	check('list: another key sees none of it', !items.some((x) => x.sandboxId === id),
		JSON.stringify(items));
});
await step('getInfo: another key', async () => {
	let err;
	try {
		await Sandbox.getInfo(id, { apiKey: process.env.OTHER_KEY });
	} catch (e) {
		err = e;
	}
	check('getInfo: another key gets NotFoundError', err instanceof NotFoundError,
		`${err?.name}: ${err?.message}`);
});
await step('runCode x = 1', async () => {
	const ex = await s.runCode('x = 1');
	check('runCode x = 1: no result, no error', ex.results.length === 0 && !ex.error,
		JSON.stringify(ex.toJSON()));
});
await step('runCode x + 1', async () => {
	const ex = await s.runCode('x + 1');
	check('runCode x + 1: text 2, the main result', ex.text === '2' &&
		ex.results[0].isMainResult === true && ex.error === undefined &&
		ex.executionCount >= 2, JSON.stringify(ex.toJSON()));
});
await step('runCode print', async () => {
	const seen = [];
	const ex = await s.runCode('print("hello")', { onStdout: (m) => seen.push(m.line) });
	check('runCode print: stdout and onStdout', ex.logs.stdout.join('') === 'hello\n' &&
		seen.join('') === 'hello\n' && ex.results.length === 0, JSON.stringify(ex.toJSON()));
});
await step('runCode streams', async () => {
	// each line reaches onStdout as printed, not at the cell's end
	const seen = [];
	const ex = await s.runCode('import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)',
		{ onStdout: (m) => seen.push({ line: m.line, t: Date.now() }) });
	const end = Date.now();
	check('runCode streams: onStdout gets each line as printed, the first well before the end',
		seen.map((x) => x.line).join('') === '0\n1\n2\n' && seen.length === 3 &&
		seen[0].t + 1500 < end && seen[1].t + 500 < end && !ex.error &&
		ex.logs.stdout.join('') === '0\n1\n2\n',
		JSON.stringify({ seen: seen.map((x) => [x.line, end - x.t]), ex: ex.toJSON() }));
});
await step('runCode stderr', async () => {
	const ex = await s.runCode('import sys; sys.stderr.write("oops\\n")');
	check('runCode stderr: logs.stderr', ex.logs.stderr.join('') === 'oops\n',
		JSON.stringify(ex.toJSON()));
});
await step('runCode 1/0', async () => {
	let cb;
	const ex = await s.runCode('1/0', { onError: (e) => { cb = e; } });
	check('runCode 1/0: execution.error ZeroDivisionError, onError',
		ex.error?.name === 'ZeroDivisionError' && /division by zero/.test(ex.error?.value) &&
		typeof ex.error?.traceback === 'string' && cb?.name === 'ZeroDivisionError',
		JSON.stringify(ex.toJSON()));
});
await step("runCode 'abc'", async () => {
	const ex = await s.runCode("'abc'");
	check("runCode 'abc': text abc (quotes stripped)", ex.text === 'abc',
		JSON.stringify(ex.toJSON()));
});
await step('runCode: state persists', async () => {
	const ex = await s.runCode('x * 10');
	check('runCode x * 10: 10', ex.text === '10', JSON.stringify(ex.toJSON()));
});
await step('runCode timeoutMs: the abandoned cell is interrupted', async () => {
	// the SDK aborts its request at timeoutMs; as E2B's code interpreter, the
	// judge then interrupts the cell, so the next one does not wait behind it
	// (to the session's cell limit, 30 s with judge.ini as shipped)
	let err;
	try {
		await s.runCode('import time\nsleeper = 5\ntime.sleep(1000)', { timeoutMs: 2000 });
	} catch (e) {
		err = e;
	}
	check('runCode timeoutMs 2000 on a cell that sleeps: the SDK throws', !!err, String(err));
	const ex = await s.runCode('x * 10 + sleeper', { timeoutMs: 15000 });
	check('the next runCode answers well before the cell limit, the state kept (x, sleeper)',
		ex.text === '15', JSON.stringify(ex.toJSON()));
});
await step('runCode envs', async () => {
	let ex = await s.runCode("import os, subprocess\n(os.environ['GREETING'], subprocess.run(['sh', '-c', 'echo $GREETING'], capture_output=True, text=True).stdout)",
		{ envs: { GREETING: 'hi there' } });
	check('runCode envs: the cell and its child see them', ex.text === "('hi there', 'hi there\\n')",
		JSON.stringify(ex.toJSON()));
	ex = await s.runCode("os.environ.get('GREETING')");
	check('runCode envs: gone at the next cell', ex.results.length === 0 && !ex.error,
		JSON.stringify(ex.toJSON()));
});
await step('create with envs', async () => {
	const s2 = await Sandbox.create({ timeoutMs: 60000, envs: { SANDBOX_WIDE: 'everywhere' } });
	try {
		const ex = await s2.runCode("import os, subprocess\n(os.environ['SANDBOX_WIDE'], subprocess.run(['sh', '-c', 'echo $SANDBOX_WIDE'], capture_output=True, text=True).stdout)");
		check('create with envs: every cell and its children see them',
			ex.text === "('everywhere', 'everywhere\\n')", JSON.stringify(ex.toJSON()));
	} finally {
		await s2.kill();
	}
});
// rich results: objects with IPython's _repr_*_ methods (the sandbox's Python has
// no matplotlib here; tests/integration/drivers.sh checks the figures)
const RICH = `import struct, zlib
def _chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
class Pic:
    def _repr_png_(self):
        rows = b''.join(b'\\x00' + bytes([0, 128, 255] * 8) for _ in range(8))
        return (b'\\x89PNG\\r\\n\\x1a\\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', 8, 8, 8, 2, 0, 0, 0))
                + _chunk(b'IDAT', zlib.compress(rows)) + _chunk(b'IEND', b''))
    def __repr__(self):
        return 'a picture'
class Table:
    def _repr_html_(self):
        return '<table><tr><td>1</td></tr></table>'
    def _repr_markdown_(self):
        return '| a |'
    def _repr_json_(self):
        return {'rows': [1, 2]}
`;
await step('rich results', async () => {
	await s.runCode(RICH);
	let ex = await s.runCode('Pic()');
	const r = ex.results[0];
	const png = Buffer.from(r?.png ?? '', 'base64');
	check('runCode Pic(): results[0].png is a real PNG, the main result, text its repr',
		ex.results.length === 1 && png.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')) &&
		png.length > 50 && r.isMainResult === true && ex.text === 'a picture' &&
		r.formats().includes('png'), JSON.stringify(ex.toJSON()).slice(0, 600));
	const seen = [];
	ex = await s.runCode('display(Table())\nprint("after")\nTable()', { onResult: (x) => seen.push(x) });
	check('runCode display(Table()) then Table(): html, markdown, json; one not main, one main',
		ex.results.length === 2 && ex.results[0].isMainResult === false &&
		ex.results[1].isMainResult === true && ex.results[0].html === '<table><tr><td>1</td></tr></table>' &&
		ex.results[1].markdown === '| a |' && ex.results[1].json?.rows?.[1] === 2 &&
		ex.logs.stdout.join('') === 'after\n' && seen.length === 2 && seen[0].html === ex.results[0].html,
		JSON.stringify(ex.toJSON()).slice(0, 600));
});
await step('contexts', async () => {
	const ctx = await s.createCodeContext({ cwd: '/home/user' });
	check('createCodeContext: python in /home/user', ctx.language === 'python' &&
		ctx.cwd === '/home/user' && typeof ctx.id === 'string', JSON.stringify(ctx));
	let ex = await s.runCode('y = 5\ny', { context: ctx });
	check('runCode in a context: 5', ex.text === '5', JSON.stringify(ex.toJSON()));
	ex = await s.runCode("'y' in dir()");
	check('the default context does not see it', ex.text === 'False', JSON.stringify(ex.toJSON()));
	const list = await s.listCodeContexts();
	check('listCodeContexts: holds it', list.some((c) => c.id === ctx.id), JSON.stringify(list));
	await s.restartCodeContext(ctx);
	ex = await s.runCode("'y' in dir()", { context: ctx });
	check('restartCodeContext: its state is gone', ex.text === 'False', JSON.stringify(ex.toJSON()));
	await s.removeCodeContext(ctx.id);
	let err;
	try {
		await s.runCode('1', { context: ctx });
	} catch (e) {
		err = e;
	}
	check('removeCodeContext: a run in it is NotFoundError', err instanceof NotFoundError,
		`${err?.name}: ${err?.message}`);
	const js = await s.createCodeContext({ language: 'js' });
	ex = await s.runCode('const a = 40; a + 2', { context: js });
	check('a js context: 42', js.language === 'javascript' && ex.text === '42',
		JSON.stringify([js, ex.toJSON()]));
});
await step('runCode language', async () => {
	let ex = await s.runCode('const b = 2; b + 40', { language: 'js' });
	check("runCode language 'js': 42, in a javascript context made for it", ex.text === '42',
		JSON.stringify(ex.toJSON()));
	ex = await s.runCode('b', { language: 'javascript' });
	check("runCode language 'javascript': the same context (b is 2)", ex.text === '2',
		JSON.stringify(ex.toJSON()));
	ex = await s.runCode('x', { language: 'python' });
	check("runCode language 'python': the default context (x is 1)", ex.text === '1',
		JSON.stringify(ex.toJSON()));
});
await step('rich results: a js context', async () => {
	// node_driver.js's display protocol (docs/sessions.md#rich-results)
	const got = [];
	let ex = await s.runCode("display.html('<b>hi</b>');\n" +
		"({ _repr_markdown_() { return '**md**' }, _repr_json_() { return { a: [1, 2] } } })",
		{ language: 'js', onResult: (r) => got.push(r) });
	check('js rich results: display.html, then a value with _repr_markdown_ and _repr_json_',
		ex.results.length === 2 && ex.results[0].html === '<b>hi</b>' &&
		ex.results[0].isMainResult === false && ex.results[1].isMainResult === true &&
		ex.results[1].markdown === '**md**' && ex.results[1].json?.a?.[1] === 2 &&
		typeof ex.text === 'string' && got.length === 2, JSON.stringify(ex.toJSON()));
	ex = await s.runCode("({ [Symbol.for('Jupyter.display')]() { return { 'image/png': " +
		"Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), 'image/svg+xml': '<svg/>' } } })",
		{ language: 'js' });
	const png = Buffer.from(ex.results[0]?.png ?? '', 'base64');
	check("js rich results: Symbol.for('Jupyter.display') gives png (base64) and svg",
		png.length === 8 && png[1] === 80 && ex.results[0].svg === '<svg/>',
		JSON.stringify(ex.toJSON()));
	ex = await s.runCode('6 * 7', { language: 'js' });
	check('js rich results: a plain value is still text 42', ex.text === '42' &&
		ex.results.length === 1 && ex.results[0].png === undefined, JSON.stringify(ex.toJSON()));
});
await step('files', async () => {
	const w = await s.files.write('/home/user/hello.txt', 'hello world');
	check('files.write: the written file', w.path === '/home/user/hello.txt' &&
		w.name === 'hello.txt' && w.type === 'file', JSON.stringify(w));
	check('files.read: its text', (await s.files.read('/home/user/hello.txt')) === 'hello world');
	const bytes = await s.files.read('hello.txt', { format: 'bytes' });
	check('files.read bytes, a relative path', bytes instanceof Uint8Array &&
		Buffer.from(bytes).toString() === 'hello world', String(bytes));
	const r = await s.files.write('rel/dir/a.txt', 'A');
	check('files.write relative, folders made', r.path === '/home/user/rel/dir/a.txt' &&
		(await s.files.read('rel/dir/a.txt')) === 'A', JSON.stringify(r));
	await s.files.write('/home/user/empty.txt', '');
	check('files.read of an empty file', (await s.files.read('/home/user/empty.txt')) === '');
	const ex = await s.runCode("open('hello.txt').read()");
	check('code sees the file', ex.text === 'hello world', JSON.stringify(ex.toJSON()));
	let err;
	try {
		await s.files.read('/home/user/nope.txt');
	} catch (e) {
		err = e;
	}
	check('files.read of a missing file: FileNotFoundError', err?.name === 'FileNotFoundError',
		`${err?.name}: ${err?.message}`);
	err = undefined;
	try {
		await s.files.read('/etc/passwd');
	} catch (e) {
		err = e;
	}
	check('files.read outside /home/user: refused', err instanceof SandboxError,
		`${err?.name}: ${err?.message}`);
});
await step('home', async () => {
	// /home/user is the home and working directory inside, the folder the files API sees
	let ex = await s.runCode("import os\nopen('/home/user/home.txt', 'w').write('from code')\n" +
		"' '.join([os.getcwd(), os.path.expanduser('~'), os.environ['HOME']])");
	check('home: python sees /home/user as cwd, ~ and HOME',
		ex.text === '/home/user /home/user /home/user', JSON.stringify(ex.toJSON()));
	check('home: files.read gets what the code wrote at /home/user',
		(await s.files.read('/home/user/home.txt')) === 'from code');
	await s.files.write('/home/user/sdk.txt', 'from the sdk');
	ex = await s.runCode("open('/home/user/sdk.txt').read()");
	check('home: the code reads at /home/user what files.write wrote', ex.text === 'from the sdk',
		JSON.stringify(ex.toJSON()));
	ex = await s.runCode("[process.cwd(), require('os').homedir()].join(' ')", { language: 'js' });
	check('home: a js context sees /home/user as process.cwd() and its home',
		ex.text === '/home/user /home/user', JSON.stringify(ex.toJSON()));
});
// create's metadata: kept with the sandbox, shown by getInfo and list, and
// list's query.metadata filters by it (the SDK encodes it twice: keys and
// values, then the k=v&k=v string)
await step('metadata', async () => {
	const meta = { suite: 'compat', 'odd key': 'a&b=c%d é' };
	const t = await Sandbox.create({ metadata: meta });
	const info = await t.getInfo();
	check('metadata: getInfo shows it back', JSON.stringify(info.metadata) === JSON.stringify(meta),
		JSON.stringify(info.metadata));
	const listed = (await Sandbox.list().nextItems()).find((x) => x.sandboxId === t.sandboxId);
	check('metadata: list shows it', JSON.stringify(listed?.metadata) === JSON.stringify(meta),
		JSON.stringify(listed));
	const ids = async (q) => (await Sandbox.list({ query: { metadata: q } }).nextItems()).map((x) => x.sandboxId);
	const hit = await ids({ suite: 'compat', 'odd key': 'a&b=c%d é' });
	const miss = await ids({ suite: 'other' });
	check('metadata: list by metadata finds it (and not the sandbox without it)',
		hit.includes(t.sandboxId) && !hit.includes(id), JSON.stringify(hit));
	check('metadata: list by other metadata leaves it out', !miss.includes(t.sandboxId), JSON.stringify(miss));
	check('metadata: a sandbox without any shows {}', JSON.stringify((await s.getInfo()).metadata) === '{}');
	let err;
	try {
		await Sandbox.create({ metadata: { big: 'x'.repeat(2000) } });
	} catch (e) {
		err = e;
	}
	check('metadata: a value over 1024 bytes refused (400)', err instanceof SandboxError &&
		/1024/.test(err.message), `${err?.name}: ${err?.message}`);
	await t.kill();
});
// the sandbox's own access token: envd traffic carries it, and signed
// download and upload URLs work without any header
await step('signed URLs', async () => {
	await s.files.write('/home/user/signed.txt', 'signed bytes');
	const tok = s.envdAccessToken;
	check('access token: its own secret, not the API key', typeof tok === 'string' &&
		/^sbt_[0-9a-f]{48}$/.test(tok) && tok !== process.env.E2B_API_KEY, String(tok));
	const info = JSON.stringify(await s.getInfo()) + JSON.stringify(await Sandbox.list().nextItems()) +
		JSON.stringify(await v1(`/v1/sessions/${id}`, process.env.E2B_API_KEY)) +
		JSON.stringify(await v1('/v1/sessions', process.env.E2B_API_KEY));
	check('access token: not in getInfo, list nor /v1/sessions', !info.includes(tok));
	const dl = await s.downloadUrl('/home/user/signed.txt');
	const r1 = await fetch(dl);
	check('downloadUrl: a plain GET, no header: the bytes', r1.status === 200 &&
		(await r1.text()) === 'signed bytes' && new URL(dl).searchParams.get('signature')?.startsWith('v1_'), `${r1.status} ${dl}`);
	const dle = await s.downloadUrl('/home/user/signed.txt', { useSignatureExpiration: 60 });
	const r2 = await fetch(dle);
	check('downloadUrl with an expiration: the bytes', r2.status === 200 &&
		(await r2.text()) === 'signed bytes' && new URL(dle).searchParams.has('signature_expiration'), `${r2.status}`);
	const up = await s.uploadUrl('/home/user/up/signed-up.txt', { useSignatureExpiration: 60 });
	const fd = new FormData();
	fd.append('file', new Blob(['uploaded']), 'signed-up.txt');
	const r3 = await fetch(up, { method: 'POST', body: fd });
	const r3b = await r3.text();
	check('uploadUrl: a plain multipart POST writes the file', r3.status === 200 &&
		JSON.parse(r3b)[0]?.path === '/home/user/up/signed-up.txt' &&
		(await s.files.read('/home/user/up/signed-up.txt')) === 'uploaded', `${r3.status} ${r3b}`);
	const bad = new URL(dl);
	const sig = bad.searchParams.get('signature');
	bad.searchParams.set('signature', sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A'));
	const r4 = await fetch(bad);
	check('downloadUrl with a wrong signature: 401', r4.status === 401, `${r4.status}`);
	const other = new URL(dl);
	other.searchParams.set('path', '/home/user/hello.txt');
	const r5 = await fetch(other);
	check('a signature for another path: 401', r5.status === 401, `${r5.status}`);
	// an expired one, made as the SDK makes them
	const { createHash } = await import('node:crypto');
	const exp = Math.floor(Date.now() / 1000) - 10;
	const p = '/home/user/signed.txt';
	const old = 'v1_' + createHash('sha256').update(`${p}:read::${tok}:${exp}`).digest('base64').replace(/=+$/, '');
	const ex = new URL(dl);
	ex.searchParams.set('signature', old);
	ex.searchParams.set('signature_expiration', String(exp));
	const r6 = await fetch(ex);
	check('an expired signature: 401', r6.status === 401 && /expired/.test(await r6.text()), `${r6.status}`);
	const ok = new URL(dl);
	ok.searchParams.set('signature', 'v1_' + createHash('sha256').update(`${p}:read::${tok}:${exp + 3600}`).digest('base64').replace(/=+$/, ''));
	ok.searchParams.set('signature_expiration', String(exp + 3600));
	const r7 = await fetch(ok);
	check('a signature made here as the SDK makes it: the bytes', r7.status === 200 &&
		(await r7.text()) === 'signed bytes', `${r7.status}`);
});
// files.watchDir: the WatchDir stream; events of the SDK's writes, of commands
// and of cells, names relative to the folder
await step('watchDir', async () => {
	// a sandbox of its own: its commands' pids are not the later checks' (a
	// process stream is named by session and pid, and pids start again after
	// a resume, which s goes through)
	const s = await Sandbox.create();
	await s.files.makeDir('/home/user/watched/sub');
	await s.files.write('/home/user/watched/old.txt', 'o');
	const evs = [];
	let exited = false;
	const h = await s.files.watchDir('/home/user/watched', (e) => evs.push(`${e.type} ${e.name}`),
		{ recursive: true, timeoutMs: 60000, onExit: () => { exited = true; } });
	const flat = [];
	const h2 = await s.files.watchDir('watched', (e) => flat.push(`${e.type} ${e.name}`));
	// a watcher polls: what is undone before its next look (150 ms) is not
	// seen, so each change is given time to be seen (docs/e2b.md)
	const settle = () => new Promise((r) => setTimeout(r, 400));
	await s.files.write('/home/user/watched/sdk.txt', 'by the sdk');
	await settle();
	await s.commands.run('echo by a command > watched/cmd.txt; chmod 600 watched/old.txt');
	await settle();
	await s.runCode("open('watched/sub/cell.txt', 'w').write('by a cell')");
	await settle();
	await s.files.rename('/home/user/watched/sdk.txt', '/home/user/watched/moved.txt');
	await settle();
	await s.files.remove('/home/user/watched/cmd.txt');
	const want = ['create sdk.txt', 'write sdk.txt', 'create cmd.txt', 'write cmd.txt', 'chmod old.txt',
		'create sub/cell.txt', 'write sub/cell.txt', 'rename sdk.txt', 'create moved.txt', 'remove cmd.txt'];
	for (let i = 0; i < 40 && !want.every((w) => evs.includes(w)); i++) await new Promise((r) => setTimeout(r, 100));
	check('watchDir recursive: create, write, chmod, rename, remove from the SDK, a command and a cell',
		want.every((w) => evs.includes(w)), JSON.stringify(evs));
	check('watchDir: each event once, none of what was there before',
		new Set(evs).size === evs.length && !evs.some((e) => e.endsWith(' old.txt') && !e.startsWith('chmod')),
		JSON.stringify(evs));
	check('watchDir not recursive: the folder\'s own entries only', flat.includes('create moved.txt') &&
		!flat.some((e) => e.includes('sub/')), JSON.stringify(flat));
	await h.stop();
	await h2.stop();
	const n = evs.length;
	await s.files.write('/home/user/watched/after.txt', 'x');
	await new Promise((r) => setTimeout(r, 500));
	check('watchDir: stop() ends the events', evs.length === n, JSON.stringify(evs.slice(n)));
	let err;
	try {
		await s.files.watchDir('/home/user/no-such-folder', () => {});
	} catch (e) {
		err = e;
	}
	check('watchDir of a missing folder: not found', /NotFound/.test(err?.name), `${err?.name}: ${err?.message}`);
	err = undefined;
	try {
		await s.files.watchDir('/etc', () => {});
	} catch (e) {
		err = e;
	}
	check('watchDir outside /home/user: refused', err instanceof SandboxError, `${err?.name}: ${err?.message}`);
	let ended = false;
	const short = await s.files.watchDir('watched', () => {}, { timeoutMs: 1000, onExit: () => { ended = true; } });
	for (let i = 0; i < 50 && !ended; i++) await new Promise((r) => setTimeout(r, 100));
	check('watchDir with timeoutMs 1000: ends (onExit) by itself', ended);
	await short.stop();
	await s.kill();
});
// a WatchDir whose client left ends on the worker too (noticed at the
// stream's next keep-alive, 15 s): the session's 8 watcher places come back
// long before the watchers' own 10 minutes
await step('watchDir: a stopped watcher frees its place', async () => {
	const w = await Sandbox.create();
	await w.files.makeDir('/home/user/w');
	const opened = [];
	for (let i = 0; i < 8; i++) opened.push(await w.files.watchDir('w', () => {}, { timeoutMs: 600000 }));
	for (const h of opened) await h.stop();
	let ninth, refused = 0;
	for (let t = 0; t < 45 && !ninth; t++) {
		try {
			ninth = await w.files.watchDir('w', () => {}, { timeoutMs: 600000 });
		} catch (e) {
			refused++;
			await new Promise((r) => setTimeout(r, 1000));
		}
	}
	check('watchDir: 8 watchers stopped, a 9th opens within 45 s', !!ninth,
		`refused ${refused} times`);
	await ninth?.stop();
	await w.kill();
});
// several files in one multipart request (one part each, its filename the path)
await step('files.write of several files', async () => {
	const big = new Uint8Array(300000).map((_, i) => i % 251);
	const ws = await s.files.write([
		{ path: '/home/user/multi/m1.txt', data: 'one' },
		{ path: 'multi/deep/m2.bin', data: new Uint8Array([50, 0, 51]) },
		{ path: '~/multi/m3.bin', data: big },
	]);
	check('files.write [3 files]: one entry each, in order, paths resolved',
		JSON.stringify(ws.map((w) => [w.name, w.type, w.path])) === JSON.stringify([
			['m1.txt', 'file', '/home/user/multi/m1.txt'],
			['m2.bin', 'file', '/home/user/multi/deep/m2.bin'],
			['m3.bin', 'file', '/home/user/multi/m3.bin']]), JSON.stringify(ws));
	const b2 = await s.files.read('multi/deep/m2.bin', { format: 'bytes' });
	const b3 = await s.files.read('multi/m3.bin', { format: 'bytes' });
	check('files.write [3 files]: each file holds its bytes',
		(await s.files.read('multi/m1.txt')) === 'one' && Buffer.from(b2).equals(Buffer.from([50, 0, 51])) &&
		Buffer.from(b3).equals(Buffer.from(big)), `${b2} ${b3.length}`);
	let err;
	try {
		await s.files.write([{ path: '/home/user/multi/ok.txt', data: 'x' }, { path: '/etc/bad', data: 'y' }]);
	} catch (e) {
		err = e;
	}
	check('files.write [.., a path outside the home]: refused, nothing written',
		err instanceof SandboxError && /\/etc\/bad/.test(err.message) &&
		(await s.files.exists('/home/user/multi/ok.txt')) === false, `${err?.name}: ${err?.message}`);
	const one = await s.files.write([{ path: 'multi/single.txt', data: 'solo' }]);
	check('files.write [1 file]: an array of one', Array.isArray(one) && one.length === 1 &&
		one[0].path === '/home/user/multi/single.txt', JSON.stringify(one));
	// ListDir with depth: the entries of subfolders too, paths as envd gives them
	const deep = await s.files.list('/home/user/multi', { depth: 2 });
	check('files.list depth 2: subfolders\' entries, by path',
		JSON.stringify(deep.map((e) => [e.name, e.path, e.type])) === JSON.stringify([
			['deep', '/home/user/multi/deep', 'dir'], ['m2.bin', '/home/user/multi/deep/m2.bin', 'file'],
			['m1.txt', '/home/user/multi/m1.txt', 'file'], ['m3.bin', '/home/user/multi/m3.bin', 'file'],
			['single.txt', '/home/user/multi/single.txt', 'file']]), JSON.stringify(deep.map((e) => e.path)));
	const flat = await s.files.list('/home/user/multi');
	check('files.list depth 1: its own entries only', flat.length === 4 &&
		!flat.some((e) => e.path.includes('/deep/')), JSON.stringify(flat.map((e) => e.path)));
});
// ---- files: envd's filesystem.Filesystem (Connect unary calls) ----
await step('files: list, exists, getInfo, makeDir, rename, remove', async () => {
	await s.files.write('/home/user/fs/a.txt', 'hello');
	await s.files.write('/home/user/fs/sub/b.txt', 'b');
	const list = await s.files.list('/home/user/fs');
	check('files.list: its entries, typed, with paths and sizes',
		JSON.stringify(list.map((e) => [e.name, e.type, e.path, e.size])) ===
		JSON.stringify([['a.txt', 'file', '/home/user/fs/a.txt', 5], ['sub', 'dir', '/home/user/fs/sub', list[1]?.size]]) &&
		list[0].modifiedTime instanceof Date && !isNaN(list[0].modifiedTime) &&
		list[0].permissions === '-rw-r--r--', JSON.stringify(list));
	check('files.exists: a file, a folder, a missing one',
		(await s.files.exists('/home/user/fs/a.txt')) === true && (await s.files.exists('fs/sub')) === true &&
		(await s.files.exists('/home/user/fs/none')) === false);
	const info = await s.files.getInfo('~/fs/a.txt');
	check('files.getInfo: name, type, path, size, mode', info.name === 'a.txt' && info.type === 'file' &&
		info.path === '/home/user/fs/a.txt' && info.size === 5 && info.mode === 0o644, JSON.stringify(info));
	let err;
	try {
		await s.files.getInfo('/home/user/fs/none');
	} catch (e) {
		err = e;
	}
	check('files.getInfo of a missing path: FileNotFoundError', err?.name === 'FileNotFoundError',
		`${err?.name}: ${err?.message}`);
	check('files.makeDir: true, then false (it exists)', (await s.files.makeDir('/home/user/fs/new/deep')) === true &&
		(await s.files.makeDir('/home/user/fs/new/deep')) === false);
	check('files.makeDir made its parents', (await s.files.getInfo('/home/user/fs/new')).type === 'dir');
	err = undefined;
	try {
		await s.files.makeDir('/home/user/fs/a.txt');
	} catch (e) {
		err = e;
	}
	check('files.makeDir where a file stands: an invalid argument', err?.name === 'InvalidArgumentError',
		`${err?.name}: ${err?.message}`);
	const moved = await s.files.rename('/home/user/fs/a.txt', '/home/user/fs/new/a2.txt');
	check('files.rename: the entry at its new path', moved.name === 'a2.txt' &&
		moved.path === '/home/user/fs/new/a2.txt' && moved.type === 'file', JSON.stringify(moved));
	check('files.rename: the content moved with it', (await s.files.read('/home/user/fs/new/a2.txt')) === 'hello' &&
		(await s.files.exists('/home/user/fs/a.txt')) === false);
	err = undefined;
	try {
		await s.files.rename('/home/user/fs/none', '/home/user/fs/x');
	} catch (e) {
		err = e;
	}
	check('files.rename of a missing source: FileNotFoundError', err?.name === 'FileNotFoundError',
		`${err?.name}: ${err?.message}`);
	await s.files.remove('/home/user/fs/sub');
	check('files.remove of a folder: gone with what it held', (await s.files.exists('/home/user/fs/sub')) === false);
	await s.files.remove('/home/user/fs/none');
	check('files.remove of a missing path: no error (envd removes all)', true);
	const code = await s.runCode('import os; sorted(os.listdir("fs/new"))');
	check('code sees the folders and moves', code.text === "['a2.txt', 'deep']", code.text);
	err = undefined;
	try {
		await s.files.list('/etc');
	} catch (e) {
		err = e;
	}
	check('files.list outside /home/user: refused', err instanceof SandboxError, `${err?.name}: ${err?.message}`);
});
await step('connect', async () => {
	const s2 = await Sandbox.connect(id);
	const ex = await s2.runCode('x + 41');
	check('connect: the same sandbox, its state', s2.sandboxId === id && ex.text === '42',
		JSON.stringify(ex.toJSON()));
});
await step('getMetrics', async () => {
	// a 3 MiB file in the folder and a busy cell; the worker reads usage every second
	const ex = await s.runCode("open('ballast', 'wb').write(b'x' * (3 << 20))\n" +
		"import time\nt = time.time()\nwhile time.time() - t < 1.5: pass");
	check('getMetrics: the cell that fills it ran', !ex.error, JSON.stringify(ex.toJSON()));
	const info = await s.getInfo();
	let m = [];
	for (let i = 0; i < 20; i++) {
		m = await s.getMetrics();
		if (m.length && m[0].diskUsed >= 3 << 20) break;
		await new Promise((r) => setTimeout(r, 500));
	}
	const x = m[0] ?? {};
	check('getMetrics: one reading, its memory and folder as the sandbox is limited',
		m.length === 1 && x.timestamp instanceof Date && !isNaN(x.timestamp) &&
		x.memTotal === info.memoryMB * 1048576 && x.memUsed > 0 && x.memUsed <= x.memTotal &&
		x.diskTotal % 1048576 === 0 && x.diskUsed >= 3 << 20 &&
		x.diskUsed <= x.diskTotal && x.cpuCount >= 1 && typeof x.cpuUsedPct === 'number' &&
		x.cpuUsedPct >= 0, JSON.stringify(m) + ' ' + JSON.stringify(info));
	const later = await s.getMetrics({ start: new Date(Date.now() + 3600e3) });
	check('getMetrics: none after the window\'s start', later.length === 0, JSON.stringify(later));
});
await step('snapshots', async () => {
	await s.runCode('open("snap.txt", "w").write("from the snapshot")');
	const snap = await s.createSnapshot({ name: 'sdk-snap' });
	check('createSnapshot: an id and its name', typeof snap.snapshotId === 'string' &&
		snap.snapshotId.length === 36 && snap.names?.[0] === 'sdk-snap', JSON.stringify(snap));
	const mine = await s.listSnapshots().nextItems();
	check('listSnapshots of the sandbox: holds it',
		mine.some((x) => x.snapshotId === snap.snapshotId && x.names[0] === 'sdk-snap'), JSON.stringify(mine));
	const byName = await Sandbox.listSnapshots({ name: 'no-such-name' }).nextItems();
	check('listSnapshots by another name: none', byName.length === 0, JSON.stringify(byName));
	const others = await Sandbox.listSnapshots({ apiKey: process.env.OTHER_KEY }).nextItems();
	check('listSnapshots: another key sees none of it',
		!others.some((x) => x.snapshotId === snap.snapshotId), JSON.stringify(others));
	const child = await Sandbox.create(snap.snapshotId, { timeoutMs: 60000 });
	const r = await child.runCode('print(open("snap.txt").read())');
	check('Sandbox.create(snapshotId): the snapshot\'s file is there',
		r.logs.stdout.join('') === 'from the snapshot\n', JSON.stringify(r.logs));
	check('Sandbox.create(snapshotId): a sandbox of its own', child.sandboxId !== id, child.sandboxId);
	await child.kill();
	check('deleteSnapshot: another key cannot (false)',
		(await Sandbox.deleteSnapshot(snap.snapshotId, { apiKey: process.env.OTHER_KEY })) === false);
	check('deleteSnapshot: true', (await Sandbox.deleteSnapshot(snap.snapshotId)) === true);
	check('deleteSnapshot again: false', (await Sandbox.deleteSnapshot(snap.snapshotId)) === false);
	const after = await Sandbox.listSnapshots().nextItems();
	check('listSnapshots after the delete: gone', !after.some((x) => x.snapshotId === snap.snapshotId),
		JSON.stringify(after));
	let err;
	try {
		await Sandbox.create(snap.snapshotId, { timeoutMs: 60000 });
	} catch (e) {
		err = e;
	}
	check('Sandbox.create(a deleted snapshot): rejects', err !== undefined, `${err?.name}`);
});
await step('pause and connect', async () => {
	await s.runCode('open("kept.txt", "w").write("kept")');
	check('pause: true', (await s.pause()) === true);
	const info = await Sandbox.getInfo(id);
	check('getInfo while paused: state paused', info.state === 'paused', JSON.stringify(info));
	check('pause again: false (already paused)', (await Sandbox.pause(id)) === false);
	const again = await Sandbox.connect(id);
	check('connect: the same sandbox', again.sandboxId === id, again.sandboxId);
	const r = await again.runCode('print(open("kept.txt").read())');
	check('connect resumed it: the file is back', r.logs.stdout.join('') === 'kept\n', JSON.stringify(r.logs));
	check('isRunning after connect: true', (await s.isRunning()) === true);
});
await step('runCode on a paused sandbox', async () => {
	check('pause once more: true', (await s.pause()) === true);
	// the cell's call resumes the sandbox, then its output streams as usual
	const seen = [];
	const ex = await s.runCode('print(open("kept.txt").read())', { onStdout: (m) => seen.push(m.line) });
	check('runCode on a paused sandbox: resumed, its output through onStdout',
		seen.join('') === 'kept\n' && !ex.error && (await s.isRunning()) === true,
		JSON.stringify([seen, ex.toJSON()]));
});
await step('lifecycle onTimeout pause', async () => {
	const plain = await Sandbox.getInfo(id);
	check('getInfo: lifecycle onTimeout kill by default', plain.lifecycle?.onTimeout === 'kill',
		JSON.stringify(plain.lifecycle));
	const p = await Sandbox.create({ timeoutMs: 2000, lifecycle: { onTimeout: 'pause' } });
	await p.runCode('open("idle.txt", "w").write("idle")');
	let info;
	for (let i = 0; i < 120; i++) {
		info = await Sandbox.getInfo(p.sandboxId);
		if (info.state === 'paused') break;
		await new Promise((r) => setTimeout(r, 500));
	}
	check('lifecycle onTimeout pause: idle past its timeout, it is paused', info.state === 'paused',
		JSON.stringify(info));
	check('getInfo: lifecycle onTimeout pause, autoResume', info.lifecycle?.onTimeout === 'pause' &&
		info.lifecycle?.autoResume === true, JSON.stringify(info.lifecycle));
	const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems();
	check('list state paused: holds it, not the running one',
		paused.some((x) => x.sandboxId === p.sandboxId && x.state === 'paused') &&
		!paused.some((x) => x.sandboxId === id), JSON.stringify(paused.map((x) => [x.sandboxId, x.state])));
	const running = await Sandbox.list({ query: { state: ['running'] } }).nextItems();
	check('list state running: the running one, not it',
		!running.some((x) => x.sandboxId === p.sandboxId) && running.some((x) => x.sandboxId === id),
		JSON.stringify(running.map((x) => [x.sandboxId, x.state])));
	const all = await Sandbox.list().nextItems();
	check('list: both states by default', all.some((x) => x.sandboxId === p.sandboxId) &&
		all.some((x) => x.sandboxId === id), JSON.stringify(all.map((x) => [x.sandboxId, x.state])));
	const back = await Sandbox.connect(p.sandboxId, { timeoutMs: 600000 });
	const again = await Sandbox.getInfo(p.sandboxId);
	check('connect with timeoutMs 600 s: running, endAt about 600 s away', again.state === 'running' &&
		again.endAt - Date.now() > 500000 && again.endAt - Date.now() <= 601000,
		`${again.state} ${again.endAt.toISOString()}`);
	const r = await back.runCode('print(open("idle.txt").read())');
	check('connect after the pause: the file is back', r.logs.stdout.join('') === 'idle\n',
		JSON.stringify(r.logs));
	check('kill the paused-and-resumed sandbox: true', (await Sandbox.kill(p.sandboxId)) === true);
});
// ---- commands: envd's process.Process (Connect streams) ----
await step('commands.run', async () => {
	const out = [];
	const r = await s.commands.run('echo hi; echo there >&2', { onStdout: (d) => out.push(d) });
	check('commands.run: stdout, stderr, exit code 0',
		r.stdout === 'hi\n' && r.stderr === 'there\n' && r.exitCode === 0, JSON.stringify(r));
	check('commands.run: onStdout as printed', out.join('') === 'hi\n', JSON.stringify(out));
});
await step('home: a command', async () => {
	const r = await s.commands.run('echo "$HOME"; pwd; cat /home/user/home.txt');
	check('home: a command sees $HOME and its cwd /home/user',
		r.stdout === '/home/user\n/home/user\nfrom code', JSON.stringify(r));
});
await step('commands.run: silent past a keep-alive', async () => {
	// the relay sends a keep-alive envelope after 15 s without output
	const r = await s.commands.run('sleep 16; echo after');
	check('commands.run silent for 16 s: keep-alives in between, then its output',
		r.stdout === 'after\n' && r.exitCode === 0, JSON.stringify(r));
});
await step('commands.run: a failing command', async () => {
	let err;
	try {
		await s.commands.run('echo err >&2; exit 3');
	} catch (e) {
		err = e;
	}
	check('commands.run exit 3: CommandExitError with exitCode, stderr and error',
		err instanceof CommandExitError && err.exitCode === 3 && err.stderr === 'err\n' &&
		err.error === 'exit status 3', `${err?.name} ${err?.exitCode} ${JSON.stringify(err?.stderr)} ${err?.error}`);
});
await step('commands.run: envs, cwd, the sandbox\'s marks', async () => {
	await s.files.write('/home/user/cmdsub/x.txt', 'x');
	const r = await s.commands.run('echo "$FOO $E2B_SANDBOX $E2B_SANDBOX_ID"; ls',
		{ envs: { FOO: 'bar' }, cwd: '/home/user/cmdsub' });
	check('commands.run: envs and cwd', r.stdout === `bar true ${id}\nx.txt\n`, JSON.stringify(r.stdout));
	let err;
	try {
		await s.commands.run('true', { cwd: '/etc' });
	} catch (e) {
		err = e;
	}
	check('commands.run: a cwd outside the home is refused', err instanceof SandboxError &&
		/cwd/.test(err.message), `${err?.name}: ${err?.message}`);
});
await step('commands: background, list, kill', async () => {
	const h = await s.commands.run('sleep 30', { background: true });
	check('background: a pid', typeof h.pid === 'number' && h.pid > 0, h.pid);
	const list = await s.commands.list();
	check('commands.list: holds it, with its command', list.some((p) => p.pid === h.pid &&
		p.cmd === '/bin/bash' && p.args.includes('sleep 30')), JSON.stringify(list));
	check('handle.kill: true', (await h.kill()) === true);
	let err;
	try {
		await h.wait();
	} catch (e) {
		err = e;
	}
	check('wait after kill: CommandExitError, exit -1, signal: killed',
		err instanceof CommandExitError && err.exitCode === -1 && err.error === 'signal: killed',
		`${err?.name} ${err?.exitCode} ${err?.error}`);
	const after = await s.commands.list();
	check('commands.list: not after it ended', !after.some((p) => p.pid === h.pid), JSON.stringify(after));
	check('commands.kill of no such pid: false', (await s.commands.kill(987654)) === false);
});
await step('commands: stdin', async () => {
	const h = await s.commands.run('cat; echo done', { background: true, stdin: true });
	await s.commands.sendStdin(h.pid, 'hello ');
	await s.commands.sendStdin(h.pid, 'stdin\n');
	await s.commands.closeStdin(h.pid);
	const r = await h.wait();
	check('sendStdin then closeStdin: cat echoes it and ends', r.stdout === 'hello stdin\ndone\n',
		JSON.stringify(r.stdout));
});
await step('commands.connect', async () => {
	const h = await s.commands.run('sleep 1; echo later; exit 4', { background: true });
	const c = await s.commands.connect(h.pid);
	let err;
	try {
		await c.wait();
	} catch (e) {
		err = e;
	}
	check('connect to a running command: its output and end', err instanceof CommandExitError &&
		err.exitCode === 4 && err.stdout.includes('later'), `${err?.name} ${err?.exitCode} ${JSON.stringify(err?.stdout)}`);
	let nf;
	try {
		await s.commands.connect(987654);
	} catch (e) {
		nf = e;
	}
	check('connect to no such pid: NotFoundError', nf instanceof NotFoundError, `${nf?.name}: ${nf?.message}`);
});
await step('commands.run: timeoutMs ends it', async () => {
	const t0 = Date.now();
	let err;
	try {
		await s.commands.run('sleep 20', { timeoutMs: 1500 });
	} catch (e) {
		err = e;
	}
	check('commands.run with timeoutMs 1.5 s: rejects well before 20 s', err && Date.now() - t0 < 15000,
		`${err?.name} after ${Date.now() - t0} ms`);
	// the deadline is the process's lifetime (envd's rule): the judge ends it too
	let left;
	for (let i = 0; i < 50; i++) {
		left = (await s.commands.list()).filter((p) => p.args.includes('sleep 20'));
		if (!left.length) break;
		await new Promise((res) => setTimeout(res, 200));
	}
	check('commands.run with timeoutMs: the process is ended, not left running', left.length === 0,
		JSON.stringify(left));
});

await step('kill', async () => check('kill: true', (await s.kill()) === true));
await step('isRunning after kill', async () =>
	check('isRunning after kill: false', (await s.isRunning()) === false));
await step('runCode after kill', async () => {
	let err;
	try {
		await s.runCode('1');
	} catch (e) {
		err = e;
	}
	check('runCode after kill: rejects', err instanceof SandboxError, `${err?.name}`);
});
await step('kill again', async () =>
	check('Sandbox.kill after kill: false', (await Sandbox.kill(id)) === false));
await step('getInfo after kill', async () => {
	let err;
	try {
		await Sandbox.getInfo(id);
	} catch (e) {
		err = e;
	}
	check('getInfo after kill: NotFoundError', err instanceof NotFoundError,
		`${err?.name}: ${err?.message}`);
});
// a key whose own cap is open (judge keys egress ID open): the default is open,
// allowInternetAccess false none, network.allowOut an allowlist
await step('network: allowInternetAccess and allowOut', async () => {
	const key = process.env.OPEN_KEY, o = { apiKey: key, timeoutMs: 60000 };
	const made = [];
	try {
		const a = await Sandbox.create(o);
		made.push(a);
		check('network: a default create by a key whose cap is open: allowInternetAccess true',
			(await a.getInfo()).allowInternetAccess === true);
		check('network: its session is open',
			(await v1(`/v1/sessions/${a.sandboxId}`, key)).network?.mode === 'open');
		const b = await Sandbox.create({ ...o, allowInternetAccess: false });
		made.push(b);
		const bi = await b.getInfo();
		check('network: allowInternetAccess false: no internet access',
			bi.allowInternetAccess === false && bi.network === undefined, JSON.stringify(bi));
		const bs = await v1(`/v1/sessions/${b.sandboxId}`, key);
		check('network: allowInternetAccess false: a session with network none',
			bs.network?.mode === 'none', JSON.stringify(bs.network));
		check('network: allowInternetAccess false: code still runs', (await b.runCode('6 * 7')).text === '42');
		const c = await Sandbox.create({ ...o, network: { allowOut: ['api.github.com', '*.example.org:443'], denyOut: ['0.0.0.0/0'] } });
		made.push(c);
		const ci = await c.getInfo();
		check('network: allowOut: getInfo shows it',
			JSON.stringify(ci.network?.allowOut) === '["api.github.com","*.example.org:443"]' &&
			ci.allowInternetAccess === false, JSON.stringify(ci));
		const cs = await v1(`/v1/sessions/${c.sandboxId}`, key);
		check('network: allowOut: an allowlist session',
			JSON.stringify(cs.network) === '{"mode":"allowlist","allow":["api.github.com","*.example.org:443"]}',
			JSON.stringify(cs.network));
	} finally {
		for (const x of made) await x.kill();
	}
	let err;
	try {
		made.push(await Sandbox.create({ ...o, network: { allowOut: ['10.0.0.0/8'], denyOut: ['0.0.0.0/0'] } }));
	} catch (e) {
		err = e;
	}
	check('network: an allowOut CIDR is refused, saying why',
		err instanceof SandboxError && /400.*cannot be mapped/.test(err.message), `${err?.name}: ${err?.message}`);
	err = undefined;
	try {
		made.push(await Sandbox.create({ timeoutMs: 60000, network: { allowOut: ['api.github.com'] } }));
	} catch (e) {
		err = e;
	}
	check('network: allowOut beyond the key\'s cap (judge.ini egress = off): 403 naming the rule',
		err instanceof SandboxError && /403.*judge\.ini \[sessions\] egress = off/.test(err.message),
		`${err?.name}: ${err?.message}`);
	for (const x of made.slice(3)) await x.kill();
});
await step('bad key', async () => {
	let err;
	try {
		await Sandbox.create({ apiKey: 'jk_not_a_key' });
	} catch (e) {
		err = e;
	}
	check('create with a bad key: AuthenticationError', err instanceof AuthenticationError,
		`${err?.name}: ${err?.message}`);
});
