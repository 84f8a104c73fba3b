/* test_mcp_era: the era of an MCP request and the header checks of protocol revision
 * 2026-07-28 (streamable-http.mdx "Server Validation", versioning.mdx), without a server. */
#include <criterion/criterion.h>
#include <strings.h>

#include "judge/api/mcp_era.h"

/* The request's headers: NULL-ended name, value pairs. */
static const char *lookup(void *arg, const char *name)
{
	const char *const *h = arg;
	for (; h && h[0]; h += 2)
		if (!strcasecmp(h[0], name))
			return h[1];
	return NULL;
}

#define META                                                                                       \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
	"\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"               \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define CALL                                                                                       \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"                                        \
	"call\",\"params\":{\"name\":\"execute\"," META "}}"

/* Classifies body with headers; the error code (0: none), *modern set. */
static int classify(const char *body, const char *const *headers, bool *modern, cJSON **data)
{
	cJSON *msg = cJSON_Parse(body);
	cr_assert(msg, "bad test JSON: %s", body);
	struct mcp_era e;
	mcp_era_classify(msg, lookup, (void *)headers, &e);
	cJSON_Delete(msg);
	*modern = e.modern;
	int code = e.code;
	if (code)
		cr_assert_eq(e.status, 400, "a refusal is HTTP 400 (%s)", e.message);
	if (data) {
		*data = e.data;
		e.data = NULL;
	}
	mcp_era_release(&e);
	return code;
}

#define V  "MCP-Protocol-Version", "2026-07-28"
#define MM "Mcp-Method", "tools/call"

Test(mcp_era, legacy_requests_stay_legacy)
{
	bool modern;
	const char *const h[] = {"MCP-Protocol-Version", "2025-06-18", NULL};
	cr_assert_eq(
	    classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", h, &modern, NULL),
	    0);
	cr_assert(!modern);
	/* initialize opens the legacy era, whatever version it asks for */
	cr_assert_eq(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
			      "{\"protocolVersion\":\"2026-07-28\"}}",
			      NULL, &modern, NULL),
		     0);
	cr_assert(!modern);
	/* a _meta naming a legacy version: a legacy server would not read it */
	cr_assert_eq(
	    classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":"
		     "{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}}",
		     NULL, &modern, NULL),
	    0);
	cr_assert(!modern);
}

Test(mcp_era, a_modern_request_with_its_headers)
{
	bool modern;
	const char *const h[] = {V, MM, "Mcp-Name", "execute", NULL};
	cr_assert_eq(classify(CALL, h, &modern, NULL), 0);
	cr_assert(modern);
	/* header names are case-insensitive, optional white space is cut */
	const char *const h2[] = {"mcp-protocol-version",
				  " 2026-07-28\t",
				  "MCP-METHOD",
				  "tools/call",
				  "mcp-name",
				  "execute ",
				  NULL};
	cr_assert_eq(classify(CALL, h2, &modern, NULL), 0);
	/* the Base64 sentinel of the name ("execute") */
	const char *const h3[] = {V, MM, "Mcp-Name", "=?base64?ZXhlY3V0ZQ==?=", NULL};
	cr_assert_eq(classify(CALL, h3, &modern, NULL), 0);
	cr_assert(modern);
	/* tools/list has no Mcp-Name */
	const char *const h4[] = {V, "Mcp-Method", "tools/list", NULL};
	cr_assert_eq(
	    classify("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" META
		     "}}",
		     h4, &modern, NULL),
	    0);
}

Test(mcp_era, header_mismatches)
{
	bool modern;
	const char *const cases[][9] = {
	    {MM, "Mcp-Name", "execute", NULL}, /* no version header */
	    {"MCP-Protocol-Version", "2025-11-25", MM, "Mcp-Name", "execute",
	     NULL},							  /* not the body's */
	    {V, "Mcp-Name", "execute", NULL},				  /* no Mcp-Method */
	    {V, "Mcp-Method", "tools/list", "Mcp-Name", "execute", NULL}, /* another method */
	    {V, "Mcp-Method", "Tools/Call", "Mcp-Name", "execute",
	     NULL},						/* values keep their case */
	    {V, MM, NULL},					/* no Mcp-Name */
	    {V, MM, "Mcp-Name", "execute_with_expected", NULL}, /* another name */
	    {V, MM, "Mcp-Name", "=?base64?***?=", NULL},	/* broken Base64 */
	    {V, MM, "Mcp-Name",
	     "ex\xc3\xa9"
	     "cute",
	     NULL}, /* not ASCII */
	    {V, MM, "Mcp-Name",
	     "exe\x01"
	     "cute",
	     NULL}, /* a control byte */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_assert_eq(classify(CALL, cases[i], &modern, NULL), MCP_HEADER_MISMATCH,
			     "case %zu", i);
}

Test(mcp_era, unsupported_versions_name_the_supported_ones)
{
	bool modern;
	cJSON *data;
	const char *const h[] = {"MCP-Protocol-Version", "1900-01-01", MM, NULL};
	int code = classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
			    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\","
			    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
			    h, &modern, &data);
	cr_assert_eq(code, MCP_UNSUPPORTED_VERSION);
	cr_assert_str_eq(cJSON_GetObjectItem(data, "requested")->valuestring, "1900-01-01");
	const cJSON *sup = cJSON_GetObjectItem(data, "supported");
	cr_assert_eq(cJSON_GetArraySize(sup), 5);
	cr_assert_str_eq(cJSON_GetArrayItem(sup, 0)->valuestring, "2026-07-28");
	cr_assert_str_eq(cJSON_GetArrayItem(sup, 1)->valuestring, "2025-11-25");
	cJSON_Delete(data);
	/* a future version in the header alone */
	const char *const h2[] = {"MCP-Protocol-Version", "2099-01-01", NULL};
	cr_assert_eq(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", h2,
			      &modern, &data),
		     MCP_UNSUPPORTED_VERSION);
	cr_assert_str_eq(cJSON_GetObjectItem(data, "requested")->valuestring, "2099-01-01");
	cJSON_Delete(data);
}

Test(mcp_era, the_meta_itself)
{
	bool modern;
	const char *const h[] = {V, "Mcp-Method", "tools/list", NULL};
	/* no clientCapabilities */
	cr_assert_eq(
	    classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
		     "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
		     h, &modern, NULL),
	    MCP_INVALID_PARAMS);
	/* a version that is not a string */
	cr_assert_eq(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
			      "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":1}}}",
			      h, &modern, NULL),
		     MCP_INVALID_PARAMS);
	/* clientInfo without a version */
	cr_assert_eq(
	    classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
		     "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		     "\"io.modelcontextprotocol/clientCapabilities\":{},"
		     "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\"}}}}",
		     h, &modern, NULL),
	    MCP_INVALID_PARAMS);
	/* the modern header with no _meta at all */
	cr_assert_eq(
	    classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", h, &modern, NULL),
	    MCP_INVALID_PARAMS);
}

Test(mcp_era, results_carry_result_type_and_server_info)
{
	cJSON *r = cJSON_CreateObject();
	mcp_era_result(r);
	cr_assert_str_eq(cJSON_GetObjectItem(r, "resultType")->valuestring, "complete");
	const cJSON *si = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "_meta"),
					      "io.modelcontextprotocol/serverInfo");
	cr_assert_str_eq(cJSON_GetObjectItem(si, "name")->valuestring, "judge");
	cr_assert(cJSON_IsString(cJSON_GetObjectItem(si, "version")));
	cJSON_Delete(r);
	cr_assert_str_eq(mcp_era_initialize_version("2025-06-18"), "2025-06-18");
	cr_assert_str_eq(mcp_era_initialize_version("2026-07-28"), "2025-11-25");
	cr_assert_str_eq(mcp_era_initialize_version(NULL), "2025-11-25");
}
