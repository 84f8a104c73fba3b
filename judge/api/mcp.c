/* mcp: JSON-RPC 2.0 and the MCP methods of POST /mcp, in both eras (mcp_era.h): initialize,
 * ping, tools/list, tools/call (legacy); server/discover, tools/list, tools/call,
 * subscriptions/listen (2026-07-28). */
#include "judge/api/mcp.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/api/http.h"
#include "judge/api/mcp_era.h"
#include "judge/api/mcp_stream.h"
#include "judge/api/sse.h"
#include "common/log.h"
#include "judge/grading/lang.h"
#include "judge/grading/request.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

/* How long a client may keep tools/list and server/discover (2026-07-28,
 * CacheableResult.ttlMs): both change only with the judge's version. */
#define MCP_LIST_TTL_MS 3600000

static const char instructions[] =
    "judge compiles and runs programs in a sandbox and grades their output. "
    "Loop: call execute_with_expected with language, source and stdin plus "
    "expected_output (or tests: [{stdin, expected_output}]), read "
    "structuredContent.status: accepted, wrong_answer (feedback shows the first "
    "difference), compile_error (compile.output), runtime_error (stderr, exit_code), "
    "timeout, memory_limit, output_limit. For a function (LeetCode style) give "
    "function and tests: [{args, expected}] instead of stdin; for HumanEval-style "
    "checks give test_code and entry_point. Then: "
    "fix the code and call again. Use execute "
    "to just run code and see stdout. list_languages gives the language names. For "
    "a stored problem: list_problems, get_problem (statement and samples), then "
    "solve_problem (graded on hidden tests). A tool result with isError true means "
    "the call itself was refused (the message says why). A run still going after "
    "the wait gives its id: call get_submission with that id and wait_s. "
    "For work that builds up state (data analysis, trying code step by step), open a "
    "session with session_create and run cells with session_execute: variables, "
    "imports, files and installed packages stay between cells. On ModuleNotFoundError "
    "(Python) or Cannot find module (Node), call session_install_packages and run the "
    "cell again; your variables are still there. Put input files in with "
    "session_write_file, read what the code wrote with session_read_file, and call "
    "session_close when done.";

/* Fields shared by execute and execute_with_expected (request.c checks them). */
#define RUN_PROPS                                                                                  \
	"\"language\":{\"type\":\"string\",\"description\":\"language name from "                  \
	"list_languages: {languages}\"},"                                                          \
	"\"source\":{\"type\":\"string\",\"description\":\"the whole program's source "            \
	"code; it reads standard input and writes standard output\"},"                             \
	"\"stdin\":{\"type\":\"string\",\"description\":\"standard input of the program\"},"       \
	"\"tests\":{\"type\":\"array\",\"description\":\"several test cases instead of "           \
	"stdin/expected_output; the first failing one decides the status\","                       \
	"\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"           \
	"\"stdin\":{\"type\":\"string\"},\"expected_output\":{\"type\":\"string\"},"               \
	"\"args\":{\"type\":\"array\",\"description\":\"with function: the call's arguments "      \
	"(JSON)\"},\"expected\":{\"description\":\"with function: the return value "               \
	"expected (JSON)\"}}}},"                                                                   \
	"\"function\":{\"type\":\"string\",\"description\":\"LeetCode style: the source "          \
	"defines this function (or a method of class Solution); each of tests calls it "           \
	"with args and compares the return value with expected\"},"                                \
	"\"signature\":{\"type\":\"object\",\"description\":\"with function, for "                 \
	"{typed_languages}: {params: [types], returns: type}, types int, long, double, bool, "     \
	"string "                                                                                  \
	"and T[]; inferred from the args when absent\"},"                                          \
	"\"test_code\":{\"type\":\"string\",\"description\":\"HumanEval style "                    \
	"({testcode_languages}): test code run after the source, e.g. def check(candidate): "      \
	"assert ...; "                                                                             \
	"passes when it runs to its end\"},"                                                       \
	"\"entry_point\":{\"type\":\"string\",\"description\":\"with test_code: the "              \
	"function check() gets\"},"                                                                \
	"\"compare\":{\"description\":\"how output is compared: exact, lines (default: "           \
	"trailing white space ignored), tokens (white space insensitive), unordered, "             \
	"regex; or {\\\"mode\\\": \\\"tokens\\\", \\\"float_absolute_tolerance\\\": 1e-6}\","      \
	"\"anyOf\":[{\"type\":\"string\",\"enum\":[\"exact\",\"lines\",\"tokens\","                \
	"\"unordered\",\"regex\"]},{\"type\":\"object\"}]},"                                       \
	"\"limits\":{\"type\":\"object\",\"description\":\"optional limits, each capped by "       \
	"the server\",\"properties\":{\"time_ms\":{\"type\":\"integer\"},"                         \
	"\"wall_ms\":{\"type\":\"integer\"},\"memory_mb\":{\"type\":\"integer\"},"                 \
	"\"output_kb\":{\"type\":\"integer\"},\"processes\":{\"type\":\"integer\"}}},"             \
	"\"run_all_tests\":{\"type\":\"boolean\",\"description\":\"run every test even "           \
	"after one fails\"}"

#define EXPECTED_PROP                                                                              \
	"\"expected_output\":{\"type\":\"string\",\"description\":\"the output the program "       \
	"must print for stdin\"}"

/* outputSchema pieces: what structuredContent holds when isError is false (error
 * results carry none). Loose on purpose: the keys always there are required, the
 * rest only typed, and other keys are allowed (the result JSON may grow). */
#define NUM	    "{\"type\":\"number\"}"
#define STR	    "{\"type\":\"string\"}"
#define BOOL	    "{\"type\":\"boolean\"}"
#define NULLABLE(t) "{\"type\":[\"" t "\",\"null\"]}"
/* the result JSON (docs/grading.md, "Result JSON"); a run still going after the wait is
 * just {id, status} */
#define RESULT_PROPS                                                                               \
	"\"status\":{\"type\":\"string\",\"description\":\"accepted, wrong_answer, "               \
	"completed, compile_error, runtime_error, timeout, memory_limit, output_limit; "           \
	"queued or running when not finished yet\"},"                                              \
	"\"language\":" STR ",\"compile\":{\"type\":\"object\",\"properties\":{\"status\":" STR    \
	",\"output\":" STR ",\"time_ms\":" NUM "}},"                                               \
	"\"exit_code\":" NULLABLE("integer") ",\"signal\":" NULLABLE(                              \
	    "integer") ","                                                                         \
		       "\"time_ms\":" NUM ",\"wall_ms\":" NUM ",\"memory_kb\":" NUM                \
		       ",\"stdout\":" STR ",\"stderr\":" STR ",\"stdout_truncated\":" BOOL         \
		       ",\"stderr_truncated\":" BOOL ",\"feedback\":" NULLABLE(                    \
			   "object") ",\"tests\":{\"type\":\"array\",\"items\":"                   \
				     "{\"type\":\"object\",\"properties\":{\"name\":" STR          \
				     ",\"status\":" STR "},"                                       \
				     "\"required\":[\"name\",\"status\"]}},\"tests_total\":{"      \
				     "\"type\":\"integer\"}"
#define RESULT_SCHEMA                                                                              \
	"{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\",\"description\":"       \
	"\"submission id (get_submission)\"}," RESULT_PROPS "},\"required\":[\"id\",\"status\"]}"

/* The session tools' common argument. */
#define SESSION_ID                                                                                 \
	"\"session_id\":{\"type\":\"string\",\"description\":\"the id session_create "             \
	"returned\"}"
#define PATH_PROP(what)                                                                            \
	"\"path\":{\"type\":\"string\",\"description\":\"" what " relative to the "                \
	"session's working directory, e.g. data/input.csv\"}"
/* a session as session_create returns it */
#define SESSION_SCHEMA                                                                             \
	"{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"language\":" STR ",\"status\":" STR \
	",\"created_at\":" STR ",\"expires_at\":" STR ",\"idle_ttl\":" NUM                         \
	",\"limits\":{\"type\":\"object\"}},"                                                      \
	"\"required\":[\"id\",\"language\",\"status\",\"expires_at\"]}"
#define CELL_SCHEMA                                                                                \
	"{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\","                    \
	"\"description\":\"ok, error (the code raised: see error), timeout, memory_limit, "        \
	"output_limit or internal_error\"},\"stdout\":" STR ",\"stderr\":" STR                     \
	",\"result\":" NULLABLE(                                                                   \
	    "string") ",\"results\":{\"type\":\"array\",\"description\":"                          \
		      "\"rich results: MIME bundles (text/html, image/png, "                       \
		      "...)\"},\"error\":" NULLABLE(                                               \
			  "object") ",\"execution_count\":" NUM ",\"time_ms\":" NUM                \
				    ",\"wall_ms\":" NUM ",\"restarted\":" BOOL ",\"message\":" STR \
				    ",\"verdict\":" STR "},"                                       \
				    "\"required\":[\"status\",\"stdout\",\"stderr\",\"result\","   \
				    "\"error\",\"execution_count\"]}"

struct tool {
	const char *name;
	const char *title;
	const char *description; /* for the model: when to use it, what comes back */
	const char *schema;	 /* inputSchema, JSON */
	const char *output;	 /* outputSchema, JSON */
	bool read_only;
};

static const struct tool tools[MCP_TOOL_COUNT] = {
    [MCP_EXECUTE_EXPECTED] =
	{"execute_with_expected", "Run and grade code",
	 "Compiles and runs a program in a sandbox on stdin and compares its output with "
	 "expected_output (or runs each of tests). Returns the result JSON: status is "
	 "accepted, wrong_answer (with feedback: line, column, expected, got), compile_error "
	 "(compile.output has the compiler's messages), runtime_error, timeout, memory_limit "
	 "or output_limit; plus stdout, stderr, exit_code, time_ms, memory_kb and id. Use it "
	 "to check a solution; fix the code and call again until accepted.",
	 "{\"type\":\"object\",\"properties\":{" RUN_PROPS "," EXPECTED_PROP "},"
	 "\"required\":[\"language\",\"source\"]}",
	 RESULT_SCHEMA, false},
    [MCP_EXECUTE] = {"execute", "Run code",
		     "Compiles and runs a program in a sandbox with optional stdin and returns "
		     "the result JSON: status completed (or compile_error, runtime_error, "
		     "timeout, memory_limit, output_limit), stdout, stderr, exit_code, time_ms, "
		     "memory_kb and id. expected_output is optional here; use "
		     "execute_with_expected to grade.",
		     "{\"type\":\"object\",\"properties\":{" RUN_PROPS "," EXPECTED_PROP "},"
		     "\"required\":[\"language\",\"source\"]}",
		     RESULT_SCHEMA, false},
    [MCP_SOLVE_PROBLEM] =
	{"solve_problem", "Submit a solution to a problem",
	 "Grades a program against all test data of a stored problem (get_problem shows its "
	 "statement and samples; the other tests are hidden) and returns the result JSON: "
	 "status accepted only when every test passes, else the first failing test's "
	 "verdict, with tests listing each test's status.",
	 "{\"type\":\"object\",\"properties\":{\"problem\":{\"type\":\"string\","
	 "\"description\":\"problem id from list_problems\"},\"language\":{\"type\":\"string\","
	 "\"description\":\"language name from list_languages\"},\"source\":{\"type\":"
	 "\"string\",\"description\":\"the whole program's source code\"},\"run_all_tests\":"
	 "{\"type\":\"boolean\",\"description\":\"run every test even after one fails\"}},"
	 "\"required\":[\"problem\",\"language\",\"source\"]}",
	 RESULT_SCHEMA, false},
    [MCP_GET_SUBMISSION] =
	{"get_submission", "Get a submission's state",
	 "Returns a submission by id: status (queued, running, or the final verdict) and, "
	 "once final, result (the result JSON). With wait_s it waits up to that many seconds "
	 "for the final verdict. Use it when a run was still going after the wait.",
	 "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\",\"description\":"
	 "\"submission id\"},\"wait_s\":{\"type\":\"integer\",\"minimum\":0,\"description\":"
	 "\"seconds to wait for the final verdict (capped by the server)\"}},"
	 "\"required\":[\"id\"]}",
	 "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},\"status\":"
	 "{\"type\":\"string\",\"description\":\"queued, running, or the final verdict\"},"
	 "\"language\":" STR ",\"problem\":" STR ",\"created_ms\":" NUM
	 ",\"started_ms\":" NULLABLE("number") ",\"finished_ms\":" NULLABLE(
	     "number") ",\"attempts\":"
		       "{\"type\":\"integer\"},\"callback\":{\"type\":\"object\"},\"result\":{"
		       "\"description\":"
		       "\"the result JSON once final, else "
		       "null\",\"anyOf\":[{\"type\":\"null\"},{\"type\":"
		       "\"object\",\"properties\":{" RESULT_PROPS "},\"required\":[\"status\"]}]}},"
		       "\"required\":[\"id\",\"status\",\"created_ms\",\"attempts\",\"result\"]}",
	 true},
    [MCP_LIST_LANGUAGES] =
	{"list_languages", "List languages",
	 "Lists the languages programs may be written in: name (the value "
	 "of language in the other tools), display_name, version, "
	 "source_file and whether it is compiled.",
	 "{\"type\":\"object\",\"properties\":{}}",
	 "{\"type\":\"object\",\"properties\":{\"languages\":{\"type\":\"array\",\"items\":"
	 "{\"type\":\"object\",\"properties\":{\"name\":" STR ",\"display_name\":" STR
	 ",\"version\":" NULLABLE("string") ",\"source_file\":" STR ",\"compiled\":" BOOL "},"
					    "\"required\":[\"name\",\"display_name\",\"compiled\"]}"
					    "}},\"required\":[\"languages\"]}",
	 true},
    [MCP_LIST_PROBLEMS] =
	{"list_problems", "List problems",
	 "Lists the stored problems: id, name and whether the judge can "
	 "grade them (supported).",
	 "{\"type\":\"object\",\"properties\":{}}",
	 "{\"type\":\"object\",\"properties\":{\"problems\":{\"type\":\"array\",\"items\":"
	 "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"name\":" STR ",\"supported\":" BOOL
	 "},\"required\":[\"id\",\"name\",\"supported\"]}}},\"required\":[\"problems\"]}",
	 true},
    [MCP_GET_PROBLEM] =
	{"get_problem", "Read a problem",
	 "Returns one problem: statement, time and memory limits and the "
	 "sample tests (input, output). Solve it with solve_problem.",
	 "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\","
	 "\"description\":\"problem id from list_problems\"}},"
	 "\"required\":[\"id\"]}",
	 "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"name\":" STR
	 ",\"format_version\":" STR ",\"supported\":" BOOL ",\"unsupported\":" STR
	 ",\"interactive\":" BOOL ",\"scoring\":" BOOL ",\"custom_validator\":" BOOL
	 ",\"limits\":{\"type\":\"object\",\"properties\":{\"time_ms\":" NULLABLE(
	     "number") ",\"memory_mb\":" NUM
		       "}},\"statement\":" NULLABLE(
			   "string") ",\"tests\":"
				     "{\"type\":\"integer\"},\"samples\":{\"type\":\"array\","
				     "\"items\":{\"type\":"
				     "\"object\",\"properties\":{\"name\":" STR
				     ",\"input\":" NULLABLE("string") ",\"output\":" NULLABLE(
					 "string") "},\"required\":[\"name\"]}}},"
						   "\"required\":[\"id\",\"name\",\"supported\","
						   "\"samples\"]}",
	 true},
    [MCP_UPLOAD_PROBLEM] =
	{"upload_problem", "Upload a problem package",
	 "Stores an ICPC problem package (legacy, 2023-07 or 2025-09 format: problem.yaml, "
	 "data/sample, data/secret, optional output validator and submissions/<verdict>/) "
	 "given as a zip in base64, as a new problem of this key (private unless visibility is "
	 "public), or with replace as a new version of one of its own. The judge checks the "
	 "package and grades its example submissions; a package whose submissions do not get "
	 "their folders' verdicts is refused unless keep is true. Returns the problem with its "
	 "verification report; solve it with solve_problem. Needs a key allowed to upload.",
	 "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"description\":"
	 "\"the problem id: [a-z0-9][a-z0-9_-]*\"},\"package_base64\":{\"type\":\"string\","
	 "\"description\":\"the zip of the package, base64 (within the server's body cap)\"},"
	 "\"visibility\":{\"type\":\"string\",\"enum\":[\"private\",\"public\"]},\"keep\":"
	 "{\"type\":\"boolean\",\"description\":\"store it even if its submissions do not get "
	 "their verdicts\"},\"replace\":{\"type\":\"boolean\",\"description\":\"a new version "
	 "of an existing problem of this key\"}},\"required\":[\"id\",\"package_base64\"]}",
	 "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"name\":" STR
	 ",\"version\":{\"type\":\"integer\"},\"status\":{\"type\":\"string\",\"description\":"
	 "\"ready, verifying, refused or failed\"},\"visibility\":" STR
	 ",\"verification\":{\"type\":\"object\"}},\"required\":[\"id\",\"version\",\"status\"]}",
	 false},
    [MCP_SESSION_CREATE] =
	{"session_create", "Open a stateful session",
	 "Starts a session: a sandboxed interpreter ({session_languages}) that keeps "
	 "variables, imports, functions, files and installed packages between "
	 "session_execute calls, like a notebook. Returns id (pass it as session_id to the "
	 "other session tools) and expires_at: the session closes after idle_ttl seconds "
	 "unused. It has no network unless network asks for some within the server's cap; "
	 "install packages with session_install_packages.",
	 "{\"type\":\"object\",\"properties\":{\"language\":{\"type\":\"string\","
	 "\"enum\":[{session_enum}]},\"idle_ttl\":{\"type\":"
	 "\"integer\",\"description\":\"seconds unused before it closes (default 600)\"},"
	 "\"idle_action\":{\"type\":\"string\",\"enum\":[\"close\",\"pause\"],\"description\":"
	 "\"what it does once unused for idle_ttl: close, or pause (its files and packages "
	 "kept, no sandbox held; the next call resumes it)\"},"
	 "\"limits\":{\"type\":\"object\",\"description\":\"optional, capped by the "
	 "server\",\"properties\":{\"memory_mb\":{\"type\":\"integer\"},\"cpu_ms\":"
	 "{\"type\":\"integer\",\"description\":\"CPU per cell\"},\"wall_ms\":{\"type\":"
	 "\"integer\",\"description\":\"wall time per cell\"},\"disk_mb\":{\"type\":"
	 "\"integer\"},\"cpus\":{\"type\":\"number\",\"description\":\"CPUs the whole "
	 "session may keep busy, background processes included\"},\"cpu_budget_s\":{"
	 "\"type\":\"integer\",\"description\":\"CPU seconds in all; past them the "
	 "session is closed\"},\"cpu_weight\":{\"type\":\"integer\",\"description\":"
	 "\"share of contended CPU against other sessions (100 by default)\"},"
	 "\"processes\":{\"type\":\"integer\",\"description\":\"processes and threads "
	 "of the whole session\"}}},\"network\":{\"description\":\"egress policy: none (the "
	 "default), open, or {allow: [host[:port], *.domain]}, within the server's cap (403 "
	 "egress_forbidden beyond it)\"},\"env\":{\"type\":\"object\",\"additionalProperties\":"
	 "{\"type\":\"string\"},\"description\":\"environment variables every cell and process of "
	 "the session sees\"}},\"required\":[\"language\"]}",
	 SESSION_SCHEMA, false},
    [MCP_SESSION_EXECUTE] =
	{"session_execute", "Run a cell in a session",
	 "Runs code in the session's persistent state (earlier cells' variables and "
	 "imports are there). Returns status ok or error; stdout and stderr; result: the "
	 "value of the last expression as text (Python repr, Node inspect), else null; "
	 "error: {name, value, traceback} when the code raised. On ModuleNotFoundError, "
	 "call session_install_packages and run the cell again. timeout and memory_limit "
	 "keep the session; restarted true means its variables were lost (files stay).",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID ",\"code\":{\"type\":"
	 "\"string\",\"description\":\"the cell's code\"},\"stdin\":{\"type\":\"string\"},"
	 "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	 "\"description\":\"environment variables for this cell only\"},"
	 "\"timeout_ms\":{\"type\":\"integer\",\"description\":\"wall time limit of this "
	 "cell\"},\"expected_output\":{\"type\":\"string\",\"description\":\"optional: "
	 "grade stdout against it (verdict accepted or wrong_answer)\"}},"
	 "\"required\":[\"session_id\",\"code\"]}",
	 CELL_SCHEMA, false},
    [MCP_SESSION_INSTALL] =
	{"session_install_packages", "Install packages into a session",
	 "Installs packages with {package_managers} into the session, from the "
	 "registries the server allows; the next cells can import them. Names may carry "
	 "versions: numpy, pandas==2.2.2, lodash@^4. Returns status ok or error with the "
	 "installer's output.",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID ",\"manager\":{\"type\":"
	 "\"string\",\"enum\":[\"pip\",\"npm\"]},\"packages\":{\"type\":\"array\","
	 "\"items\":{\"type\":\"string\"},\"minItems\":1}},"
	 "\"required\":[\"session_id\",\"manager\",\"packages\"]}",
	 "{\"type\":\"object\",\"properties\":{\"status\":" STR ",\"packages\":{\"type\":"
	 "\"array\"},\"output\":" STR ",\"time_ms\":" NUM "},\"required\":[\"status\","
	 "\"output\"]}",
	 false},
    [MCP_SESSION_WRITE_FILE] =
	{"session_write_file", "Write a file into a session",
	 "Writes a file in the session's working directory (folders are made as needed), "
	 "e.g. a CSV the next cell reads with open('data.csv'). content is text, or base64 "
	 "with encoding base64 for binary files.",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID
	 "," PATH_PROP("file path") ",\"content\":{\"type\":\"string\"},\"encoding\":{\"type\":"
				    "\"string\",\"enum\":"
				    "[\"utf-8\",\"base64\"]}},\"required\":[\"session_id\","
				    "\"path\",\"content\"]}",
	 "{\"type\":\"object\",\"properties\":{\"path\":" STR ",\"size\":" NUM "},"
	 "\"required\":[\"path\",\"size\"]}",
	 false},
    [MCP_SESSION_READ_FILE] =
	{"session_read_file", "Read a file from a session",
	 "Reads a file the session's code wrote (a chart, a result CSV). Returns "
	 "content_type, size, encoding (utf-8 for text, else base64) and content.",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID
	 "," PATH_PROP("file path") "},\"required\":[\"session_id\",\"path\"]}",
	 "{\"type\":\"object\",\"properties\":{\"content_type\":" STR ",\"size\":" NUM
	 ",\"encoding\":" STR ",\"content\":" STR "},\"required\":[\"encoding\","
	 "\"content\"]}",
	 true},
    [MCP_SESSION_LIST_FILES] =
	{"session_list_files", "List a session's files",
	 "Lists a folder of the session (default: its working directory): name, type "
	 "(file, dir, symlink), size and mtime of each entry.",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID
	 "," PATH_PROP("a folder") "},\"required\":[\"session_id\"]}",
	 "{\"type\":\"object\",\"properties\":{\"dir\":" STR ",\"files\":{\"type\":"
	 "\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"name\":" STR ",\"type\":" STR
	 ",\"size\":" NUM ",\"mtime\":" NUM "}}}},\"required\":"
	 "[\"files\"]}",
	 true},
    [MCP_SESSION_CLOSE] = {"session_close", "Close a session",
			   "Closes a session and frees its sandbox; its variables and files are "
			   "gone. Call it when the work is done.",
			   "{\"type\":\"object\",\"properties\":{" SESSION_ID "},"
			   "\"required\":[\"session_id\"]}",
			   "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"status\":" STR
			   "},\"required\":[\"id\",\"status\"]}",
			   false},
    [MCP_SESSION_PAUSE] =
	{"session_pause", "Pause a session",
	 "Stores the session's files and installed packages (and, on gVisor, its "
	 "memory: memory true) in the judge's database and ends its sandbox, so it "
	 "holds no memory while unused. The next call on it (or session_resume) "
	 "brings it back on a new sandbox: files and packages are there; variables "
	 "too when the image holds the memory (restarted: false), else they are "
	 "lost (restarted: true).",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID "},"
	 "\"required\":[\"session_id\"]}",
	 "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"status\":" STR ",\"image_id\":" STR
	 ",\"size\":" NUM ",\"stored\":" NUM ",\"memory\":" BOOL
	 "},\"required\":[\"id\",\"status\"]}",
	 false},
    [MCP_SESSION_RESUME] = {"session_resume", "Resume a paused session",
			    "Brings a paused session back on a new sandbox from its stored image "
			    "(any call on it does so too). With the memory (gVisor) its variables "
			    "are back (restarted: false), else they are lost (restarted: true).",
			    "{\"type\":\"object\",\"properties\":{" SESSION_ID "},"
			    "\"required\":[\"session_id\"]}",
			    "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"status\":" STR
			    ",\"restarted\":{\"type\":\"boolean\"}},\"required\":[\"id\","
			    "\"status\"]}",
			    false},
    [MCP_SESSION_FORK] = {"session_fork", "Fork a session",
			  "Copies a session's files and installed packages into a new session "
			  "(a snapshot and a create in one call) to explore another branch; the "
			  "two share nothing afterwards. Returns the new session (its id, "
			  "forked_from); its variables start empty.",
			  "{\"type\":\"object\",\"properties\":{" SESSION_ID
			  ",\"name\":{\"type\":\"string\",\"description\":\"a name for the "
			  "snapshot\"}},\"required\":[\"session_id\"]}",
			  "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"status\":" STR
			  ",\"forked_from\":" STR ",\"snapshot_id\":" STR
			  "},\"required\":[\"id\",\"status\"]}",
			  false},
    [MCP_SESSION_SNAPSHOT] = {"session_snapshot", "Snapshot a session",
			      "Stores a named copy of a session's files and installed packages "
			      "while the session goes on. session_create with from_snapshot (or "
			      "E2B's Sandbox.create) starts new sessions from it; snapshot_delete "
			      "frees its room under the key's storage cap.",
			      "{\"type\":\"object\",\"properties\":{" SESSION_ID
			      ",\"name\":{\"type\":\"string\",\"description\":\"a name for "
			      "it\"}},\"required\":[\"session_id\"]}",
			      "{\"type\":\"object\",\"properties\":{\"snapshot_id\":" STR
			      ",\"name\":" STR ",\"session_id\":" STR ",\"size\":" NUM
			      ",\"stored\":" NUM "},\"required\":[\"snapshot_id\"]}",
			      false},
    [MCP_SNAPSHOT_LIST] = {"snapshot_list", "List snapshots",
			   "Lists this key's snapshots, newest first (id, name, the session it "
			   "came from, language, files, size and stored bytes), and what all its "
			   "stored images hold (stored) against its cap.",
			   "{\"type\":\"object\",\"properties\":{}}",
			   "{\"type\":\"object\",\"properties\":{\"snapshots\":{\"type\":"
			   "\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":" STR
			   ",\"name\":" STR ",\"session_id\":" NULLABLE(
			       "string") ",\"language\":" STR ",\"size\":" NUM ",\"stored\":" NUM
					 "}}},\"stored\":" NUM ",\"cap\":" NUM
					 "},\"required\":[\"snapshots\"]}",
			   true},
    [MCP_SNAPSHOT_DELETE] = {"snapshot_delete", "Delete a snapshot",
			     "Deletes one of this key's snapshots and its stored bytes. Sessions "
			     "started from it keep their files.",
			     "{\"type\":\"object\",\"properties\":{\"snapshot_id\":{\"type\":"
			     "\"string\",\"description\":\"the id session_snapshot or "
			     "snapshot_list gave\"}},\"required\":[\"snapshot_id\"]}",
			     "{\"type\":\"object\",\"properties\":{\"id\":" STR ",\"deleted\":" BOOL
			     "},\"required\":[\"id\",\"deleted\"]}",
			     false},
    [MCP_SESSION_HISTORY] =
	{"session_history", "Read a session's history",
	 "Lists every call of a session in order, open or ended: cells (code, status, "
	 "times), commands, installs, file writes and deletes, each with ok or the error it "
	 "got; and in egress every attempt its code made to reach the network (host, port, "
	 "decision allowed or refused, reason, bytes_out, bytes_in). At most 1000 of each per "
	 "answer: pass next_after as after, egress_next_after as egress_after, for the rest.",
	 "{\"type\":\"object\",\"properties\":{" SESSION_ID ",\"after\":{\"type\":"
	 "\"integer\",\"description\":\"only calls whose seq is above this\"},"
	 "\"egress_after\":{\"type\":\"integer\",\"description\":\"only network attempts "
	 "whose id is above this\"}},\"required\":[\"session_id\"]}",
	 "{\"type\":\"object\",\"properties\":{\"session_id\":" STR ",\"calls\":{\"type\":"
	 "\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"seq\":" NUM ",\"kind\":" STR
	 ",\"at\":" STR ",\"state\":" STR ",\"ok\":" BOOL "},\"required\":["
	 "\"seq\",\"kind\",\"at\",\"state\",\"ok\"]}},\"next_after\":" NULLABLE(
	     "integer") ",\"egress\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
			"\"properties\":{\"id\":" NUM ",\"at\":" STR ",\"method\":" STR
			",\"host\":" STR ",\"port\":" NUM
			",\"decision\":{\"type\":\"string\",\"enum\":[\"allowed\","
			"\"refused\"]},\"reason\":" STR ",\"address\":" STR ",\"bytes_out\":" NUM
			",\"bytes_in\":" NUM
			"},\"required\":[\"id\",\"host\",\"port\",\"decision\","
			"\"reason\",\"bytes_out\",\"bytes_in\"]}},\"egress_next_after\":" NULLABLE(
			    "integer") "},\"required\":[\"session_id\",\"calls\",\"egress\"]}",
	 true},
};

const char *mcp_tool_name(enum mcp_tool t)
{
	return (unsigned)t < MCP_TOOL_COUNT ? tools[t].name : "unknown";
}

/* ---- replies ---- */

/* Sends {"jsonrpc": "2.0", "id": id, key: value}; takes value. */
static void reply(struct http_request *r, int status, const cJSON *id, const char *key,
		  cJSON *value)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, key, value);
	http_respond_json(r, status, o);
	cJSON_Delete(o);
}

/* Sends a JSON-RPC error; takes data (error.data, or NULL). */
static void reply_error_data(struct http_request *r, int status, const cJSON *id, int code,
			     const char *message, cJSON *data)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	if (data)
		cJSON_AddItemToObject(e, "data", data);
	reply(r, status, id, "error", e);
}

static void reply_error(struct http_request *r, int status, const cJSON *id, int code,
			const char *message)
{
	reply_error_data(r, status, id, code, message, NULL);
}

/* Sends result; a modern one gets resultType and serverInfo first. Takes result. */
static void reply_result(struct http_request *r, const cJSON *id, bool modern, cJSON *result)
{
	if (modern)
		mcp_era_result(result);
	reply(r, 200, id, "result", result);
}

/* ---- tool results ---- */

struct call_state {
	cJSON *id;		   /* the JSON-RPC request's id */
	bool modern;		   /* the 2026-07-28 era: results with resultType */
	struct mcp_stream *stream; /* answered as a stream (mcp_stream.h), else NULL */
};

static void call_state_free(void *p)
{
	struct call_state *cs = p;
	if (!cs)
		return;
	cJSON_Delete(cs->id);
	mcp_stream_free(cs->stream);
	free(cs);
}

/* http_transform_fn: the endpoint's response -> the tools/call reply. */
static int to_tool_result(struct http_request *r, int status, const char *body, size_t len,
			  struct strbuf *out, void *arg)
{
	(void)r;
	struct call_state *cs = arg;
	mcp_tool_reply(cs->id, status, body, len, cs->modern, out);
	return 200;
}

/* http_request.event_transform of a streamed call (mcp_stream.h). */
static bool to_stream_event(struct http_request *r, const char *event, const char *data,
			    struct strbuf *out, void *arg)
{
	(void)r;
	struct call_state *cs = arg;
	return mcp_stream_event(cs->stream, cs->id, event, data, out);
}

/* The images among a cell's rich results (its /v1 JSON's "results") as MCP image
 * content items onto content; returns the text the model reads: the JSON with
 * each image's base64 left out (NULL when the answer has no image). */
static char *cell_images(const cJSON *parsed, cJSON *content)
{
	static const char *const types[] = {"image/png", "image/jpeg"};
	const cJSON *results = cJSON_GetObjectItemCaseSensitive(parsed, "results"), *x;
	cJSON *copy = NULL;
	int i = 0;
	cJSON_ArrayForEach(x, results)
	{
		for (size_t t = 0; t < 2; t++) {
			const cJSON *img = cJSON_GetObjectItemCaseSensitive(x, types[t]);
			if (!cJSON_IsString(img))
				continue;
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "type", "image");
			cJSON_AddStringToObject(c, "data", img->valuestring);
			cJSON_AddStringToObject(c, "mimeType", types[t]);
			cJSON_AddItemToArray(content, c);
			if (!copy)
				copy = cJSON_Duplicate(parsed, 1);
			char note[96];
			snprintf(note, sizeof note,
				 "(%zu bytes of base64, sent as an image content item)",
				 strlen(img->valuestring));
			cJSON *mine = cJSON_GetArrayItem(
			    cJSON_GetObjectItemCaseSensitive(copy, "results"), i);
			cJSON_ReplaceItemInObjectCaseSensitive(mine, types[t],
							       cJSON_CreateString(note));
		}
		i++;
	}
	char *text = copy ? cJSON_PrintUnformatted(copy) : NULL;
	cJSON_Delete(copy);
	return text;
}

void mcp_tool_reply(const cJSON *rpc_id, int status, const char *body, size_t len, bool modern,
		    struct strbuf *out)
{
	cJSON *parsed = cJSON_ParseWithLength(body, len);
	cJSON *res = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(res, "content");
	cJSON *text = cJSON_CreateObject();
	cJSON_AddStringToObject(text, "type", "text");
	struct strbuf sb = STRBUF_INIT;
	bool error = status >= 400;
	if (error) {
		/* the model reads the text: say what was refused and why */
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(parsed, "error");
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
		strbuf_addf(&sb, "error %d %s: %s", status,
			    cJSON_IsString(code) ? code->valuestring : "error",
			    cJSON_IsString(msg) ? msg->valuestring : "the request failed");
	} else if (status == 202) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(parsed, "id");
		if (cJSON_IsString(id)) /* a problem still being verified */
			strbuf_addf(&sb,
				    "still being verified: call get_problem with {\"id\": \"%s\"} "
				    "later for its state. ",
				    id->valuestring);
		else
			strbuf_addf(&sb,
				    "not finished yet: call get_submission with {\"id\": %.0f, "
				    "\"wait_s\": 30} for the verdict. ",
				    cJSON_IsNumber(id) ? id->valuedouble : 0.0);
	}
	cJSON *images = cJSON_CreateArray();
	char *elided = error ? NULL : cell_images(parsed, images);
	if (elided) {
		strbuf_addstr(&sb, elided);
		free(elided);
	} else if (!error) {
		size_t n = len;
		while (n && body[n - 1] == '\n')
			n--;
		strbuf_add(&sb, body, n);
	}
	cJSON_AddStringToObject(text, "text", sb.buf);
	strbuf_release(&sb);
	cJSON_AddItemToArray(content, text);
	cJSON *img;
	while ((img = cJSON_DetachItemFromArray(images, 0)))
		cJSON_AddItemToArray(content, img);
	cJSON_Delete(images);
	/* an error result carries its error in the text only: clients (the official
	 * SDK's callTool) check any structuredContent against the outputSchema */
	if (cJSON_IsObject(parsed) && !error) {
		cJSON_AddItemToObject(res, "structuredContent", parsed);
		parsed = NULL;
	}
	cJSON_AddBoolToObject(res, "isError", error);
	cJSON_Delete(parsed);
	if (modern)
		mcp_era_result(res);

	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(rpc_id, 1));
	cJSON_AddItemToObject(o, "result", res);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
}

/* ---- methods ---- */

/* The capabilities of both eras: tools only, a list that never changes. */
static void add_capabilities(cJSON *res)
{
	cJSON *caps = cJSON_AddObjectToObject(res, "capabilities");
	cJSON *tc = cJSON_AddObjectToObject(caps, "tools");
	cJSON_AddBoolToObject(tc, "listChanged", false);
}

/* CacheableResult's fields (2026-07-28, SEP-2549): the list is the same for
 * every API key, so any cache may share it. */
static void add_cache_hint(cJSON *res)
{
	cJSON_AddNumberToObject(res, "ttlMs", MCP_LIST_TTL_MS);
	cJSON_AddStringToObject(res, "cacheScope", "public");
}

static void do_initialize(struct http_request *r, const cJSON *id, const cJSON *params)
{
	/* an unknown version (2026-07-28 too: it has no initialize) gets the newest
	 * legacy one; the client then decides whether it can go on */
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	cJSON *res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "protocolVersion",
				mcp_era_initialize_version(cJSON_GetStringValue(pv)));
	add_capabilities(res);
	mcp_era_server_info(res, "serverInfo");
	cJSON_AddStringToObject(res, "instructions", instructions);
	reply(r, 200, id, "result", res);
}

/* server/discover (2026-07-28, schema.ts DiscoverResult): the versions, the
 * capabilities and the instructions initialize gives, as a cacheable result;
 * the identity is in _meta's serverInfo (mcp_era_result). */
static void do_discover(struct http_request *r, const cJSON *id)
{
	cJSON *res = cJSON_CreateObject();
	cJSON_AddItemToObject(res, "supportedVersions", mcp_era_versions());
	add_capabilities(res);
	cJSON_AddStringToObject(res, "instructions", instructions);
	add_cache_hint(res);
	reply_result(r, id, true, res);
}

static bool has_sessions(const struct lang *l)
{
	return l->session_argv != NULL;
}

static bool has_test_code(const struct lang *l)
{
	return l->testcode_template != NULL;
}

static bool has_typed_harness(const struct lang *l)
{
	return l->function_harness == LANG_HARNESS_STL || l->function_harness == LANG_HARNESS_CLR;
}

/* The text of a tool's description or schema with the languages' facts in its
 * {placeholders} (lang.h), so that no list of languages is written here.
 * Returns a malloc'd string. */
static char *fill(const char *text, const struct lang_registry *langs)
{
	struct strbuf out = STRBUF_INIT, v = STRBUF_INIT;
	for (const char *p = text; *p;) {
		const char *e = *p == '{' ? strchr(p, '}') : NULL;
		size_t n = e ? (size_t)(e - p + 1) : 0;
		strbuf_reset(&v);
		if (n == 11 && !strncmp(p, "{languages}", n)) {
			lang_names(langs, NULL, "or", &v);
		} else if (n == 17 && !strncmp(p, "{typed_languages}", n)) {
			lang_names(langs, has_typed_harness, "and", &v);
		} else if (n == 20 && !strncmp(p, "{testcode_languages}", n)) {
			lang_names(langs, has_test_code, "and", &v);
		} else if (n == 19 && !strncmp(p, "{session_languages}", n)) {
			lang_names(langs, has_sessions, "or", &v);
		} else if (n == 14 && !strncmp(p, "{session_enum}", n)) {
			for (int i = 0; i < langs->count; i++)
				if (has_sessions(&langs->langs[i]))
					strbuf_addf(&v, "%s\"%s\"", v.len ? "," : "",
						    langs->langs[i].name);
		} else if (n == 18 && !strncmp(p, "{package_managers}", n)) {
			for (int i = 0; i < langs->count; i++) {
				const struct lang *l = &langs->langs[i];
				if (l->package_manager)
					strbuf_addf(&v, "%s%s (%s)", v.len ? " or " : "",
						    l->package_manager, l->name);
			}
		} else {
			strbuf_addch(&out, *p++);
			continue;
		}
		strbuf_add(&out, v.buf ? v.buf : "", v.len);
		p += n;
	}
	strbuf_release(&v);
	return out.buf ? strbuf_detach(&out, NULL) : xstrdup("");
}

static void do_tools_list(struct http_request *r, const cJSON *id, bool modern,
			  const struct lang_registry *langs)
{
	cJSON *res = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(res, "tools");
	/* in the order a model should meet them */
	static const enum mcp_tool order[] = {MCP_EXECUTE_EXPECTED,  MCP_EXECUTE,
					      MCP_SOLVE_PROBLEM,     MCP_GET_SUBMISSION,
					      MCP_LIST_LANGUAGES,    MCP_LIST_PROBLEMS,
					      MCP_GET_PROBLEM,	     MCP_UPLOAD_PROBLEM,
					      MCP_SESSION_CREATE,    MCP_SESSION_EXECUTE,
					      MCP_SESSION_INSTALL,   MCP_SESSION_WRITE_FILE,
					      MCP_SESSION_READ_FILE, MCP_SESSION_LIST_FILES,
					      MCP_SESSION_CLOSE,     MCP_SESSION_HISTORY,
					      MCP_SESSION_PAUSE,     MCP_SESSION_RESUME,
					      MCP_SESSION_FORK,	     MCP_SESSION_SNAPSHOT,
					      MCP_SNAPSHOT_LIST,     MCP_SNAPSHOT_DELETE};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const struct tool *t = &tools[order[i]];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddStringToObject(o, "title", t->title);
		char *desc = fill(t->description, langs), *text = fill(t->schema, langs);
		cJSON_AddStringToObject(o, "description", desc);
		cJSON *schema = cJSON_Parse(text);
		free(desc);
		free(text);
		if (!schema) {
			/* a typo in the table above; the test of tools/list catches it */
			log_error("mcp: the input schema of %s is not JSON", t->name);
			schema = cJSON_CreateObject();
			cJSON_AddStringToObject(schema, "type", "object");
		}
		cJSON_AddItemToObject(o, "inputSchema", schema);
		cJSON *out = cJSON_Parse(t->output);
		if (out)
			cJSON_AddItemToObject(o, "outputSchema", out);
		else /* the same kind of typo; tools/list's test catches it too */
			log_error("mcp: the output schema of %s is not JSON", t->name);
		cJSON *ann = cJSON_AddObjectToObject(o, "annotations");
		cJSON_AddBoolToObject(ann, "readOnlyHint", t->read_only);
		cJSON_AddBoolToObject(ann, "openWorldHint", false);
		cJSON_AddItemToArray(arr, o);
	}
	if (modern)
		add_cache_hint(res);
	reply_result(r, id, modern, res);
}

/* subscriptions/listen (2026-07-28, schema.ts SubscriptionsListenRequest;
 * basic/patterns/subscriptions.mdx): the long-lived stream of change
 * notifications the client opts in to. This server's tools never change
 * (listChanged false) and it has no resources nor prompts, so it honors none
 * of them: the stream holds the acknowledgment, which must come first and
 * names what is honored (nothing), then the server's graceful teardown, the
 * empty SubscriptionsListenResult with the subscription's id; then it closes.
 * Holding the stream open could deliver nothing more. */
static void do_listen(struct http_request *r, const cJSON *id, const cJSON *params)
{
	static const char sub_key[] = "io.modelcontextprotocol/subscriptionId";
	const cJSON *filter = cJSON_GetObjectItemCaseSensitive(params, "notifications");
	if (!cJSON_IsObject(filter))
		return reply_error(r, 200, id, MCP_INVALID_PARAMS,
				   "params.notifications (the notification filter, an object) is "
				   "required");
	struct strbuf out = STRBUF_INIT;
	cJSON *ack = cJSON_CreateObject();
	cJSON_AddStringToObject(ack, "jsonrpc", "2.0");
	cJSON_AddStringToObject(ack, "method", "notifications/subscriptions/acknowledged");
	cJSON *p = cJSON_AddObjectToObject(ack, "params");
	cJSON_AddItemToObject(cJSON_AddObjectToObject(p, "_meta"), sub_key, cJSON_Duplicate(id, 1));
	cJSON_AddObjectToObject(p, "notifications");
	cJSON *end = cJSON_CreateObject();
	cJSON_AddStringToObject(end, "jsonrpc", "2.0");
	cJSON_AddItemToObject(end, "id", cJSON_Duplicate(id, 1));
	cJSON *res = cJSON_AddObjectToObject(end, "result");
	cJSON_AddItemToObject(cJSON_AddObjectToObject(res, "_meta"), sub_key,
			      cJSON_Duplicate(id, 1));
	mcp_era_result(res);
	cJSON *msgs[] = {ack, end};
	for (size_t i = 0; i < 2; i++) {
		char *text = cJSON_PrintUnformatted(msgs[i]);
		sse_encode(&out, 0, NULL, text);
		free(text);
		cJSON_Delete(msgs[i]);
	}
	static const char *const hdr[] = {"Cache-Control", "no-cache", "X-Accel-Buffering", "no",
					  NULL};
	http_respond(r, 200, "text/event-stream", out.buf, out.len, hdr);
	strbuf_release(&out);
}

/* Renders a whole, non-negative number argument as text into buf.
 * Returns buf, or NULL when v is not such a number. */
static const char *whole_number(const cJSON *v, char *buf, size_t len)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e15 ||
	    v->valuedouble != floor(v->valuedouble))
		return NULL;
	snprintf(buf, len, "%.0f", v->valuedouble);
	return buf;
}

/* The body of a call without arguments: an empty object, as a client would send. */
static const cJSON no_args = {.type = cJSON_Object};

static void do_tools_call(struct http_request *r, const cJSON *id, const cJSON *params, bool modern,
			  mcp_dispatch_fn dispatch, void *arg)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	if (!cJSON_IsString(name))
		return reply_error(r, 200, id, MCP_INVALID_PARAMS,
				   "params.name (the tool's name) is required");
	int t = 0;
	while (t < MCP_TOOL_COUNT && strcmp(tools[t].name, name->valuestring))
		t++;
	if (t == MCP_TOOL_COUNT) {
		char msg[160];
		snprintf(msg, sizeof msg, "unknown tool '%.64s' (tools/list lists them)",
			 name->valuestring);
		return reply_error(r, 200, id, MCP_INVALID_PARAMS, msg);
	}
	if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args))
		return reply_error(r, 200, id, MCP_INVALID_PARAMS,
				   "params.arguments must be an object");

	struct call_state *cs = xcalloc(1, sizeof *cs);
	cs->id = cJSON_Duplicate(id, 1);
	cs->modern = modern;
	/* from here on every response of r is a tool result */
	r->transform = to_tool_result;
	r->transform_arg = cs;
	r->transform_free = call_state_free;
	log_debug("mcp: tools/call %s", tools[t].name);

	struct mcp_call call = {.tool = (enum mcp_tool)t};
	char idbuf[32], waitbuf[32];
	const cJSON *a_id = cJSON_GetObjectItemCaseSensitive(args, "id");
	const cJSON *a_wait = cJSON_GetObjectItemCaseSensitive(args, "wait_s");
	switch (call.tool) {
	case MCP_EXECUTE:
	case MCP_EXECUTE_EXPECTED:
	case MCP_SOLVE_PROBLEM: {
		if (call.tool == MCP_SOLVE_PROBLEM &&
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(args, "problem"))) {
			http_error(r, 422, "missing_field",
				   "problem (a problem id from list_problems) is required");
			return;
		}
		/* the arguments are the endpoint's body, parsed already */
		call.body = cJSON_IsObject(args) ? args : &no_args;
		if (mcp_stream_wanted(r, params)) {
			/* live output as progress, then the reply (mcp_stream.h) */
			call.stream = true;
			cs->stream = mcp_stream_new(r->key_id, id, params, modern);
			r->event_transform = to_stream_event;
			r->stream_tag = mcp_stream_tag(cs->stream);
		}
		break;
	}
	case MCP_GET_SUBMISSION:
		call.id = cJSON_IsString(a_id) ? a_id->valuestring
					       : whole_number(a_id, idbuf, sizeof idbuf);
		if (!call.id) {
			http_error(r, 422, "missing_field",
				   "id (a submission id, a whole number) is required");
			return;
		}
		if (a_wait && !cJSON_IsNull(a_wait) &&
		    !(call.wait = whole_number(a_wait, waitbuf, sizeof waitbuf))) {
			http_error(r, 422, "invalid_field",
				   "wait_s must be a whole number of seconds");
			return;
		}
		break;
	case MCP_GET_PROBLEM:
		if (!cJSON_IsString(a_id)) {
			http_error(r, 422, "missing_field",
				   "id (a problem id from list_problems) is required");
			return;
		}
		call.id = a_id->valuestring;
		break;
	case MCP_UPLOAD_PROBLEM:
	case MCP_SESSION_CREATE:
	case MCP_SESSION_EXECUTE:
	case MCP_SESSION_INSTALL:
	case MCP_SESSION_WRITE_FILE:
	case MCP_SESSION_READ_FILE:
	case MCP_SESSION_LIST_FILES:
	case MCP_SESSION_CLOSE:
	case MCP_SESSION_HISTORY:
	case MCP_SESSION_PAUSE:
	case MCP_SESSION_RESUME:
	case MCP_SESSION_FORK:
	case MCP_SESSION_SNAPSHOT:
	case MCP_SNAPSHOT_LIST:
	case MCP_SNAPSHOT_DELETE:
		call.body = cJSON_IsObject(args) ? args : &no_args;
		break;
	default:
		break;
	}
	dispatch(r, &call, arg);
}

static void method_not_found(struct http_request *r, const cJSON *id, const char *method,
			     bool modern)
{
	char msg[200];
	if (modern && (!strcmp(method, "initialize") || !strcmp(method, "ping")))
		snprintf(msg, sizeof msg,
			 "method '%s' is not part of protocol version " MCP_MODERN_VERSION
			 " (server/discover tells what this server speaks)",
			 method);
	else
		snprintf(msg, sizeof msg, "method '%.64s' not found", method);
	reply_error(r, modern ? 404 : 200, id, MCP_METHOD_NOT_FOUND, msg);
}

static const char *request_header(void *r, const char *name)
{
	return http_header(r, name);
}

/* A request (msg: an object with a string method, an id, params an object or
 * absent), of either era. */
static void do_request(struct http_request *r, const cJSON *msg, const struct lang_registry *langs,
		       mcp_dispatch_fn dispatch, void *arg)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const char *method = cJSON_GetObjectItemCaseSensitive(msg, "method")->valuestring;
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	struct mcp_era era;
	mcp_era_classify(msg, request_header, r, &era);
	if (era.code) {
		log_debug("mcp: %s refused: %s", method, era.message);
		reply_error_data(r, era.status, id, era.code, era.message, era.data);
		era.data = NULL;
	} else if (era.modern) {
		/* 2026-07-28: stateless, no initialize nor ping (changelog.mdx, major
		 * changes 2 and 5); a method this server does not implement is 404
		 * with -32601 (streamable-http.mdx, "Protocol Version Header") */
		if (!strcmp(method, "server/discover"))
			do_discover(r, id);
		else if (!strcmp(method, "tools/list"))
			do_tools_list(r, id, true, langs);
		else if (!strcmp(method, "tools/call"))
			do_tools_call(r, id, params, true, dispatch, arg);
		else if (!strcmp(method, "subscriptions/listen"))
			do_listen(r, id, params);
		else
			method_not_found(r, id, method, true);
	} else if (!strcmp(method, "initialize")) {
		do_initialize(r, id, params);
	} else if (!strcmp(method, "ping")) {
		reply(r, 200, id, "result", cJSON_CreateObject());
	} else if (!strcmp(method, "tools/list")) {
		do_tools_list(r, id, false, langs);
	} else if (!strcmp(method, "tools/call")) {
		do_tools_call(r, id, params, false, dispatch, arg);
	} else {
		method_not_found(r, id, method, false);
	}
	mcp_era_release(&era);
}

void mcp_handle(struct http_request *r, const struct judge_config *cfg,
		const struct lang_registry *langs, mcp_dispatch_fn dispatch, void *arg)
{
	cJSON *in = NULL;
	struct request_error e;
	if (request_parse_json(cfg, r->body.buf, r->body.len, &in, &e) < 0) {
		char msg[300];
		snprintf(msg, sizeof msg, "parse error: %s", e.message);
		return reply_error(r, 400, NULL, MCP_PARSE_ERROR, msg);
	}
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(in, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(in, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(in, "params");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(in, "jsonrpc");
	/* an id that is not a string or a number cannot be echoed (MCP: never null) */
	bool id_ok = cJSON_IsString(id) || cJSON_IsNumber(id);
	if (cJSON_IsArray(in)) {
		reply_error(r, 400, NULL, MCP_INVALID_REQUEST,
			    "batches are not supported: send one JSON-RPC message per request");
	} else if (!cJSON_IsObject(in) || !cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0")) {
		reply_error(r, 400, id_ok ? id : NULL, MCP_INVALID_REQUEST,
			    "not a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\")");
	} else if (!method && id_ok &&
		   (cJSON_HasObjectItem(in, "result") || cJSON_HasObjectItem(in, "error"))) {
		/* a response to a server request: this server sends none, so nothing
		 * waits for it */
		http_respond(r, 202, NULL, "", 0, NULL);
	} else if (!cJSON_IsString(method) || (id && !id_ok)) {
		reply_error(r, 400, id_ok ? id : NULL, MCP_INVALID_REQUEST,
			    "a request has a string method and a string or number id");
	} else if (!id) {
		/* a notification (notifications/initialized, .../cancelled ...): no reply,
		 * in either era (2026-07-28 defines none over HTTP, where closing the
		 * stream cancels; streamable-http.mdx, "Sending Messages") */
		char tag[300];
		if (!strcmp(method->valuestring, "notifications/cancelled") &&
		    mcp_stream_cancel_tag(r->key_id, params, tag, sizeof tag)) {
			struct mcp_call call = {.tool = MCP_TOOL_COUNT, .cancel_tag = tag};
			dispatch(r, &call, arg);
		}
		http_respond(r, 202, NULL, "", 0, NULL);
	} else if (params && !cJSON_IsObject(params)) {
		reply_error(r, 200, id, MCP_INVALID_PARAMS, "params must be an object");
	} else {
		do_request(r, in, langs, dispatch, arg);
	}
	cJSON_Delete(in);
}
