// Guesses once, then thinks forever.
console.log(500);
for (;;) {}
