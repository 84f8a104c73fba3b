console.log("Hello");
