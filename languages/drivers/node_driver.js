// node_driver.js: the Node.js 22 session driver (languages/drivers/PROTOCOL.md).
//
// How it works: one vm context holds the user's globals for the whole session.
// Each cell is parsed with acorn (Node's own copy, reached with
// --expose-internals); top-level let/const/class become var so that they
// persist as properties of the context's global and a cell can be run again
// (a second `let x` in V8's script scope would be a SyntaxError); static
// imports become require() (which loads ES modules too). A cell with
// top-level await then goes through the REPL's own transform
// (internal/repl/await), which wraps it in an async function that hoists its
// declarations and returns the last expression's value. The sync part runs
// with breakOnSigint; SIGINT while a cell awaits ends the wait. Errors thrown
// in timers and unhandled rejections while a cell runs become its error;
// after it they are printed to stderr. The session folder is the working
// directory at start (/home/user in a sandbox); npm installs go to its
// .packages/node (node.ini package_dir), which `require` searches
// before the usual places. Rich results (PROTOCOL.md "results"): the last
// expression's value and each display() call give a MIME bundle, from the
// value's IPython-named _repr_*_ methods, _repr_mimebundle_, or the method
// under Symbol.for('Jupyter.display') (Deno's kernel's convention).
'use strict';
const fs = require('fs');
const path = require('path');
const util = require('util');
const vm = require('vm');
const { createRequire } = require('module');

const RESULT_MAX = 1 << 20; // an inspect() longer than this is cut: the reply is not output
// all of a cell's rich results: one past it is left out and counted in
// "results_dropped" (the reply must stay under the host's 8 MiB)
const RICH_MAX = 4 << 20;

let acorn = null;
let processTopLevelAwait = null;
try {
	acorn = require('internal/deps/acorn/acorn/dist/acorn');
	processTopLevelAwait = require('internal/repl/await').processTopLevelAwait;
} catch {
	// without --expose-internals: cells run as plain scripts (no top-level await)
}

const token = process.env.JUDGE_TOKEN || '';
delete process.env.JUDGE_TOKEN;

// The request stream off fd 0. Node cannot dup(2) a descriptor, so node.ini
// starts the driver through /bin/sh, which moves the stream to fd 3 and puts
// /dev/null on fd 0; the fd comes as the first argument. That fd is not
// close-on-exec (nothing in Node can set it), but children started through
// child_process (libuv) get only the stdio they are given (drivers.sh checks
// it), and fd 0 is /dev/null. Started without the argument, the
// driver opens /proc/self/fd/0 (a new descriptor of the same pipe; EACCES
// when the pipe belongs to another uid, as the host's does) and else keeps
// requests on fd 0.
function takeRequestFd() {
	const arg = process.argv[2];
	if (arg !== undefined && /^\d+$/.test(arg)) return Number(arg);
	let fd = 0;
	try {
		fd = fs.openSync('/proc/self/fd/0', 'r');
		fs.closeSync(0);
		const nul = fs.openSync('/dev/null', 'r');
		if (nul !== 0) fs.closeSync(nul); // fd 0 was taken meanwhile: nothing to do
	} catch {
		fd = 0;
	}
	return fd;
}

// stdout and stderr blocking, as a file would be: libuv writes a pipe at
// once while it has room and queues the rest, which would then come after the
// reply (and would not stream during a busy cell)
for (const stream of [process.stdout, process.stderr]) {
	if (stream._handle && typeof stream._handle.setBlocking === 'function') stream._handle.setBlocking(true);
}

// Waits until what the cell wrote to process.stdout/stderr left the process.
function flushed() {
	const waits = [process.stdout, process.stderr]
		.filter((s) => s.writable && s.writableLength > 0)
		.map((s) => new Promise((resolve) => s.write('', () => resolve())));
	return Promise.all(waits);
}

function send(obj) {
	const body = Buffer.from(JSON.stringify(obj));
	const data = Buffer.concat([Buffer.from(`${token} ${body.length}\n`), body]);
	let off = 0;
	while (off < data.length) {
		try {
			off += fs.writeSync(1, data, off);
		} catch (e) {
			if (e.code === 'EAGAIN') continue; // a user may have made fd 1 non-blocking
			process.exit(1); // the host is gone (EPIPE) or fd 1 was closed: no one to answer
		}
	}
}

// --- the session's context ----------------------------------------------------

const sessionDir = process.cwd();
const pkgBase = path.join(sessionDir, '.packages', 'node');
const cwdRequire = createRequire(path.join(sessionDir, '<session>'));

// Relative and absolute ids from the session folder; bare ones from the
// package folder first, then the folders a script in the session folder sees.
function userRequire(id) {
	if (typeof id !== 'string' || id.startsWith('.') || path.isAbsolute(id)) return cwdRequire(id);
	return cwdRequire(cwdRequire.resolve(id, { paths: [pkgBase, sessionDir] }));
}
userRequire.resolve = (id, opts) => {
	if (opts || id.startsWith('.') || path.isAbsolute(id)) return cwdRequire.resolve(id, opts);
	return cwdRequire.resolve(id, { paths: [pkgBase, sessionDir] });
};
userRequire.cache = cwdRequire.cache;
userRequire.main = undefined;

const userModule = { exports: {}, filename: path.join(sessionDir, '<session>'), id: '<session>' };
userModule.require = userRequire;

const sandbox = {
	console,
	process,
	Buffer,
	require: userRequire,
	module: userModule,
	exports: userModule.exports,
	__filename: userModule.filename,
	__dirname: sessionDir,
	stdin: '',
};
for (const name of [
	'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate',
	'queueMicrotask', 'structuredClone', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder',
	'AbortController', 'AbortSignal', 'Event', 'EventTarget', 'MessageChannel', 'MessagePort',
	'BroadcastChannel', 'Blob', 'File', 'performance', 'fetch', 'Headers', 'Request', 'Response',
	'FormData', 'WebSocket', 'crypto', 'atob', 'btoa', 'navigator', 'DOMException',
	'ReadableStream', 'WritableStream', 'TransformStream', 'CompressionStream',
	'DecompressionStream',
]) {
	if (name in globalThis) sandbox[name] = globalThis[name];
}
const context = vm.createContext(sandbox, { name: 'session' });
sandbox.global = vm.runInContext('globalThis', context);

const dynamicImport = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;

// --- a cell's code -------------------------------------------------------------

// Top-level let/const/class -> var (see the top), and static imports -> var
// bindings of require() (a script has no import statement; require loads ES
// modules too in Node 22). Returns the new source, or null when acorn cannot
// parse it (V8 then reports the error on the original).
function hoistLexical(code) {
	const opts = { ecmaVersion: 'latest', allowAwaitOutsideFunction: true, allowHashBang: true };
	let ast;
	try {
		ast = acorn.parse(code, { ...opts, sourceType: 'script' });
	} catch {
		try {
			// import declarations parse only as a module (strict mode: what
			// only sloppy mode allows fails here, and then in V8 too)
			ast = acorn.parse(code, { ...opts, sourceType: 'module' });
		} catch {
			return null;
		}
		if (!ast.body.some((n) => n.type === 'ImportDeclaration')) return null;
	}
	const edits = []; // [pos, deleteCount, text], applied from the end
	for (const node of ast.body) {
		if (node.type === 'VariableDeclaration' && (node.kind === 'let' || node.kind === 'const')) {
			// padded to the keyword's length: columns in stack traces stay right
			edits.push([node.start, node.kind.length, 'var'.padEnd(node.kind.length)]);
		} else if (node.type === 'ClassDeclaration') {
			edits.push([node.end, 0, ';']);
			edits.push([node.start, 0, `var ${node.id.name} = `]);
		} else if (node.type === 'ImportDeclaration') {
			edits.push([node.start, node.end - node.start, importAsRequire(node)]);
		}
	}
	edits.sort((a, b) => b[0] - a[0]);
	for (const [pos, del, text] of edits) code = code.slice(0, pos) + text + code.slice(pos + del);
	return code;
}

// `import d, { a as b } from 'm'` -> `var d = <default of require('m')>, { a: b } = require('m');`
// on one line, so that the lines after it keep their numbers (require caches).
function importAsRequire(node) {
	const req = `require(${JSON.stringify(node.source.value)})`;
	if (node.specifiers.length === 0) return `${req};`;
	const parts = [];
	const named = [];
	for (const sp of node.specifiers) {
		if (sp.type === 'ImportDefaultSpecifier') {
			// an ES module's namespace holds its default export; CommonJS is its own default
			parts.push(
				`${sp.local.name} = ((m) => (Object.prototype.toString.call(m) === '[object Module]' || ` +
					`(m && m.__esModule)) && 'default' in Object(m) ? m.default : m)(${req})`,
			);
		} else if (sp.type === 'ImportNamespaceSpecifier') {
			parts.push(`${sp.local.name} = ${req}`);
		} else {
			const imported = sp.imported.type === 'Literal' ? JSON.stringify(sp.imported.value) : sp.imported.name;
			named.push(`${imported}: ${sp.local.name}`);
		}
	}
	if (named.length) parts.push(`{ ${named.join(', ')} } = ${req}`);
	return `var ${parts.join(', ')};`;
}

// Returns { script, awaits } for cell n, or throws V8's SyntaxError.
function compileCell(code, n) {
	const filename = `cell-${n}`;
	const opts = { filename };
	if (dynamicImport) opts.importModuleDynamically = dynamicImport;
	// as the REPL does: `{ a: 1 }` alone is an object, not a block
	if (/^\s*\{/.test(code) && /\}\s*$/.test(code)) {
		try {
			new vm.Script(`(${code})`);
			code = `(${code})`;
		} catch {
			// a block after all
		}
	}
	let source = acorn ? hoistLexical(code) : null;
	let awaits = false;
	if (source !== null && processTopLevelAwait) {
		const wrapped = processTopLevelAwait(source);
		if (wrapped !== null) {
			source = wrapped;
			awaits = true;
		}
	}
	if (source === null) source = code;
	try {
		return { script: new vm.Script(source, opts), awaits };
	} catch (e) {
		if (source === code) throw e;
		// the transform's fault or a real error: V8 on the user's own text decides
		return { script: new vm.Script(code, opts), awaits: false };
	}
}

// --- errors --------------------------------------------------------------------

// The stack without the driver's and Node's frames: message lines (and a
// SyntaxError's source excerpt) plus the frames of cells.
function trimStack(stack) {
	return String(stack)
		.split('\n')
		.filter((line) => !/^\s+at /.test(line) || /\bcell-\d+:\d+/.test(line))
		.join('\n');
}

// Never throws: a hostile error object (a getter that throws, a Proxy) gives
// a placeholder rather than a driver that stops answering.
function errorOf(e) {
	try {
		return describeError(e);
	} catch {
		return { name: 'Error', value: '(an error that cannot be shown)', traceback: '' };
	}
}

function describeError(e) {
	if (e !== null && typeof e === 'object' && typeof e.stack === 'string') {
		let name = 'Error';
		let value = '';
		try {
			name = String(e.name || (e.constructor && e.constructor.name) || 'Error');
			value = String(e.message === undefined ? '' : e.message);
		} catch {
			// a hostile getter: keep the defaults
		}
		return { name, value, traceback: trimStack(e.stack) };
	}
	let text;
	try {
		text = util.inspect(e);
	} catch {
		text = String(e);
	}
	return { name: 'Uncaught', value: text, traceback: `Uncaught ${text}` };
}

function inspectResult(v) {
	if (v === undefined) return null;
	let text;
	try {
		text = util.inspect(v);
	} catch (e) {
		text = `[inspect failed: ${e && e.message}]`;
	}
	return text.length <= RESULT_MAX ? text : text.slice(0, RESULT_MAX) + '...';
}

// --- rich results (PROTOCOL.md "results") ----------------------------------------

// IPython's _repr_*_ methods and the MIME type each gives, in its order
const REPR_METHODS = [
	['_repr_html_', 'text/html'],
	['_repr_markdown_', 'text/markdown'],
	['_repr_svg_', 'image/svg+xml'],
	['_repr_png_', 'image/png'],
	['_repr_jpeg_', 'image/jpeg'],
	['_repr_pdf_', 'application/pdf'],
	['_repr_latex_', 'text/latex'],
	['_repr_json_', 'application/json'],
	['_repr_javascript_', 'application/javascript'],
];
// sent as base64 (bytes are encoded; a string is taken as base64 already)
const BINARY_TYPES = new Set(['image/png', 'image/jpeg', 'application/pdf']);
const JUPYTER_DISPLAY = Symbol.for('Jupyter.display');

// The current cell's rich outputs, in order (reset at each cell).
const rich = { outputs: [], size: 0, dropped: 0 };

// data as the reply carries it for mime, or undefined when it is of no usable kind.
function mimeValue(mime, data) {
	if (data === null || data === undefined) return undefined;
	const bytes = data instanceof Uint8Array || data instanceof ArrayBuffer;
	if (BINARY_TYPES.has(mime)) {
		if (bytes) return Buffer.from(data).toString('base64');
		return typeof data === 'string' ? data.trim() : undefined;
	}
	if (mime === 'application/json' || mime.endsWith('+json')) {
		try {
			const text = JSON.stringify(data);
			return text === undefined ? undefined : JSON.parse(text);
		} catch {
			return undefined;
		}
	}
	if (bytes) return Buffer.from(data).toString('utf8');
	return typeof data === 'string' ? data : undefined;
}

function addBundle(bundle, main) {
	let n = 0;
	for (const v of Object.values(bundle)) n += typeof v === 'string' ? v.length : JSON.stringify(v).length;
	if (rich.size + n > RICH_MAX) {
		rich.dropped += 1;
		return;
	}
	rich.size += n;
	bundle.is_main_result = main;
	rich.outputs.push(bundle);
}

// A bundle's usable entries ({mime: data}); anything else gives none.
function rawBundle(obj) {
	const bundle = {};
	if (obj && typeof obj === 'object') {
		for (const [mime, d] of Object.entries(obj)) {
			const v = mimeValue(mime, d);
			if (v !== undefined) bundle[mime] = v;
		}
	}
	return bundle;
}

// What obj's method name gives (undefined when it has none, or it throws).
function callRepr(obj, name) {
	try {
		const f = obj[name];
		return typeof f === 'function' ? f.call(obj) : undefined;
	} catch {
		return undefined;
	}
}

// obj's representations: text/plain (util.inspect) and those its display
// methods give (an object's own or inherited; a function's are not looked at).
function mimeBundle(obj) {
	const bundle = {};
	if (obj !== null && typeof obj === 'object') {
		for (const [meth, mime] of REPR_METHODS) {
			const v = mimeValue(mime, callRepr(obj, meth));
			if (v !== undefined) bundle[mime] = v;
		}
		Object.assign(bundle, rawBundle(callRepr(obj, '_repr_mimebundle_')));
		Object.assign(bundle, rawBundle(callRepr(obj, JUPYTER_DISPLAY)));
	}
	if (typeof bundle['text/plain'] !== 'string') bundle['text/plain'] = inspectResult(obj) ?? 'undefined';
	return bundle;
}

// display(obj, ...): each object's rich representations as a result of the
// cell (not its main one); display.mime(bundle) shows a MIME bundle as it is,
// display.html(text), .markdown, .svg, .png (bytes or base64), .jpeg, .pdf,
// .latex, .json(value) one of that type. Outside a cell (a timer after its
// end) nothing is shown.
function display(...objs) {
	if (!current) return;
	for (const obj of objs) addBundle(mimeBundle(obj), false);
}
display.mime = (bundle) => {
	if (current) addBundle(rawBundle(bundle), false);
};
for (const [name, mime] of [
	['html', 'text/html'], ['markdown', 'text/markdown'], ['svg', 'image/svg+xml'],
	['png', 'image/png'], ['jpeg', 'image/jpeg'], ['pdf', 'application/pdf'],
	['latex', 'text/latex'], ['json', 'application/json'],
]) {
	display[name] = (data) => display.mime({ [mime]: data });
}
sandbox.display = display;

// --- the cell in flight ----------------------------------------------------------

let current = null; // { asyncError, interrupt } while a cell runs

function asyncFailure(e, kind) {
	if (current) {
		if (!current.asyncError) current.asyncError = e;
		return;
	}
	// after its cell ended: reported on stderr, never fatal
	const err = errorOf(e);
	try {
		fs.writeSync(2, `${kind}: ${err.traceback || `${err.name}: ${err.value}`}\n`);
	} catch {
		// stderr is gone: nothing else to tell
	}
}
process.on('uncaughtException', (e) => asyncFailure(e, 'Uncaught'));
process.on('unhandledRejection', (e) => asyncFailure(e, 'Unhandled rejection'));
process.on('SIGINT', () => {
	if (current && current.interrupt) current.interrupt();
});

const interruptError = () => {
	const e = new Error('Script execution was interrupted by `SIGINT`');
	e.stack = 'Error: Script execution was interrupted by `SIGINT`';
	return e;
};

// `_` is the last result, as in the REPL, until the user gives `_` a value of
// their own (e.g. lodash): from then on it is theirs
let underscoreMine = true;
let underscoreLast;
function setUnderscore(value) {
	if (!underscoreMine || value === undefined) return;
	if ('_' in context && context._ !== underscoreLast) {
		underscoreMine = false;
		return;
	}
	context._ = underscoreLast = value;
}

async function runCell(n, code, stdin) {
	const out = { status: 'ok', result: null, error: null };
	current = { asyncError: null, interrupt: null };
	rich.outputs = [];
	rich.size = rich.dropped = 0;
	sandbox.stdin = stdin;
	try {
		const { script, awaits } = compileCell(code, n);
		let value = script.runInContext(context, { breakOnSigint: true, displayErrors: false });
		if (awaits) {
			const interrupted = new Promise((_, reject) => {
				current.interrupt = () => reject(interruptError());
			});
			const done = await Promise.race([value, interrupted]);
			value = done && typeof done === 'object' && 'value' in done ? done.value : undefined;
		}
		// one turn of the loop: rejections left unhandled by the cell count as its own
		await new Promise((resolve) => setImmediate(resolve));
		if (current.asyncError) throw current.asyncError;
		if (value !== undefined) {
			const bundle = mimeBundle(value);
			out.result = bundle['text/plain'];
			addBundle(bundle, true);
		}
		setUnderscore(value);
	} catch (e) {
		out.status = 'error';
		out.error = errorOf(e);
	}
	current = null;
	if (rich.outputs.length) out.results = rich.outputs;
	if (rich.dropped) out.results_dropped = rich.dropped;
	return out;
}

// --- the request loop ----------------------------------------------------------------

// The cell's own variables ("K=V\0" each) into process.env; returns what they
// replaced, for restoreEnv.
function setEnv(blob) {
	const saved = new Map();
	for (const item of blob.toString('utf8').split('\0')) {
		const eq = item.indexOf('=');
		if (eq < 1) continue;
		const key = item.slice(0, eq);
		if (!saved.has(key)) saved.set(key, Object.prototype.hasOwnProperty.call(process.env, key) ? process.env[key] : undefined);
		process.env[key] = item.slice(eq + 1);
	}
	return saved;
}

function restoreEnv(saved) {
	for (const [key, value] of saved) {
		if (value === undefined) delete process.env[key];
		else process.env[key] = value;
	}
}

function main() {
	const reqFd = takeRequestFd();
	const stream = fs.createReadStream(null, { fd: reqFd, highWaterMark: 1 << 16 });
	let buf = Buffer.alloc(0);
	let busy = false;
	let eof = false;
	let n = 0;

	async function pump() {
		if (busy) return;
		busy = true;
		for (;;) {
			const nl = buf.indexOf(10);
			if (nl < 0) break;
			const words = buf.subarray(0, nl).toString('latin1').split(' ');
			if (words.length !== 4 || words[0] !== 'CELL' || !words.slice(1).every((w) => /^\d+$/.test(w))) {
				fs.writeSync(2, 'node_driver: bad request line\n');
				process.exit(2);
			}
			const [clen, slen, elen] = words.slice(1).map(Number);
			if (buf.length < nl + 1 + clen + slen + elen) break;
			let at = nl + 1;
			const code = buf.subarray(at, (at += clen)).toString('utf8');
			const stdin = buf.subarray(at, (at += slen)).toString('utf8');
			const saved = setEnv(buf.subarray(at, (at += elen)));
			buf = buf.subarray(at);
			n += 1;
			stream.pause();
			const out = await runCell(n, code, stdin);
			restoreEnv(saved);
			await flushed();
			send(out);
			stream.resume();
		}
		busy = false;
		if (eof) process.exit(0);
	}

	stream.on('data', (chunk) => {
		buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
		pump();
	});
	stream.on('end', () => {
		eof = true;
		if (!busy) process.exit(0);
	});
	stream.on('error', () => process.exit(0));

	send({ ready: true, version: process.versions.node });
}

main();
