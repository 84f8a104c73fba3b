const r = parseFloat(require("fs").readFileSync(0, "utf8"));
console.log(3.14 * r * r);
