// prints 100 MB (stdout writes to a pipe are synchronous on Linux)
const block = Buffer.alloc(1 << 20, "x");
for (let i = 0; i < 100; i++) process.stdout.write(block);
