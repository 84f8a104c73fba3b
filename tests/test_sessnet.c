/* test_sessnet: sessions' egress policies (judge/service/session/sessnet.c): host
 * rules and their matching (wildcards, ports, case, trailing dots, addresses
 * refused as rules), the request's network field, the operator's cap and the
 * check of a request against it, a key's own cap and the most a cap allows,
 * and the stored JSON read back. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/service/session/sessnet.h"

static struct sessnet_rule rule(const char *s)
{
	struct sessnet_rule r;
	char err[200];
	cr_assert_eq(sessnet_rule_parse(s, &r, err, sizeof err), 0, "%s: %s", s, err);
	return r;
}

Test(sessnet, rules_parse)
{
	struct sessnet_rule r = rule("API.GitHub.com");
	cr_assert_str_eq(r.host, "api.github.com");
	cr_assert_eq(r.port, 0);
	r = rule("*.example.org:443");
	cr_assert_str_eq(r.host, "*.example.org");
	cr_assert_eq(r.port, 443);
	r = rule("pypi.org.");
	cr_assert_str_eq(r.host, "pypi.org");
	r = rule("localhost");
	cr_assert_str_eq(r.host, "localhost");
	char t[300];
	r = rule("*.a.io:8080");
	cr_assert_str_eq(sessnet_rule_text(&r, t, sizeof t), "*.a.io:8080");

	static const char *const bad[] = {
	    "",		       /* empty */
	    "10.0.0.1",	       /* an address */
	    "169.254.169.254", /* the metadata address */
	    "[::1]",	       /* IPv6 */
	    "::1",
	    "fe80::1:80",
	    "a.com:0",	     /* port out of range */
	    "a.com:65536",   /* port out of range */
	    "a.com:+80",     /* a sign */
	    "a.com:",	     /* no port */
	    "a.com:80x",     /* junk */
	    "*.com",	     /* a wildcard over a top-level domain */
	    "*",	     /* everything */
	    "a.*.com",	     /* a wildcard inside */
	    "*a.com",	     /* not a label wildcard */
	    "a..com",	     /* an empty label */
	    ".a.com",	     /* an empty label */
	    "-a.com",	     /* a label starting with '-' */
	    "a-.com",	     /* a label ending with '-' */
	    "a_b.com",	     /* not LDH */
	    "a b.com",	     /* a space */
	    "http://a.com",  /* a URL */
	    "a.com/path",    /* a path */
	    "user@a.com",    /* user info */
	    "a.com\r\nX: y", /* header injection */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct sessnet_rule x;
		char err[200] = "";
		cr_assert_eq(sessnet_rule_parse(bad[i], &x, err, sizeof err), -1, "'%s' parsed",
			     bad[i]);
		cr_assert(strlen(err) > 0, "'%s' has no message", bad[i]);
	}
	/* a label of 64 bytes, a name of 254 */
	char lbl[80], name[300];
	memset(lbl, 'a', 64);
	snprintf(lbl + 64, sizeof lbl - 64, ".com");
	struct sessnet_rule x;
	char err[200];
	cr_assert_eq(sessnet_rule_parse(lbl, &x, err, sizeof err), -1);
	name[0] = 0;
	while (strlen(name) < 250)
		strcat(name, "abcdefghi.");
	strcat(name, "comx"); /* 254 bytes */
	cr_assert_eq(sessnet_rule_parse(name, &x, err, sizeof err), -1);
}

Test(sessnet, rules_match)
{
	static const struct {
		const char *rule, *host;
		int port;
		bool match;
	} cases[] = {
	    {"api.github.com", "api.github.com", 443, true},
	    {"api.github.com", "API.GITHUB.COM", 80, true},
	    {"api.github.com", "api.github.com.", 443, true},
	    {"api.github.com", "github.com", 443, false},
	    {"api.github.com", "xapi.github.com", 443, false},
	    {"api.github.com", "api.github.com.evil.org", 443, false},
	    {"api.github.com:443", "api.github.com", 443, true},
	    {"api.github.com:443", "api.github.com", 80, false},
	    {"*.example.org", "a.example.org", 443, true},
	    {"*.example.org", "a.b.example.org", 8080, true},
	    {"*.example.org", "example.org", 443, false},
	    {"*.example.org", "badexample.org", 443, false},
	    {"*.example.org", "a.example.org.evil.com", 443, false},
	    {"*.example.org", ".example.org", 443, false},
	    {"*.example.org:443", "a.example.org", 443, true},
	    {"*.example.org:443", "a.example.org", 80, false},
	    {"pypi.org", "", 443, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sessnet_rule r = rule(cases[i].rule);
		cr_assert_eq(sessnet_rule_matches(&r, cases[i].host, cases[i].port), cases[i].match,
			     "%s vs %s:%d", cases[i].rule, cases[i].host, cases[i].port);
	}
	struct sessnet_rule a = rule("a.com");
	cr_assert_not(sessnet_rule_matches(&a, NULL, 1));
}

static struct sessnet_policy parse(const char *json)
{
	struct sessnet_policy p;
	char err[300];
	cJSON *j = cJSON_Parse(json);
	cr_assert(j || !strcmp(json, "null"), "%s", json);
	cr_assert_eq(sessnet_parse(j, &p, err, sizeof err), 0, "%s: %s", json, err);
	cJSON_Delete(j);
	return p;
}

Test(sessnet, request_field)
{
	struct sessnet_policy p;
	char err[300];
	cr_assert_eq(sessnet_parse(NULL, &p, err, sizeof err), 0);
	cr_assert_eq(p.mode, SESSNET_NONE);
	cr_assert_eq(parse("null").mode, SESSNET_NONE);
	cr_assert_eq(parse("\"none\"").mode, SESSNET_NONE);
	cr_assert_eq(parse("\"open\"").mode, SESSNET_OPEN);
	cr_assert_eq(parse("{\"mode\": \"open\"}").mode, SESSNET_OPEN);
	p = parse("{\"allow\": [\"api.github.com\", \"*.example.org:443\"]}");
	cr_assert_eq(p.mode, SESSNET_ALLOWLIST);
	cr_assert_eq(p.nrules, 2);
	cr_assert(sessnet_allows(&p, "api.github.com", 443));
	cr_assert(sessnet_allows(&p, "x.example.org", 443));
	cr_assert_not(sessnet_allows(&p, "x.example.org", 80));
	cr_assert_not(sessnet_allows(&p, "evil.org", 443));
	p = parse("{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\"]}");
	cr_assert_eq(p.nrules, 1);
	p = parse("\"none\"");
	cr_assert_not(sessnet_allows(&p, "pypi.org", 443));
	p = parse("\"open\"");
	cr_assert(sessnet_allows(&p, "anything.example", 1));

	static const char *const bad[] = {
	    "\"allowlist\"",
	    "\"all\"",
	    "true",
	    "42",
	    "[\"a.com\"]",
	    "{}",
	    "{\"allow\": []}",
	    "{\"allow\": \"a.com\"}",
	    "{\"allow\": [1]}",
	    "{\"allow\": [\"10.0.0.1\"]}",
	    "{\"mode\": \"open\", \"allow\": [\"a.com\"]}",
	    "{\"mode\": \"none\", \"allow\": [\"a.com\"]}",
	    "{\"mode\": \"sometimes\"}",
	    "{\"mode\": 1}",
	    "{\"allow\": [\"a.com\"], \"deny\": [\"b.com\"]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON *j = cJSON_Parse(bad[i]);
		cr_assert_not_null(j, "%s", bad[i]);
		err[0] = 0;
		cr_assert_eq(sessnet_parse(j, &p, err, sizeof err), -1, "%s parsed", bad[i]);
		cr_assert(strlen(err) > 0);
		cJSON_Delete(j);
	}
	/* more rules than a policy holds */
	cJSON *many = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(many, "allow");
	for (int i = 0; i <= SESSNET_MAX_RULES; i++) {
		char h[32];
		snprintf(h, sizeof h, "h%d.example.org", i);
		cJSON_AddItemToArray(a, cJSON_CreateString(h));
	}
	cr_assert_eq(sessnet_parse(many, &p, err, sizeof err), -1);
	cJSON_Delete(many);
}

static struct sessnet_policy cap(const char *mode, const char *allow)
{
	struct sessnet_policy c;
	char err[300];
	cr_assert_eq(sessnet_cap_parse(mode, allow, &c, err, sizeof err), 0, "%s", err);
	return c;
}

Test(sessnet, operator_cap)
{
	char err[300];
	struct sessnet_policy c = cap("off", "");
	struct sessnet_policy none = parse("\"none\""), open = parse("\"open\"");
	struct sessnet_policy gh = parse("{\"allow\": [\"api.github.com\"]}");
	cr_assert_eq(cap(NULL, NULL).mode, SESSNET_NONE);
	cr_assert_eq(sessnet_check(&none, &c, err, sizeof err), 0);
	cr_assert_eq(sessnet_check(&gh, &c, err, sizeof err), -1);
	cr_assert_str_eq(err, "network 'allowlist' is beyond this server's cap: judge.ini "
			      "[sessions] egress = off");
	cr_assert_eq(sessnet_check(&open, &c, err, sizeof err), -1);

	c = cap("allowlist", "");
	cr_assert_eq(sessnet_check(&gh, &c, err, sizeof err), 0);
	cr_assert_eq(sessnet_check(&open, &c, err, sizeof err), -1);
	cr_assert_str_eq(err, "network 'open' is beyond this server's cap: judge.ini [sessions] "
			      "egress = allowlist");

	/* the operator's rules bound the request's */
	c = cap("allowlist", "api.github.com, *.example.org:443,pypi.org:443");
	cr_assert_eq(c.nrules, 3);
	static const struct {
		const char *req;
		bool ok;
	} cases[] = {
	    {"api.github.com", true},
	    {"api.github.com:443", true},
	    {"github.com", false},
	    {"*.github.com", false},
	    {"a.example.org:443", true},
	    {"*.example.org:443", true},
	    {"*.a.example.org:443", true},
	    {"a.example.org", false}, /* any port, the operator said 443 */
	    {"a.example.org:80", false},
	    {"example.org:443", false}, /* the apex is not under its wildcard */
	    {"pypi.org:443", true},
	    {"pypi.org", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char json[200];
		snprintf(json, sizeof json, "{\"allow\": [\"%s\"]}", cases[i].req);
		struct sessnet_policy p = parse(json);
		int rc = sessnet_check(&p, &c, err, sizeof err);
		cr_assert_eq(rc, cases[i].ok ? 0 : -1, "%s", cases[i].req);
		if (!cases[i].ok)
			cr_assert(strstr(err, "egress_allow") && strstr(err, cases[i].req), "%s",
				  err);
	}
	/* one rule out of bounds refuses the whole request, naming that rule */
	struct sessnet_policy two = parse("{\"allow\": [\"api.github.com\", \"evil.org\"]}");
	cr_assert_eq(sessnet_check(&two, &c, err, sizeof err), -1);
	cr_assert_str_eq(err, "'evil.org' is beyond the operator's allowlist: judge.ini "
			      "[sessions] egress_allow");

	c = cap("open", "");
	cr_assert_eq(sessnet_check(&open, &c, err, sizeof err), 0);
	cr_assert_eq(sessnet_check(&two, &c, err, sizeof err), 0);

	struct sessnet_policy x;
	cr_assert_eq(sessnet_cap_parse("on", "", &x, err, sizeof err), -1);
	cr_assert_eq(sessnet_cap_parse("none", "", &x, err, sizeof err), -1);
	cr_assert_eq(sessnet_cap_parse("allowlist", "a.com,10.0.0.1", &x, err, sizeof err), -1);
	cr_assert(strstr(err, "egress_allow"), "%s", err);
}

Test(sessnet, stored_json_reads_back)
{
	const char *in[] = {"\"none\"", "\"open\"",
			    "{\"allow\": [\"API.github.com\", \"*.example.org:443\"]}"};
	const char *want[] = {"{\"mode\":\"none\"}", "{\"mode\":\"open\"}",
			      "{\"mode\":\"allowlist\",\"allow\":[\"api.github.com\","
			      "\"*.example.org:443\"]}"};
	for (int i = 0; i < 3; i++) {
		struct sessnet_policy p = parse(in[i]);
		cJSON *j = sessnet_json(&p);
		char *s = cJSON_PrintUnformatted(j);
		cr_assert_str_eq(s, want[i]);
		struct sessnet_policy back;
		char err[200];
		cr_assert_eq(sessnet_parse(j, &back, err, sizeof err), 0, "%s", err);
		cr_assert_eq(back.mode, p.mode);
		cr_assert_eq(back.nrules, p.nrules);
		for (size_t k = 0; k < p.nrules; k++) {
			cr_assert_str_eq(back.rules[k].host, p.rules[k].host);
			cr_assert_eq(back.rules[k].port, p.rules[k].port);
		}
		free(s);
		cJSON_Delete(j);
	}
}

/* addr TEXT: an IPv4 or IPv6 address as a sockaddr, judged. */
static const char *judge_addr(const char *text)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1)
		in->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1)
		in6->sin6_family = AF_INET6;
	else
		cr_assert_fail("not an address: %s", text);
	return sessnet_addr_refused((struct sockaddr *)&ss);
}

Test(sessnet, addresses_refused_after_resolution)
{
	static const struct {
		const char *addr, *why; /* why NULL: public, the proxy may connect */
	} cases[] = {
	    {"127.0.0.1", "loopback"},
	    {"127.255.255.254", "loopback"},
	    {"::1", "loopback"},
	    {"::ffff:127.0.0.1", "loopback"},
	    {"64:ff9b::7f00:1", "loopback"},
	    {"2002:7f00:1::", "loopback"},
	    {"10.1.2.3", "private"},
	    {"172.16.0.1", "private"},
	    {"172.31.255.255", "private"},
	    {"192.168.1.1", "private"},
	    {"::ffff:10.0.0.1", "private"},
	    {"fd12:3456::1", "private"},
	    {"fc00::1", "private"},
	    {"169.254.169.254", "metadata"},
	    {"::ffff:169.254.169.254", "metadata"},
	    {"fd00:ec2::254", "metadata"},
	    {"169.254.1.1", "link-local"},
	    {"fe80::1", "link-local"},
	    {"100.64.0.1", "shared"},
	    {"0.0.0.0", "reserved"},
	    {"::", "reserved"},
	    {"192.0.2.1", "reserved"},
	    {"198.18.0.1", "reserved"},
	    {"203.0.113.9", "reserved"},
	    {"2001:db8::1", "reserved"},
	    {"240.0.0.1", "reserved"},
	    {"255.255.255.255", "reserved"},
	    {"224.0.0.1", "multicast"},
	    {"ff02::1", "multicast"},
	    {"8.8.8.8", NULL},
	    {"172.32.0.1", NULL},
	    {"100.128.0.1", NULL},
	    {"169.255.0.1", NULL},
	    {"2606:4700::1111", NULL},
	    {"::ffff:1.1.1.1", NULL},
	    {"2002:0808:0808::", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *why = judge_addr(cases[i].addr);
		if (!cases[i].why)
			cr_assert_null(why, "%s refused as %s", cases[i].addr, why);
		else
			cr_assert(why && !strcmp(why, cases[i].why), "%s: %s, want %s",
				  cases[i].addr, why ? why : "public", cases[i].why);
	}
	struct sockaddr un = {.sa_family = AF_UNIX};
	cr_assert_str_eq(sessnet_addr_refused(&un), "unsupported");
	cr_assert_str_eq(sessnet_addr_refused(NULL), "unsupported");
}

static struct sessnet_policy keycap(const char *json)
{
	struct sessnet_policy c;
	char err[300];
	cJSON *j = cJSON_Parse(json);
	cr_assert_not_null(j, "bad test JSON: %s", json);
	int rc = sessnet_keycap_parse(j, &c, err, sizeof err);
	cJSON_Delete(j);
	cr_assert_eq(rc, 0, "%s: %s", json, err);
	return c;
}

/* A key's own cap (the admin API's egress): parsed, shown, and the refusal
 * names the key's override, not judge.ini. */
Test(sessnet, key_cap)
{
	char err[300];
	struct sessnet_policy c = keycap("{\"mode\": \"off\"}");
	cr_assert_eq(c.mode, SESSNET_NONE);
	c = keycap("{\"mode\": \"open\"}");
	cr_assert_eq(c.mode, SESSNET_OPEN);
	c = keycap("{\"mode\": \"allowlist\", \"allow\": [\"API.github.com\", \"*.x.org:443\"]}");
	cr_assert(c.mode == SESSNET_ALLOWLIST && c.nrules == 2);
	cJSON *j = sessnet_cap_json(&c);
	char *t = cJSON_PrintUnformatted(j);
	cr_assert_str_eq(t,
			 "{\"mode\":\"allowlist\",\"allow\":[\"api.github.com\",\"*.x.org:443\"]}");
	free(t);
	cJSON_Delete(j);
	c = keycap("{\"mode\": \"allowlist\"}"); /* any name */
	cr_assert(c.mode == SESSNET_ALLOWLIST && c.nrules == 0);
	c = keycap("{\"mode\": \"off\"}");
	j = sessnet_cap_json(&c);
	t = cJSON_PrintUnformatted(j);
	cr_assert_str_eq(t, "{\"mode\":\"off\"}");
	free(t);
	cJSON_Delete(j);

	static const char *const bad[] = {
	    "\"open\"",
	    "{}",
	    "{\"mode\": \"none\"}",
	    "{\"mode\": \"on\"}",
	    "{\"mode\": \"open\", \"allow\": [\"a.org\"]}",
	    "{\"mode\": \"off\", \"allow\": []}",
	    "{\"mode\": \"allowlist\", \"allow\": [\"10.0.0.1\"]}",
	    "{\"mode\": \"allowlist\", \"allow\": \"a.org\"}",
	    "{\"mode\": \"allowlist\", \"allow\": [1]}",
	    "{\"mode\": \"allowlist\", \"deny\": [\"a.org\"]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct sessnet_policy x;
		cJSON *b = cJSON_Parse(bad[i]);
		cr_assert_eq(sessnet_keycap_parse(b, &x, err, sizeof err), -1, "%s", bad[i]);
		cr_assert(strstr(err, "egress"), "%s: %s", bad[i], err);
		cJSON_Delete(b);
	}

	struct sessnet_policy open = parse("\"open\""),
			      gh = parse("{\"allow\": [\"api.github.com\"]}");
	struct sessnet_policy evil = parse("{\"allow\": [\"evil.org\"]}");
	c = keycap("{\"mode\": \"off\"}");
	cr_assert_eq(sessnet_check_key(&gh, &c, 7, err, sizeof err), -1);
	cr_assert_str_eq(err, "network 'allowlist' is beyond this API key's cap: key 7's egress = "
			      "off (/v1/admin/keys/7)");
	c = keycap("{\"mode\": \"allowlist\", \"allow\": [\"api.github.com\"]}");
	cr_assert_eq(sessnet_check_key(&gh, &c, 7, err, sizeof err), 0);
	cr_assert_eq(sessnet_check_key(&open, &c, 7, err, sizeof err), -1);
	cr_assert_eq(sessnet_check_key(&evil, &c, 7, err, sizeof err), -1);
	cr_assert_str_eq(err, "'evil.org' is beyond this API key's allowlist: key 7's "
			      "egress.allow (/v1/admin/keys/7)");
	c = keycap("{\"mode\": \"open\"}");
	cr_assert_eq(sessnet_check_key(&open, &c, 7, err, sizeof err), 0);
}

/* The most a cap allows (E2B's default allow_internet_access): never beyond it. */
Test(sessnet, cap_most)
{
	char err[300];
	static const struct {
		const char *mode, *allow;
		enum sessnet_mode want;
		size_t nrules;
	} cases[] = {
	    {"off", "", SESSNET_NONE, 0},
	    {"allowlist", "", SESSNET_NONE, 0}, /* any name: no rule to list */
	    {"allowlist", "api.github.com, *.x.org:443", SESSNET_ALLOWLIST, 2},
	    {"open", "", SESSNET_OPEN, 0},
	    {"open", "a.org", SESSNET_OPEN, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sessnet_policy c = cap(cases[i].mode, cases[i].allow), m;
		sessnet_cap_most(&c, &m);
		cr_assert_eq(m.mode, cases[i].want, "%s %s", cases[i].mode, cases[i].allow);
		cr_assert_eq(m.nrules, cases[i].nrules, "%s %s", cases[i].mode, cases[i].allow);
		cr_assert_eq(sessnet_check(&m, &c, err, sizeof err), 0, "%s", err);
	}
}
