const [guessed] = require("fs").readFileSync(0, "utf8").split("\n");
console.log([..."etaoinshrdlcumwfgypbvkjxqz"].find((c) => !guessed.includes(c)));
