// Not the entry point: submissions.json names start.js.
exports.greet = (name) => 'hello ' + name;
