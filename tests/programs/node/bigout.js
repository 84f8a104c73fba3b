// prints 100 MB with blocking writes to fd 1, then spins: a judge that waits for
// the end times out instead. (process.stdout would queue what the pipe cannot
// take at once, and a spinning program never drains that queue.)
const fs = require("fs");
const block = Buffer.alloc(1 << 20, "x");
for (let i = 0; i < 100; i++) {
  let off = 0;
  while (off < block.length) off += fs.writeSync(1, block, off);
}
for (;;);
