const w = require("fs").readFileSync(0, "utf8").split(/\s+/).filter((s) => s.length);
const n = Number(w[0]);
const out = [];
for (let i = 1; i <= n; i += 2) out.push(w[i]);
console.log(out.join("\n"));
