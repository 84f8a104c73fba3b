// keeps ever more memory, 16 MB at a time, each byte written (outside V8's heap)
const keep = [];
for (;;) keep.push(Buffer.alloc(16 << 20, 1));
