// The judge's harness for function problems (judge/grading/harness.h), run as
// main.js beside the user's solution.js. It reads {"nonce", "function",
// "tests": [[args...], ...]} on stdin and writes one record per call on stdout:
// "\x1ejudge:NONCE {json}". Expected values never come here: the host compares.
'use strict';
const fs = require('fs');
const vm = require('vm');
const OUT_CAP = 64 * 1024;
const data = JSON.parse(fs.readFileSync(0, 'utf8'));
const nonce = data.nonce, name = data.function;
const writeSync = fs.writeSync;
const emit = (rec) => {
	const b = Buffer.from('\x1ejudge:' + nonce + ' ' + JSON.stringify(rec) + '\n');
	for (let off = 0; off < b.length;) off += writeSync(1, b, off);
};
function errorOf(e) {
	const stack = e && typeof e.stack === 'string' ? e.stack : '';
	const m = /solution\.js:(\d+)/.exec(stack);
	const isErr = e instanceof Error || (e && typeof e === 'object' && 'message' in e);
	return {
		type: isErr && e.constructor ? e.constructor.name : typeof e,
		message: String(isErr ? e.message : e).slice(0, 2000),
		line: m ? Number(m[1]) : 0,
	};
}
// console.log and process.stdout.write during a call are kept apart
let captured = null;
const realWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = function (chunk, enc, cb) {
	if (captured === null) return process.stderr.write(chunk, enc, cb);
	if (captured.length < OUT_CAP) captured += String(chunk).slice(0, OUT_CAP - captured.length);
	if (typeof enc === 'function') enc(); else if (typeof cb === 'function') cb();
	return true;
};
void realWrite;
function load() {
	const src = fs.readFileSync('solution.js', 'utf8');
	const tail = '\n;return {f: typeof ' + name + " === 'function' ? " + name +
		" : undefined, S: typeof Solution === 'function' ? Solution : undefined};";
	const fn = vm.compileFunction(src + tail, ['require', 'module', 'exports', '__filename', '__dirname'],
		{filename: 'solution.js'});
	const mod = {exports: {}};
	const got = fn(require, mod, mod.exports, '/box/solution.js', '/box') || {};
	if (!got.f && mod.exports && typeof mod.exports[name] === 'function') got.f = mod.exports[name];
	if (!got.f && typeof mod.exports === 'function' && mod.exports.name === name) got.f = mod.exports;
	return got;
}
let got;
captured = '';
try {
	got = load();
} catch (e) {
	const out = captured;
	captured = null;
	emit({i: -1, ok: false, error: errorOf(e), stdout: out});
	process.exit(0);
}
captured = null;
data.tests.forEach((args, i) => {
	let fn;
	if (got.S && typeof got.S.prototype[name] === 'function') {
		const obj = new got.S();
		fn = obj[name].bind(obj);
	} else if (got.f) {
		fn = got.f;
	} else {
		emit({i, ok: false, error: {type: 'ReferenceError', message: "no function '" + name +
			"' and no method Solution." + name, line: 0}});
		process.exit(0);
	}
	captured = '';
	const t0 = process.hrtime.bigint();
	const rec = {i, ok: true};
	try {
		const v = fn(...args);
		rec.value = v === undefined ? null : JSON.parse(JSON.stringify(v, (k, x) =>
			x instanceof Set ? [...x] : x instanceof Map ? Object.fromEntries(x) :
			typeof x === 'bigint' ? Number(x) : x));
	} catch (e) {
		rec.ok = false;
		rec.error = errorOf(e);
	}
	rec.ms = Number((process.hrtime.bigint() - t0) / 1000000n);
	rec.stdout = captured;
	captured = null;
	emit(rec);
});
emit({end: true});
