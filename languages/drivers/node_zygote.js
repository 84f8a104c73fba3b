'use strict';
// node_zygote.js: a started node that forks one child per run (docs/warm-start.md,
// "Node"); its loop is C (runner/zygote/zcore.c through node_zygote.node beside
// this file). It runs no user code. In a child, the run's argv: it becomes
// `node <script>` and runs the script as node's own main does.
const zc = require(__dirname + '/node_zygote.node');
const fs = require('fs');
const v8 = require('v8');

const { argv, errfd } = zc.serve(); // returns in a child only

// Math.random: each context seeds itself at its first use, from --random-seed
// when set; without it from the isolate's generator, which every child copies
const seed = Buffer.alloc(4);
const rnd = fs.openSync('/dev/urandom', 'r');
fs.readSync(rnd, seed);
fs.closeSync(rnd);
v8.setFlagsFromString('--random-seed=' + ((seed.readUInt32LE(0) & 0x7fffffff) | 1));
Math.random();
v8.setFlagsFromString('--random-seed=0');

// node_zygote.js is a preload (-r) of `node /box/main.js`: once it returns in
// a child, node's own main runs /box/main.js as in a fresh start
process.argv.push(...argv.slice(2));
process.execArgv = [];
process.chdir('.'); // node caches the cwd: the zygote's was /
process._preload_modules.length = 0;
for (const k of Object.keys(require.cache)) delete require.cache[k];
Object.defineProperty(process, 'pid', { ...Object.getOwnPropertyDescriptor(process, 'pid'), value: zc.pid() });

// node's own exit tears down the platform, whose threads a forked child does
// not have: the child ends right after the 'exit' event, or, when the event
// comes from an uncaught error, once node has printed its report (the addon)
const fatalException = process._fatalException;
process._fatalException = function (...args) {
  zc.fatal();
  return fatalException.apply(this, args);
};
const proto = Object.getPrototypeOf(process);
const emit = proto.emit;
proto.emit = function (ev, ...args) {
  const r = emit.call(this, ev, ...args);
  if (ev === 'exit') zc.exitEvent(process.exitCode ?? args[0] ?? 0);
  return r;
};
zc.closeFd(errfd);
