// Tries 1, 2, 3, ...: more than 10 guesses for most numbers.
const rl = require("readline").createInterface({ input: process.stdin });
let n = 1;
console.log(n);
rl.on("line", (reply) => {
  if (reply.trim() === "correct") return rl.close();
  console.log(++n);
});
rl.on("close", () => process.exit(0));
