console.log("Hello World!");
