// node_zygote.js ADDON MODE N: a started node forking N children (tests/bench/forks.sh).
// MODE hello: each prints hello and _exits. MODE loop: each runs a CPU loop and
// prints its ms. MODE random: each prints Math.random() after re-seeding V8 from
// /dev/urandom (the context's state is seeded at its first use, from
// --random-seed when set; without it, from the isolate's generator, which every
// child copies: the same numbers in every child).
const [addon, mode, n] = process.argv.slice(2);
const nz = require(addon);
const fs = require('fs'), v8 = require('v8');
let cpu = 0;
for (let i = 0; i < +n; i++) {
  const pid = nz.fork();
  if (pid === 0) {
    if (mode === 'random' || mode === 'same-random') {
      if (mode === 'random') {
        const b = Buffer.alloc(4), fd = fs.openSync('/dev/urandom', 'r');
        fs.readSync(fd, b);
        fs.closeSync(fd);
        v8.setFlagsFromString('--random-seed=' + ((b.readUInt32LE(0) & 0x7fffffff) | 1));
      }
      console.log(Math.random());
    } else if (mode === 'loop') {
      const t = process.cpuUsage();
      let s = 0;
      const f = (x) => (x * x) % 7;
      for (let k = 0; k < 1e8; k++) s += f(k);
      const u = process.cpuUsage(t);
      console.log(((u.user + u.system) / 1000).toFixed(0), s);
    } else {
      console.log('hello');
    }
    nz.exit(0);
  }
  const ms = nz.wait(pid);
  if (ms < 0) process.exit(1);
  cpu += ms;
}
console.error(`cpu per child ${(cpu / +n).toFixed(2)} ms`);
