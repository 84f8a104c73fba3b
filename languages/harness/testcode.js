// The judge's harness for test-code problems, run as main.js beside program.js
// (prompt + completion + test code + the call of check). It reads a nonce on
// stdin and writes "\x1ejudge:NONCE {json}" only when the program ran to its
// end: a program that calls process.exit before that writes nothing and fails.
'use strict';
const fs = require('fs');
const nonce = fs.readFileSync(0, 'utf8').trim();
const writeSync = fs.writeSync;
let rec = {end: true};
try {
	require('./program.js');
} catch (e) {
	const m = /program\.js:(\d+)/.exec(e && e.stack ? String(e.stack) : '');
	rec = {end: false, error: {type: e && e.constructor ? e.constructor.name : typeof e,
		message: String(e && e.message !== undefined ? e.message : e).slice(0, 2000),
		line: m ? Number(m[1]) : 0}};
}
const b = Buffer.from('\x1ejudge:' + nonce + ' ' + JSON.stringify(rec) + '\n');
for (let off = 0; off < b.length;) off += writeSync(1, b, off);
