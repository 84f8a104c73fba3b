const [mode, text] = require("fs").readFileSync(0, "utf8").split("\n");
console.log([...text.trim()].reverse().join(""));
