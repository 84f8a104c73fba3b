/* test_e2b_control: E2B's create fields allow_internet_access and network as
 * the session's egress policy (judge/api/e2b_control.c, e2b_control_network):
 * the default never beyond the key's cap, false and denyOut ALL_TRAFFIC none,
 * allowOut names an allowlist, what cannot be mapped refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/api/e2b_control.h"
#include "judge/service/session/sessnet.h"

static struct sessnet_policy cap(const char *mode, const char *allow)
{
	struct sessnet_policy c;
	char err[300];
	cr_assert_eq(sessnet_cap_parse(mode, allow, &c, err, sizeof err), 0, "%s", err);
	return c;
}

/* Maps body under c: the return code, and *out's JSON text ("" for NULL) or err. */
static int map(const char *body, const struct sessnet_policy *c, char *out, size_t len)
{
	cJSON *in = cJSON_Parse(body), *net = NULL;
	cr_assert_not_null(in, "bad test JSON: %s", body);
	char err[400];
	int rc = e2b_control_network(in, c, &net, err, sizeof err);
	cJSON_Delete(in);
	if (rc < 0) {
		snprintf(out, len, "%s", err);
		cr_assert_null(net);
		return rc;
	}
	char *t = net ? cJSON_PrintUnformatted(net) : NULL;
	snprintf(out, len, "%s", t ? t : "");
	free(t);
	cJSON_Delete(net);
	return rc;
}

Test(e2b_control, network_default_within_the_cap)
{
	char out[400];
	struct sessnet_policy off = cap("off", ""), any = cap("allowlist", ""),
			      some = cap("allowlist", "api.github.com"), open = cap("open", "");
	/* the SDKs' default (JS sends nothing, Python allow_internet_access true) */
	static const char *const dflt[] = {"{}", "{\"allow_internet_access\": true}",
					   "{\"allow_internet_access\": null}",
					   "{\"network\": {\"allowPublicTraffic\": false}}"};
	for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++) {
		cr_assert_eq(map(dflt[i], &off, out, sizeof out), 1, "%s", out);
		cr_assert_str_eq(out, "{\"mode\":\"none\"}");
		cr_assert_eq(map(dflt[i], &any, out, sizeof out), 1);
		cr_assert_str_eq(out, "{\"mode\":\"none\"}");
		cr_assert_eq(map(dflt[i], &some, out, sizeof out), 1);
		cr_assert_str_eq(out, "{\"mode\":\"allowlist\",\"allow\":[\"api.github.com\"]}");
		cr_assert_eq(map(dflt[i], &open, out, sizeof out), 1);
		cr_assert_str_eq(out, "{\"mode\":\"open\"}");
	}
}

Test(e2b_control, network_explicit)
{
	char out[400];
	struct sessnet_policy open = cap("open", "");
	cr_assert_eq(map("{\"allow_internet_access\": false}", &open, out, sizeof out), 0);
	cr_assert_str_eq(out, "\"none\"");
	cr_assert_eq(map("{\"network\": {\"denyOut\": [\"0.0.0.0/0\"]}}", &open, out, sizeof out),
		     0);
	cr_assert_str_eq(out, "\"none\"");
	/* allowOut wins over denyOut and over allow_internet_access false, as in E2B */
	cr_assert_eq(
	    map("{\"allow_internet_access\": false, \"network\": {\"allowOut\": "
		"[\"api.github.com\", \"*.example.org:443\"], \"denyOut\": [\"0.0.0.0/0\"]}}",
		&open, out, sizeof out),
	    0, "%s", out);
	cr_assert_str_eq(out, "{\"allow\":[\"api.github.com\",\"*.example.org:443\"]}");
	cr_assert_eq(map("{\"network\": {\"allowOut\": [\"0.0.0.0/0\"]}}", &open, out, sizeof out),
		     0);
	cr_assert_str_eq(out, "\"open\"");
	/* explicit answers are not bounded here: /v1's create checks them (a 403) */
	struct sessnet_policy off = cap("off", "");
	cr_assert_eq(map("{\"network\": {\"allowOut\": [\"a.org\"]}}", &off, out, sizeof out), 0);
	cr_assert_str_eq(out, "{\"allow\":[\"a.org\"]}");
}

Test(e2b_control, network_refused)
{
	char out[400];
	struct sessnet_policy open = cap("open", "");
	static const struct {
		const char *body, *says;
	} bad[] = {
	    {"{\"allow_internet_access\": \"yes\"}", "allow_internet_access must be"},
	    {"{\"network\": [\"a.org\"]}", "network must be an object"},
	    {"{\"network\": {\"allowOut\": [\"10.0.0.0/8\"]}}", "'10.0.0.0/8' cannot be mapped"},
	    {"{\"network\": {\"allowOut\": [\"1.2.3.4\"]}}", "'1.2.3.4' cannot be mapped"},
	    {"{\"network\": {\"allowOut\": [\"*.com\"]}}", "'*.com' cannot be mapped"},
	    {"{\"network\": {\"allowOut\": \"a.org\"}}", "allowOut must be a list"},
	    {"{\"network\": {\"allowOut\": [1]}}", "each entry is a string"},
	    {"{\"network\": {\"denyOut\": [\"evil.org\"]}}", "only ALL_TRAFFIC"},
	    {"{\"network\": {\"denyOut\": \"0.0.0.0/0\"}}", "denyOut must be a list"},
	    {"{\"network\": {\"egressProxy\": {\"address\": \"p:1080\"}}}",
	     "network.egressProxy cannot be mapped"},
	    {"{\"network\": {\"rules\": {}}}", "network.rules cannot be mapped"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(map(bad[i].body, &open, out, sizeof out), -1, "%s", bad[i].body);
		cr_assert(strstr(out, bad[i].says), "%s: %s", bad[i].body, out);
	}
}
