const rl = require("readline").createInterface({ input: process.stdin });
let lo = 1, hi = 1000, mid = 500;
console.log(mid);
rl.on("line", (reply) => {
  reply = reply.trim();
  if (reply === "correct") process.exit(0); // stdin stays open: leave now
  if (reply === "lower") hi = mid - 1;
  else lo = mid + 1;
  mid = Math.floor((lo + hi) / 2);
  console.log(mid);
});
