/* request_func (req_func_): the function-problem and test-code forms of a
 * request body (request.h), and function problem packages.
 *
 * A function request: {"function": "twoSum", "tests": [{"args": [...],
 * "expected": v, "name"?, "hidden"?}], "signature"?: {"params": [...],
 * "returns": T}}; or {"problem": ID, "function": true or the package's name},
 * which reads problems_dir/ID/function.json (problems/README.md) into the same
 * form, its samples shown and its secret tests hidden. A test-code request:
 * {"test_code": "...", "entry_point"?: "f"} (languages with a testcode_template).
 * An eval set's program: {"eval": {"rule": "exit_zero" | "silent" | "exec",
 * "stderr_fails"?: [...]}} (evrun.h; source is the whole program,
 * compiler_options allowed).
 */
#pragma once
#include <cjson/cJSON.h>

#include "judge/grading/request.h"

struct lang;

/* Validates the function, test-code or eval form of in into o (language
 * already set: l, one of langs). Returns 1 when in has the function or
 * test-code form (done), 2 for the eval form (the caller validates args and
 * compiler_options), 0 when it has none (the caller validates the other
 * forms), -1 with err. */
int request_func_validate(const struct judge_config *cfg, const struct lang_registry *langs,
			  const struct lang *l, enum request_kind kind, const cJSON *in,
			  struct grade_request *o, struct request_error *err);

/* Loads the function package problems_dir/id/function.json into o (function,
 * signature, tests; compare and limits unless o has its own). Returns 0, -2
 * when the problem has no function.json, -1 with a message in err. */
int request_func_package(const char *problems_dir, const char *id, struct grade_request *o,
			 char *err, size_t errlen);

/* True when s is a type of a signature: int, long, double, bool, string, or
 * one of them followed by [] (any depth up to 4). */
bool request_func_type_valid(const char *s);
