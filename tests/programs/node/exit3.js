console.log("about to exit with 3");
process.exitCode = 3;
