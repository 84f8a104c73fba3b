// The entry point, as ../../../submissions.json says (else a_helper.js, the
// first source file, would be run and print nothing).
// @EXPECTED_RESULTS@: CORRECT
const { greet } = require('./a_helper.js');
const name = require('fs').readFileSync(0, 'utf8').trim();
console.log(greet(name));
