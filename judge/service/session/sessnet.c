/* sessnet: sessions' egress policies, their host rules and the operator's cap. */
#include "judge/service/session/sessnet.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const char *const mode_names[SESSNET_MODE_COUNT] = {"none", "allowlist", "open"};

const char *sessnet_mode_name(enum sessnet_mode m)
{
	return (unsigned)m < SESSNET_MODE_COUNT ? mode_names[m] : "none";
}

/* judge.ini's word for a cap's mode: "off" rather than "none". */
static const char *cap_name(enum sessnet_mode m)
{
	return m == SESSNET_NONE ? "off" : sessnet_mode_name(m);
}

/* Checks the labels of name (lower case, no trailing dot, no wildcard):
 * 1 to 63 bytes of [a-z0-9-] each, not starting or ending with '-', 253
 * bytes in all. Returns 0, or -1 with err. */
static int check_name(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);
	if (n == 0 || n > 253) {
		snprintf(err, errlen, "a host name is 1 to 253 bytes");
		return -1;
	}
	const char *p = name;
	const char *last = name;
	while (*p) {
		size_t len = strcspn(p, ".");
		if (len == 0 || len > 63) {
			snprintf(err, errlen, "'%.80s': a label is 1 to 63 bytes", name);
			return -1;
		}
		for (size_t i = 0; i < len; i++)
			if (!(islower((unsigned char)p[i]) || isdigit((unsigned char)p[i]) ||
			      p[i] == '-')) {
				snprintf(
				    err, errlen,
				    "'%.80s': a host name has letters, digits, '-' and '.' only",
				    name);
				return -1;
			}
		if (p[0] == '-' || p[len - 1] == '-') {
			snprintf(err, errlen, "'%.80s': a label neither starts nor ends with '-'",
				 name);
			return -1;
		}
		last = p;
		p += len;
		if (*p == '.') {
			p++;
			if (!*p) {
				snprintf(err, errlen, "'%.80s': an empty label", name);
				return -1;
			}
		}
	}
	/* a top-level label of digits only is an IPv4 address, not a name */
	if (strspn(last, "0123456789") == strlen(last)) {
		snprintf(err, errlen,
			 "'%.80s' is an address: rules name hosts (the proxy resolves them)", name);
		return -1;
	}
	return 0;
}

int sessnet_rule_parse(const char *s, struct sessnet_rule *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!s || !*s) {
		snprintf(err, errlen, "an empty host rule");
		return -1;
	}
	if (strlen(s) > SESSNET_HOST_MAX + 6) {
		snprintf(err, errlen, "a host rule is at most %d bytes", SESSNET_HOST_MAX + 6);
		return -1;
	}
	char buf[SESSNET_HOST_MAX + 8];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *p = buf; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (strchr(buf, '[') || strchr(buf, ':') != strrchr(buf, ':')) {
		snprintf(err, errlen, "'%.80s' is an address: rules name hosts", s);
		return -1;
	}
	char *colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		char *end;
		long port = strtol(colon + 1, &end, 10);
		if (!isdigit((unsigned char)colon[1]) || *end || port < 1 || port > 65535) {
			snprintf(err, errlen, "'%.80s': the port must be 1 to 65535", s);
			return -1;
		}
		out->port = (int)port;
	}
	size_t n = strlen(buf);
	if (n && buf[n - 1] == '.')
		buf[--n] = 0;
	const char *name = buf;
	bool wild = !strncmp(buf, "*.", 2);
	if (wild)
		name = buf + 2;
	if (strchr(name, '*')) {
		snprintf(err, errlen, "'%.80s': a wildcard is a leading '*.' only (*.example.org)",
			 s);
		return -1;
	}
	if (check_name(name, err, errlen) < 0)
		return -1;
	if (wild && !strchr(name, '.')) {
		snprintf(
		    err, errlen,
		    "'%.80s': a wildcard names a domain of two labels at least (*.example.org)", s);
		return -1;
	}
	snprintf(out->host, sizeof out->host, "%s", buf);
	return 0;
}

const char *sessnet_rule_text(const struct sessnet_rule *r, char *buf, size_t len)
{
	if (r->port)
		snprintf(buf, len, "%s:%d", r->host, r->port);
	else
		snprintf(buf, len, "%s", r->host);
	return buf;
}

/* True when name is under domain by one label or more (a.b under b). */
static bool under(const char *name, const char *domain)
{
	size_t n = strlen(name), d = strlen(domain);
	return n > d + 1 && name[n - d - 1] == '.' && !strcmp(name + n - d, domain);
}

bool sessnet_rule_matches(const struct sessnet_rule *r, const char *host, int port)
{
	char h[SESSNET_HOST_MAX + 2];
	size_t n = host ? strlen(host) : 0;
	if (n == 0 || n >= sizeof h)
		return false;
	for (size_t i = 0; i <= n; i++)
		h[i] = (char)tolower((unsigned char)host[i]);
	if (h[n - 1] == '.')
		h[n - 1] = 0;
	if (r->port && port != r->port)
		return false;
	if (!strncmp(r->host, "*.", 2))
		return under(h, r->host + 2);
	return !strcmp(h, r->host);
}

bool sessnet_allows(const struct sessnet_policy *p, const char *host, int port)
{
	if (p->mode == SESSNET_OPEN)
		return true;
	if (p->mode != SESSNET_ALLOWLIST)
		return false;
	for (size_t i = 0; i < p->nrules; i++)
		if (sessnet_rule_matches(&p->rules[i], host, port))
			return true;
	return false;
}

/* True when every name and port rule req matches, op matches too. */
static bool covers(const struct sessnet_rule *op, const struct sessnet_rule *req)
{
	if (op->port && op->port != req->port)
		return false;
	bool op_wild = !strncmp(op->host, "*.", 2), req_wild = !strncmp(req->host, "*.", 2);
	if (!op_wild)
		return !req_wild && !strcmp(op->host, req->host);
	const char *domain = op->host + 2;
	if (req_wild)
		return !strcmp(req->host + 2, domain) || under(req->host + 2, domain);
	return under(req->host, domain);
}

static int parse_mode(const char *s, enum sessnet_mode *m)
{
	for (int i = 0; i < SESSNET_MODE_COUNT; i++)
		if (!strcmp(s, mode_names[i])) {
			*m = (enum sessnet_mode)i;
			return 0;
		}
	return -1;
}

int sessnet_parse(const cJSON *network, struct sessnet_policy *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!network || cJSON_IsNull(network))
		return 0;
	if (cJSON_IsString(network)) {
		if (parse_mode(network->valuestring, &out->mode) < 0 ||
		    out->mode == SESSNET_ALLOWLIST) {
			snprintf(err, errlen,
				 "network must be \"none\", \"open\" or {\"allow\": [hosts]}, got "
				 "\"%.40s\"",
				 network->valuestring);
			return -1;
		}
		return 0;
	}
	if (!cJSON_IsObject(network)) {
		snprintf(err, errlen, "network must be \"none\", \"open\" or {\"allow\": [hosts]}");
		return -1;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, network)
	{
		if (strcmp(it->string, "mode") && strcmp(it->string, "allow")) {
			snprintf(err, errlen, "network: unknown field '%.40s' (mode, allow)",
				 it->string);
			return -1;
		}
	}
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(network, "mode");
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(network, "allow");
	out->mode = allow ? SESSNET_ALLOWLIST : SESSNET_NONE;
	if (mode && (!cJSON_IsString(mode) || parse_mode(mode->valuestring, &out->mode) < 0)) {
		snprintf(err, errlen, "network.mode must be none, allowlist or open");
		return -1;
	}
	if (!mode && !allow) {
		snprintf(err, errlen, "network needs mode or allow");
		return -1;
	}
	if (out->mode != SESSNET_ALLOWLIST) {
		if (allow) {
			snprintf(err, errlen, "network.allow goes with mode allowlist only");
			return -1;
		}
		return 0;
	}
	int n = cJSON_GetArraySize(allow);
	if (!cJSON_IsArray(allow) || n < 1 || n > SESSNET_MAX_RULES) {
		snprintf(err, errlen, "network.allow must be a list of 1 to %d host rules",
			 SESSNET_MAX_RULES);
		return -1;
	}
	cJSON_ArrayForEach(it, allow)
	{
		char e[200];
		if (!cJSON_IsString(it)) {
			snprintf(err, errlen, "network.allow: each rule is a string (host[:port])");
			return -1;
		}
		if (sessnet_rule_parse(it->valuestring, &out->rules[out->nrules], e, sizeof e) <
		    0) {
			snprintf(err, errlen, "network.allow: %s", e);
			return -1;
		}
		out->nrules++;
	}
	return 0;
}

int sessnet_cap_parse(const char *mode, const char *allow, struct sessnet_policy *cap, char *err,
		      size_t errlen)
{
	memset(cap, 0, sizeof *cap);
	if (!mode || !*mode || !strcmp(mode, "off"))
		cap->mode = SESSNET_NONE;
	else if (parse_mode(mode, &cap->mode) < 0 || cap->mode == SESSNET_NONE) {
		snprintf(err, errlen, "egress must be off, allowlist or open, got '%.40s'", mode);
		return -1;
	}
	for (const char *p = allow ? allow : ""; *p;) {
		p += strspn(p, ", \t");
		size_t n = strcspn(p, ", \t");
		if (n == 0)
			break;
		if (cap->nrules == SESSNET_MAX_RULES) {
			snprintf(err, errlen, "egress_allow has more than %d rules",
				 SESSNET_MAX_RULES);
			return -1;
		}
		char rule[SESSNET_HOST_MAX + 8], e[200];
		snprintf(rule, sizeof rule, "%.*s",
			 (int)(n < sizeof rule - 1 ? n : sizeof rule - 1), p);
		if (n >= sizeof rule - 1 ||
		    sessnet_rule_parse(rule, &cap->rules[cap->nrules], e, sizeof e) < 0) {
			snprintf(err, errlen, "egress_allow: %s",
				 n >= sizeof rule - 1 ? "a rule is too long" : e);
			return -1;
		}
		cap->nrules++;
		p += n;
	}
	return 0;
}

/* The check of sessnet_check and sessnet_check_key: key_id 0 is judge.ini's
 * cap, else that key's own (the refusal names the rule that refused). */
static int check(const struct sessnet_policy *p, const struct sessnet_policy *cap, long long key_id,
		 char *err, size_t errlen)
{
	if (p->mode > cap->mode) {
		if (key_id)
			snprintf(err, errlen,
				 "network '%s' is beyond this API key's cap: key %lld's egress = "
				 "%s (/v1/admin/keys/%lld)",
				 sessnet_mode_name(p->mode), key_id, cap_name(cap->mode), key_id);
		else
			snprintf(err, errlen,
				 "network '%s' is beyond this server's cap: judge.ini [sessions] "
				 "egress = %s",
				 sessnet_mode_name(p->mode), cap_name(cap->mode));
		return -1;
	}
	if (p->mode != SESSNET_ALLOWLIST || cap->nrules == 0)
		return 0;
	for (size_t i = 0; i < p->nrules; i++) {
		bool ok = false;
		for (size_t j = 0; j < cap->nrules && !ok; j++)
			ok = covers(&cap->rules[j], &p->rules[i]);
		if (!ok) {
			char t[SESSNET_HOST_MAX + 8];
			if (key_id)
				snprintf(err, errlen,
					 "'%s' is beyond this API key's allowlist: key %lld's "
					 "egress.allow (/v1/admin/keys/%lld)",
					 sessnet_rule_text(&p->rules[i], t, sizeof t), key_id,
					 key_id);
			else
				snprintf(err, errlen,
					 "'%s' is beyond the operator's allowlist: judge.ini "
					 "[sessions] egress_allow",
					 sessnet_rule_text(&p->rules[i], t, sizeof t));
			return -1;
		}
	}
	return 0;
}

int sessnet_check(const struct sessnet_policy *p, const struct sessnet_policy *cap, char *err,
		  size_t errlen)
{
	return check(p, cap, 0, err, errlen);
}

int sessnet_check_key(const struct sessnet_policy *p, const struct sessnet_policy *cap,
		      long long key_id, char *err, size_t errlen)
{
	return check(p, cap, key_id, err, errlen);
}

int sessnet_keycap_parse(const cJSON *j, struct sessnet_policy *cap, char *err, size_t errlen)
{
	memset(cap, 0, sizeof *cap);
	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen,
			 "egress must be {\"mode\": \"off\" | \"allowlist\" | \"open\", "
			 "\"allow\": [rules]} or null");
		return -1;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, j)
	{
		if (strcmp(it->string, "mode") && strcmp(it->string, "allow")) {
			snprintf(err, errlen, "egress: unknown field '%.40s' (mode, allow)",
				 it->string);
			return -1;
		}
	}
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(j, "mode");
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(j, "allow");
	if (!cJSON_IsString(mode) || !strcmp(mode->valuestring, "none") ||
	    (strcmp(mode->valuestring, "off") && parse_mode(mode->valuestring, &cap->mode) < 0)) {
		snprintf(err, errlen, "egress.mode must be off, allowlist or open");
		return -1;
	}
	if (allow && !cJSON_IsNull(allow) && cap->mode != SESSNET_ALLOWLIST) {
		snprintf(err, errlen, "egress.allow goes with mode allowlist only");
		return -1;
	}
	if (!allow || cJSON_IsNull(allow))
		return 0;
	if (!cJSON_IsArray(allow) || cJSON_GetArraySize(allow) > SESSNET_MAX_RULES) {
		snprintf(err, errlen, "egress.allow must be a list of at most %d host rules",
			 SESSNET_MAX_RULES);
		return -1;
	}
	cJSON_ArrayForEach(it, allow)
	{
		char e[200];
		if (!cJSON_IsString(it) ||
		    sessnet_rule_parse(it->valuestring, &cap->rules[cap->nrules], e, sizeof e) <
			0) {
			snprintf(err, errlen, "egress.allow: %s",
				 cJSON_IsString(it) ? e : "each rule is a string (host[:port])");
			return -1;
		}
		cap->nrules++;
	}
	return 0;
}

/* {"mode": mode, "allow": [rules]} (allow only for an allowlist). */
static cJSON *policy_json(const struct sessnet_policy *p, const char *mode)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "mode", mode);
	if (p->mode == SESSNET_ALLOWLIST) {
		cJSON *a = cJSON_AddArrayToObject(o, "allow");
		for (size_t i = 0; i < p->nrules; i++) {
			char t[SESSNET_HOST_MAX + 8];
			cJSON_AddItemToArray(
			    a, cJSON_CreateString(sessnet_rule_text(&p->rules[i], t, sizeof t)));
		}
	}
	return o;
}

cJSON *sessnet_cap_json(const struct sessnet_policy *cap)
{
	return policy_json(cap, cap_name(cap->mode));
}

void sessnet_cap_most(const struct sessnet_policy *cap, struct sessnet_policy *out)
{
	*out = *cap;
	/* an allowlist cap of any name has no rule to list: nothing is the most
	 * that is sure to lie within it */
	if (cap->mode == SESSNET_ALLOWLIST && cap->nrules == 0)
		out->mode = SESSNET_NONE;
	if (out->mode != SESSNET_ALLOWLIST)
		out->nrules = 0;
}

cJSON *sessnet_json(const struct sessnet_policy *p)
{
	return policy_json(p, sessnet_mode_name(p->mode));
}

/* An IPv4 address (host order) as sessnet_addr_refused judges it. */
static const char *v4_refused(uint32_t a)
{
	static const struct {
		uint32_t net;
		int bits;
		const char *why;
	} ranges[] = {
	    {0xA9FEA9FEu, 32, "metadata"},   /* 169.254.169.254 */
	    {0x00000000u, 8, "reserved"},    /* 0.0.0.0/8: this network */
	    {0x0A000000u, 8, "private"},     /* 10/8 */
	    {0x64400000u, 10, "shared"},     /* 100.64/10: carrier-grade NAT */
	    {0x7F000000u, 8, "loopback"},    /* 127/8 */
	    {0xA9FE0000u, 16, "link-local"}, /* 169.254/16 */
	    {0xAC100000u, 12, "private"},    /* 172.16/12 */
	    {0xC0000000u, 24, "reserved"},   /* 192.0.0/24: protocol assignments */
	    {0xC0000200u, 24, "reserved"},   /* 192.0.2/24: documentation */
	    {0xC0A80000u, 16, "private"},    /* 192.168/16 */
	    {0xC6120000u, 15, "reserved"},   /* 198.18/15: benchmarking */
	    {0xC6336400u, 24, "reserved"},   /* 198.51.100/24: documentation */
	    {0xCB007100u, 24, "reserved"},   /* 203.0.113/24: documentation */
	    {0xE0000000u, 4, "multicast"},   /* 224/4 */
	    {0xF0000000u, 4, "reserved"},    /* 240/4 and the broadcast address */
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		uint32_t mask =
		    ranges[i].bits == 32 ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> ranges[i].bits);
		if ((a & mask) == ranges[i].net)
			return ranges[i].why;
	}
	return NULL;
}

static uint32_t v4_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

const char *sessnet_addr_refused(const struct sockaddr *sa)
{
	if (!sa)
		return "unsupported";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return v4_refused(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family != AF_INET6)
		return "unsupported";
	const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const uint8_t zero[16], mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff},
				       nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	if (!memcmp(b, zero, 15))
		return b[15] == 1 ? "loopback" : "reserved"; /* ::1, :: and ::0.0.0.x */
	/* IPv4 inside: ::ffff:a.b.c.d, 64:ff9b::a.b.c.d, 2002:aabb:ccdd:: (6to4) */
	if (!memcmp(b, mapped, 12) || !memcmp(b, nat64, 12)) {
		return v4_refused(v4_at(b + 12));
	}
	if (b[0] == 0x20 && b[1] == 0x02)
		return v4_refused(v4_at(b + 2));
	if (!memcmp(b, zero, 12))
		return "reserved"; /* ::a.b.c.d, deprecated IPv4-compatible */
	if (b[0] == 0xfd && b[1] == 0x00 && b[2] == 0x0e && b[3] == 0xc2)
		return "metadata"; /* fd00:ec2::/32 (AWS's IPv6 metadata, ULA too) */
	if ((b[0] & 0xfe) == 0xfc)
		return "private"; /* fc00::/7 unique local */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local"; /* fe80::/10 */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return "private"; /* fec0::/10, the old site-local */
	if (b[0] == 0xff)
		return "multicast";
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return "reserved"; /* 2001:db8::/32 documentation */
	if (b[0] == 0x01 && !memcmp(b + 1, zero, 7))
		return "reserved"; /* 100::/64 discard */
	return NULL;
}
