for (const line of require("fs").readFileSync(0, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const [a, b] = line.trim().split(/\s+/).map(BigInt);
  console.log((a > b ? a - b : b - a).toString());
}
