#!/usr/bin/env bash
# warm_compile.sh: the warm C# compile server (judge/grading/compsrv.h,
# docs/warm-compile.md) end to end, with a real PostgreSQL, judge serve and
# judge worker (native, warm_start = on): each program of tests/warm_compile/
# gets the same verdict, compiler messages, output and main.dll through the
# warm path as through the cold one (`judge run`, a fresh csc); one server
# serves every compile; hostile sources (#line, #load, a key file, a source
# that makes the compiler recurse past its CPU limit, a huge one) get a verdict; a server
# killed mid-compile falls back to a fresh csc with a log line; then the same
# under gVisor with tool_sandbox = gvisor (the server inside gVisor).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

if [ ! -f /opt/judge/runtimes/dotnet9/compsrv/compile_server.sh ]; then
	skip "warm C# compiles" "no compile server (languages/install-csharp.sh, make deps)"
	finish
	exit
fi
# changed from judge.ini (svc.sh): one native slot, so that one server serves all
svc_up warm-compile "max_wait_s = 300" "[sandbox]" "sandbox = native" "warm_start = on" \
	"[worker]" "worker_slots = 1"
W=$SVC_TMP/warm
mkdir -p "$W"
cp tests/warm_compile/*.cs "$W/"
# hostile: 20000 nested parentheses make Roslyn recurse past the compile CPU limit
python3 -c "n=20000; print('class P { static void Main() { int x = ' + '('*n + '1' + ')'*n + '; } }')" >"$W/deep.cs"
# a huge (but allowed) source: 6000 methods
python3 -c "
print('class P {')
for i in range(6000): print('  static int F%d(int x) { return x * %d + %d; }' % (i, i, i % 7))
print('  static void Main() { long s = 0;')
print('    s += F0(1) + F5999(2);')
print('    System.Console.WriteLine(s); } }')" >"$W/huge.cs"

# the fields both paths must agree on
view='{status, compile_status: .compile.status, compile_output: .compile.output, stdout: (.stdout // .tests[0].stdout)}'
warm() {
	curl -s -m 400 "${AUTH[@]}" "${JSON[@]}" \
		-d @<(jq -nc --rawfile s "$1" '{language: "csharp", source: $s, limits: {time_ms: 10000}}') \
		"$U/v1/execute" | jq -c "$view"
}
# (a generous CPU limit for the programs' runs: .NET's start under gVisor on a
# loaded machine must not turn a comparison of compiles into a timeout)
cold() { "$JUDGE" --config "$ini" run --lang csharp --sandbox native --time-limit 10000 "$1" | jq -c "$view"; }

# same NAME WANT_STATUS: warm and cold agree on NAME's verdict, messages and output
PHASE=
same() {
	local name=$PHASE$1 file=$1 want=$2 w c
	w=$(warm "$W/$file.cs")
	c=$(cold "$W/$file.cs")
	# a side that did not end as wanted may have met a limit of the loaded
	# machine (a .NET start under gVisor past its time): it runs once more, and
	# the pass says so; a real difference differs twice
	local again=
	if [ "$w" != "$c" ]; then
		jq -e ".status == \"$want\"" <<<"$w" >/dev/null 2>&1 || w=$(warm "$W/$file.cs") again=" (warm ran twice)"
		jq -e ".status == \"$want\"" <<<"$c" >/dev/null 2>&1 || c=$(cold "$W/$file.cs") again="$again (cold ran twice)"
	fi
	if [ -n "$w" ] && [ "$w" = "$c" ]; then
		pass "$name: warm and cold agree ($(jq -r .status <<<"$w"))$again"
	else
		# which fields differ first: the totals line shows only the start
		local diff
		diff=$(jq -rn --argjson w "${w:-null}" --argjson c "${c:-null}" \
			'[($w // {}) | keys[] as $k | select($w[$k] != ($c // {})[$k]) |
			  "\($k): warm \($w[$k] | tostring | .[:60]) cold \(($c // {})[$k] | tostring | .[:60])"] | join("; ")' 2>/dev/null)
		fail "$name: warm and cold agree" "${diff:-unreadable} -- warm: ${w:0:700} cold: ${c:0:700}"
	fi
	expect_json "$name: verdict $want" "$w" ".status == \"$want\""
	WARM_OUT=$w
}

same hello completed
expect_json "hello: prints hello" "$WARM_OUT" '.stdout == "hello\n"'
same syntax compile_error
expect_json "syntax: csc's message with file:line:col" "$WARM_OUT" \
	'.compile_output == "main.cs(1,70): error CS1002: ; expected\n"'
same semantic compile_error
expect_json "semantic: errors and the warning, as csc orders them" "$WARM_OUT" \
	'(.compile_output | test("main.cs\\(6,3\\): error CS0103")) and
	 (.compile_output | test("main.cs\\(7,14\\): error CS0029")) and
	 (.compile_output | test("main.cs\\(5,7\\): warning CS0168"))'
same warnings completed
expect_json "warnings: shown, and the program runs" "$WARM_OUT" \
	'(.compile_output | test("warning CS1030: #warning")) and .stdout == "1,2,3,4,5\n"'
same line completed
expect_json "#line: messages name the mapped file, nothing of it is read" "$WARM_OUT" \
	'(.compile_output | test("^main.cs\\(5,10\\): warning CS1030")) and
	 (.compile_output | test("\n/etc/passwd\\(5,36\\): warning CS0219")) and (.compile_output | test("root:") | not)'
same load compile_error
expect_json "#load / #r: only allowed in scripts" "$WARM_OUT" \
	'(.compile_output | test("CS8097")) and (.compile_output | test("CS7011"))'
same keyfile compile_error
same dllhash completed
expect_json "dllhash: main.dll and its runtimeconfig are byte for byte csc's" "$WARM_OUT" \
	'.stdout | test("^main.dll [0-9A-F]{64}\nmain.runtimeconfig.json [0-9A-F]{64}\n$")'
same huge completed
expect_json "huge: runs" "$WARM_OUT" '.stdout == "11998\n"'

# the deep source makes Roslyn recurse deeply: on a loaded machine past the
# compile's CPU limit, where the server is stopped and a fresh csc decides (a
# compile_error when it runs out of CPU too, else its build); on a quick one
# (CI at stop 39) the warm server finishes it within the limit, with csc's
# warning CS0219. Either way the next compile is warm (the log check below
# counts the servers and fallbacks for whichever happened)
w=$(warm "$W/deep.cs")
expect_json "deep: a verdict (compile_error past the CPU limit, or its build)" "$w" \
	'.status == "compile_error" or (.status == "completed" and (.compile_output | test("CS0219")))'
w=$(warm "$W/hello.cs")
expect_json "after deep: hello runs" "$w" '.status == "completed" and .stdout == "hello\n"'

log=$SVC_TMP/worker.log
n_ready=$(grep -c "compsrv: csharp server of slot .* ready" "$log")
n_fall=$(grep -c "compsrv: csharp compile of slot .* falls back" "$log")
# deep over its CPU: the server was stopped, a second one served hello
n_cpu=$(grep -cE "compsrv: csharp compile of slot .* falls back .*(of CPU|no answer in time)" "$log")
# keyfile (COLD) always falls back, deep when it went over its CPU; every other
# compile was warm: 11 warm requests, one server (two when deep stopped it)
if [ "$n_cpu" -le 1 ] && [ "$n_ready" = $((1 + n_cpu)) ] && [ "$n_fall" = $((1 + n_cpu)) ]; then
	pass "one server served the compiles; only keyfile (and deep over its CPU: $n_cpu) fell back (log)"
else
	fail "servers started / fallbacks" "ready $n_ready, falls back $n_fall, deep over its CPU $n_cpu (want 1+that each): $(grep compsrv "$log" | tail -5)"
fi
expect_json "the fallbacks say why" "$(grep -c 'falls back to a fresh compiler: it leaves this compile' "$log")" '. == 1'

# a server killed mid-compile (fault injection): the compile falls back, the
# verdict and messages are the cold path's
svc_stop "$SVC_WORKER_PID"
JUDGE_FAULT_COMPSRV=kill "$JUDGE" --config "$ini" worker >>"$SVC_TMP/worker2.log" 2>&1 &
SVC_PIDS+=($!)
sleep 0.5
w=$(warm "$W/hello.cs")
expect_json "killed mid-compile: hello still runs" "$w" '.status == "completed" and .stdout == "hello\n"'
w=$(warm "$W/syntax.cs")
c=$(cold "$W/syntax.cs")
if [ "$w" = "$c" ]; then pass "killed mid-compile: syntax error as cold"; else fail "killed mid-compile: syntax error as cold" "warm $w cold $c"; fi
if grep -q "fault injection: killing" "$SVC_TMP/worker2.log" &&
	grep -q "csharp compile of slot .* falls back to a fresh compiler: the server ended" "$SVC_TMP/worker2.log"; then
	pass "killed mid-compile: logged as a fallback"
else
	fail "killed mid-compile: logged as a fallback" "$(grep compsrv "$SVC_TMP/worker2.log" | tail -5)"
fi

# gVisor with tool_sandbox = gvisor: the server is a live process in a gVisor
# sandbox of its own, and compiles as csc does there too
svc_stop "${SVC_PIDS[-1]}" # the fault-injection worker
if "$JUDGE" --config "$ini" run --sandbox gvisor --lang python <(echo 'print(1)') >/dev/null 2>&1; then
	sed 's/^sandbox = native/sandbox = gvisor/; s/^tool_sandbox = .*/tool_sandbox = gvisor/' "$ini" >"$SVC_TMP/gvisor.ini"
	"$JUDGE" --config "$SVC_TMP/gvisor.ini" worker >>"$SVC_TMP/worker3.log" 2>&1 &
	SVC_PIDS+=($!)
	sleep 0.5
	cold() {
		"$JUDGE" --config "$SVC_TMP/gvisor.ini" run --lang csharp --sandbox gvisor --time-limit 10000 "$1" |
			jq -c "$view"
	}
	PHASE="gvisor: "
	for c in hello:completed syntax:compile_error dllhash:completed; do
		same "${c%%:*}" "${c#*:}"
	done
	if grep -q "compsrv: csharp server of slot .* ready" "$SVC_TMP/worker3.log" &&
		! grep -q "falls back" "$SVC_TMP/worker3.log"; then
		pass "gvisor: the server started in gVisor and served every compile"
	else
		fail "gvisor: the server served every compile" "$(grep compsrv "$SVC_TMP/worker3.log" | tail -5)"
	fi
else
	skip "gvisor phase" "gVisor does not run here"
fi
finish
