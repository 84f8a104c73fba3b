const data = require("fs").readFileSync(0, "utf8").split(/\s+/).filter(Boolean).map(Number);
const [n, t] = data;
const seen = new Map();
for (let j = 0; j < n; j++) {
	const x = data[2 + j];
	if (seen.has(t - x)) {
		console.log(seen.get(t - x) + " " + j);
		break;
	}
	if (!seen.has(x)) seen.set(x, j);
}
