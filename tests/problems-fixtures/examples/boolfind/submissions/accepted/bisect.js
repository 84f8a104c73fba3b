const rl = require("readline").createInterface({ input: process.stdin });
let n = -1, lo = 0, hi = 0, mid = 0;
function ask() {
  if (lo >= hi) {
    console.log("OUTPUT " + lo);
    process.exit(0);
  }
  mid = Math.floor((lo + hi) / 2);
  console.log("READ " + mid);
}
rl.on("line", (line) => {
  if (n < 0) {
    n = Number(line);
    hi = n;
  } else if (line.trim() === "true") hi = mid;
  else lo = mid + 1;
  ask();
});
