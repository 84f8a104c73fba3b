console.log("hello world");
