// bench/e2b.mjs: E2B's own SDK against the judge (bench/e2b.sh), each number as
// the SDK's caller sees it, beside a bare baseline measured in the same run:
//   create -> first runCode result   (ComputeSDK's create-to-first-command)
//   runCode('x = 1')                  vs the same cell in a held-open python3
//   commands.run('true')              vs spawning bash -c true here
// The calls are measured twice: on a settled sandbox, and right after each
// create (the service then also starts a pooled sandbox and ends the last).
// Env: E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY; N (rounds, default 20);
// PY (the bare interpreter). Prints one JSON object.
import { Sandbox } from '@e2b/code-interpreter';
import { spawn } from 'node:child_process';

const N = Number(process.env.N || 20);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const stats = (a) => {
	const s = [...a].sort((x, y) => x - y);
	const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
	return { n: s.length, p50: +q(0.5).toFixed(1), p90: +q(0.9).toFixed(1) };
};

// a bare held-open interpreter: one line of code in, exec'd, one line out
function bareInterpreter() {
	const p = spawn(process.env.PY || 'python3', ['-u', '-c',
		'import sys\nfor l in sys.stdin:\n    exec(l)\n    print("done", flush=True)'],
	{ stdio: ['pipe', 'pipe', 'inherit'] });
	let buf = '', waiting = null;
	p.stdout.on('data', (d) => {
		buf += d;
		if (buf.includes('done\n') && waiting) { buf = ''; const w = waiting; waiting = null; w(); }
	});
	return {
		run: (code) => new Promise((res) => { waiting = res; p.stdin.write(code + '\n'); }),
		close: () => p.kill(),
	};
}
const bareCommand = () => new Promise((res) => spawn('/bin/bash', ['-c', 'true']).on('exit', res));

const out = {};
const firstResult = [], cells = [], commands = [], bareCells = [], bareCommands = [];
const cellsAfterCreate = [], commandsAfterCreate = [];
const bare = bareInterpreter();
await bare.run('x = 0');
// 1. create -> first result, then three cells and commands at once (while
// the pool starts the next sandboxes and the last one is torn down), kill
// outside the clock; the bare baselines between them as in 2 keep its pace
for (let i = 0; i < N; i++) {
	let t = now();
	const s = await Sandbox.create();
	await s.runCode('x = 1');
	firstResult.push(now() - t);
	for (let k = 0; k < 3; k++) {
		t = now();
		await s.runCode('x = 1');
		cellsAfterCreate.push(now() - t);
		await bare.run('x = 1');
		t = now();
		await s.commands.run('true');
		commandsAfterCreate.push(now() - t);
		await bareCommand();
	}
	await s.kill();
}
// 2. calls on one sandbox once the service is settled (an agent's next call
// comes after its model answered, seconds later)
const s = await Sandbox.create();
await s.runCode('x = 0');
await new Promise((r) => setTimeout(r, 3000));
for (let i = 0; i < 3 * N; i++) {
	let t = now();
	await s.runCode('x = 1');
	cells.push(now() - t);
	t = now();
	await bare.run('x = 1');
	bareCells.push(now() - t);
	t = now();
	await s.commands.run('true');
	commands.push(now() - t);
	t = now();
	await bareCommand();
	bareCommands.push(now() - t);
}
await s.kill();
bare.close();
out.create_to_first_result_ms = stats(firstResult);
out.run_code_ms = stats(cells);
out.bare_cell_ms = stats(bareCells);
out.commands_run_ms = stats(commands);
out.bare_command_ms = stats(bareCommands);
out.run_code_after_create_ms = stats(cellsAfterCreate);
out.commands_run_after_create_ms = stats(commandsAfterCreate);
console.log(JSON.stringify(out));
