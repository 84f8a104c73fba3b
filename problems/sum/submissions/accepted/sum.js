// Numbers lose precision above 2^53: BigInt keeps 64-bit sums exact.
const [a, b] = require("fs").readFileSync(0, "utf8").trim().split(/\s+/).map(BigInt);
console.log((a + b).toString());
