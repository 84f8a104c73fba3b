/* judge0_render (judge0_render_): Judge0 CE's shapes: status ids, and a submission as
 * Judge0's JSON with its fields, units and base64 (language ids are the
 * languages' judge0_ids keys: lang.h).
 *
 * Pure functions of a stored submission (queue.h): the Judge0 front
 * (judge0.c) and the callbacks it sends use them, so both answer alike.
 * Mapping (docs/clients.md, "Judge0 compatibility"):
 *  - status: queued 1, running 2, completed and accepted 3, wrong_answer 4,
 *    timeout 5, compile_error 6, runtime_error by the signal (SIGSEGV 7,
 *    SIGXFSZ 8, SIGFPE 9, SIGABRT 10, another 12) or a non-zero exit (NZEC
 *    11), memory_limit 12 ("Runtime Error (Other)": Judge0's program is
 *    killed), output_limit 8 (Judge0 caps output as a file size: SIGXFSZ),
 *    internal_error 13.
 *  - time and wall_time in seconds as strings ("0.013"), memory in KB.
 *  - empty stdout, stderr and compile output are null, as Judge0 gives them.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lang_registry;
struct queue_sub;

/* Judge0's status id of s (1 to 14). */
int judge0_render_status_id(const struct queue_sub *s);
/* The description of status id ("Accepted"), or NULL when id is not 1 to 14. */
const char *judge0_render_status_name(int id);

/* A set of submission attributes (a bit per attribute). */
typedef uint64_t j0r_fields;
/* Parses a fields parameter: NULL gives Judge0's default (stdout, time, memory,
 * stderr, token, compile_output, message, status), "*" every attribute, else
 * a comma-separated list. Returns 0 with *out, or -1 with the first unknown
 * name in bad. */
int judge0_render_fields_parse(const char *fields, j0r_fields *out, char *bad, size_t badlen);

/* Submission s as Judge0's JSON object of the attributes in fields, text
 * attributes base64 encoded when base64; langs names its language (judge0_name;
 * NULL: ""). Returns a new object, or NULL when !base64 and an attribute asked
 * for is not UTF-8 text (Judge0 then answers 400 asking for
 * base64_encoded=true). */
cJSON *judge0_render_submission(const struct queue_sub *s, const struct lang_registry *langs,
				j0r_fields fields, bool base64);
