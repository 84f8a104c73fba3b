/* sessnet: a session's egress policy (what its code may reach through the
 * host-side egress proxy) and the operator's cap on it. Pure: tested in
 * tests/test_sessnet.c.
 *
 * A policy is one of: none (the default: no network at all), an allowlist of
 * host rules, or open. A rule is a host name with an optional port
 * ("api.github.com", "pypi.org:443"), or a wildcard for the names under a
 * domain ("*.example.org" matches a.example.org and a.b.example.org, never
 * example.org itself). Names only: an address is not a rule (the proxy
 * resolves names on the host and refuses private addresses after resolution,
 * docs/egress.md). The operator's cap (judge.ini [sessions] egress and
 * egress_allow) is a policy too: its mode is the most a request may ask, and
 * its rules, when any, bound every rule an allowlist may ask.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The modes, in the order of what they open: a cap of one allows those before it. */
enum sessnet_mode { SESSNET_NONE, SESSNET_ALLOWLIST, SESSNET_OPEN, SESSNET_MODE_COUNT };

#define SESSNET_MAX_RULES 64
#define SESSNET_HOST_MAX  254 /* 253 bytes of a name and the NUL */

/* One rule: host in lower case, without a trailing dot; a wildcard keeps its
 * "*." prefix. port 0: any port. */
struct sessnet_rule {
	char host[SESSNET_HOST_MAX + 2];
	int port;
};

struct sessnet_policy {
	enum sessnet_mode mode;
	size_t nrules; /* allowlist: 1 to SESSNET_MAX_RULES; the cap: 0 = any name */
	struct sessnet_rule rules[SESSNET_MAX_RULES];
};

/* The mode's name in a request and in the API ("none", "allowlist", "open"). */
const char *sessnet_mode_name(enum sessnet_mode m);

/* Parses a rule "host[:port]" or "*.domain[:port]". Returns 0, or -1 with err
 * saying what is wrong with it. */
int sessnet_rule_parse(const char *s, struct sessnet_rule *out, char *err, size_t errlen);
/* The rule as text ("*.example.org:443"), into buf. Returns buf. */
const char *sessnet_rule_text(const struct sessnet_rule *r, char *buf, size_t len);
/* True when host (a name, any case, a trailing dot allowed) at port matches r. */
bool sessnet_rule_matches(const struct sessnet_rule *r, const char *host, int port);
/* True when p lets its session reach host at port: never for none, always for
 * open (the proxy still refuses private addresses), else when a rule matches. */
bool sessnet_allows(const struct sessnet_policy *p, const char *host, int port);

/* The request's "network" (absent or null: none): "none", "open", or
 * {"allow": [rule, ...]} (with an optional "mode": "allowlist"), or
 * {"mode": "none" | "open"}. Returns 0 with *out, or -1 with err (the
 * request is malformed: a 422). */
int sessnet_parse(const cJSON *network, struct sessnet_policy *out, char *err, size_t errlen);
/* The operator's cap from judge.ini's egress ("off", "allowlist", "open") and
 * egress_allow (comma-separated rules, may be empty). Returns 0, or -1 with err. */
int sessnet_cap_parse(const char *mode, const char *allow, struct sessnet_policy *cap, char *err,
		      size_t errlen);
/* Checks p against cap. Returns 0 when within it, or -1 with err naming the
 * rule it breaks (the request is refused: a 403). */
int sessnet_check(const struct sessnet_policy *p, const struct sessnet_policy *cap, char *err,
		  size_t errlen);
/* sessnet_check against key key_id's own cap (api_keys.egress, set through
 * the admin API): the refusal names the key's override, not judge.ini. */
int sessnet_check_key(const struct sessnet_policy *p, const struct sessnet_policy *cap,
		      long long key_id, char *err, size_t errlen);
/* A key's own cap as the admin API takes it and api_keys.egress stores it:
 * {"mode": "off" | "allowlist" | "open", "allow": [rule, ...]} (allow with
 * allowlist only; absent or empty: any name). It replaces judge.ini's cap for
 * that key's sessions, above or below it. Returns 0, or -1 with err. */
int sessnet_keycap_parse(const cJSON *j, struct sessnet_policy *cap, char *err, size_t errlen);
/* A cap as sessnet_keycap_parse reads it (mode "off" for none). Never NULL;
 * the caller deletes it. */
cJSON *sessnet_cap_json(const struct sessnet_policy *cap);
/* The most cap allows as a policy, into out: none under off, open under
 * open, the cap's rules under an allowlist that has some, and none under an
 * allowlist of any name (there is no rule to list). E2B's default
 * allow_internet_access asks for this (docs/e2b.md). */
void sessnet_cap_most(const struct sessnet_policy *cap, struct sessnet_policy *out);
/* The policy as the API shows and sessions.network stores it: {"mode": ...,
 * "allow": [...]} (allow only for an allowlist). Never NULL; the caller
 * deletes it. sessnet_parse reads it back. */
cJSON *sessnet_json(const struct sessnet_policy *p);

struct sockaddr;
/* Why the egress proxy must not connect to address sa (AF_INET or AF_INET6),
 * resolved from a name a policy allowed: "loopback", "private", "link-local",
 * "metadata" (cloud instance metadata), "shared" (carrier-grade NAT),
 * "multicast", "reserved" (unspecified, documentation, benchmarking, the
 * future), "unsupported" (another family); IPv4 inside IPv6 (mapped, NAT64,
 * 6to4) is judged as the IPv4 address. NULL: a public address. */
const char *sessnet_addr_refused(const struct sockaddr *sa);
