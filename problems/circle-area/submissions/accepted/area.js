const r = parseFloat(require("fs").readFileSync(0, "utf8"));
console.log(Math.PI * r * r); // may print an exponent: any float formatting passes
