const nums = require("fs").readFileSync(0, "utf8").trim().split(/\s+/).slice(1);
console.log(nums.reduce((s, x) => s + BigInt(x), 0n).toString());
