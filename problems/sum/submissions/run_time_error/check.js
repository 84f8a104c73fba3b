const [a, b] = require("fs").readFileSync(0, "utf8").trim().split(/\s+/).map(Number);
if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) process.exit(1);
console.log(String(a + b));
