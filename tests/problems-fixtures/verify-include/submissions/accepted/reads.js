const fs = require("fs");
const k = Number(fs.readFileSync("offset.txt", "utf8"));
console.log(Number(fs.readFileSync(0, "utf8")) + k);
