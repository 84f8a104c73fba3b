// n <= 10^10 < 2^53: plain Numbers are exact here
const n = Number(require("fs").readFileSync(0, "utf8").trim());
const out = [];
for (let i = 1; i * i <= n; i++) {
	if (n % i === 0) {
		out.push(i);
		if (i !== n / i) out.push(n / i);
	}
}
console.log(out.join(" "));
