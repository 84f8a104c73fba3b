#!/usr/bin/env bash
# openapi.sh: GET /openapi.json is an OpenAPI 3.1 document that a validator from
# npm accepts; the router and the document list the same routes (each path and
# method of the document is answered, each path of route.c's table is in the
# document, with every method the server takes); /docs and /docs.js are served.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

# judge.ini as shipped but for the listener (svc.sh)
svc_prepare
svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }
pass "serve starts"

# status METHOD PATH: the status code of a request without an API key
status() { curl -s -o /dev/null -m 20 -X "$1" -w '%{http_code}' "$U$2"; }
# body METHOD PATH: the body of a request without an API key
body() { curl -s -m 20 -X "$1" "$U$2"; }

DOC=$SVC_TMP/openapi.json
curl -s -m 20 -D "$SVC_TMP/oa.h" -o "$DOC" "$U/openapi.json"
grep -qi '^content-type: application/json' "$SVC_TMP/oa.h" && pass "openapi.json is application/json, no key" ||
	fail "openapi.json content type" "$(cat "$SVC_TMP/oa.h")"
expect_json "openapi.json is OpenAPI 3.1.x" "$(cat "$DOC")" '.openapi | test("^3\\.1\\.[0-9]+$")'
cmp -s "$DOC" web/openapi.json && pass "served document is web/openapi.json" ||
	fail "served document is web/openapi.json"
expect_json "security schemes: Bearer and X-Auth-Token" "$(cat "$DOC")" \
	'.components.securitySchemes | (.[] | select(.scheme == "bearer")) and (.[] | select(.name == "X-Auth-Token"))'
expect_json "error shape {error: {code, message}}" "$(cat "$DOC")" \
	'.components.schemas.Error.properties.error.required == ["code", "message"]'

# ---- a validator from npm, in a temporary folder ----
NPM_DIR=$SVC_TMP/npm
NODE=/opt/judge/runtimes/node22/bin/node
[ -x "$NODE" ] || NODE=node
mkdir -p "$NPM_DIR"
if timeout 300 npm install --no-audit --no-fund --silent --prefix "$NPM_DIR" \
	@apidevtools/swagger-parser@10 >"$NPM_DIR/install.log" 2>&1; then
	cat >"$NPM_DIR/validate.js" <<'JS'
const SwaggerParser = require("@apidevtools/swagger-parser");
SwaggerParser.validate(process.argv[2]).then(
  (api) => console.log("valid: " + api.info.title + " " + api.openapi),
  (e) => { console.error(e.message); process.exit(1); });
JS
	if out=$(cd "$NPM_DIR" && "$NODE" validate.js "$DOC" 2>&1); then
		pass "swagger-parser validates it ($out)"
	else
		fail "swagger-parser validates it" "$out"
	fi
else
	fail "npm install @apidevtools/swagger-parser" "$(tail -5 "$NPM_DIR/install.log")"
fi

# ---- every path and method of the document is a route of the server ----
# A real route answers without a key: 401 (route and method are checked before
# the key), or 200 for the open ones; never 404 "no such endpoint" nor 405.
while read -r method path open; do
	p=${path//\{id\}/1}
	p=${p//\{token\}/00000000-0000-0000-0000-000000000000}
	out=$(curl -s -m 20 -X "${method^^}" -w '\n%{http_code}' "$U$p")
	st=${out##*$'\n'}
	want=401
	[ "$open" = true ] && want=200
	if [ "$st" = "$want" ]; then
		pass "document route ${method^^} $path answered ($st)"
	else
		fail "document route ${method^^} $path answered" "status $st, want $want: $(head -c 200 <<<"$out")"
	fi
done < <(jq -r '.paths | to_entries[] | .key as $p | .value | to_entries[] |
	"\(.key) \($p) \(.value.security == [{}])"' "$DOC")

# ---- every route of route.c's table is in the document, with its methods ----
routes=$(sed -n 's/^[[:space:]]*{"\(\/[^"]*\)", R_[A-Z0-9_]*},.*/\1/p' judge/api/route.c)
# the /{id} routes: their prefixes (#define X "/.../")
for prefix in $(sed -n 's/^#define [A-Z0-9_]*[[:space:]]*"\(\/[^"]*\/\)"$/\1/p' judge/api/route.c); do
	routes+=$'\n'"${prefix}{x}"
done
n=$(wc -l <<<"$routes")
[ "$n" -ge 25 ] && pass "route.c's table read ($n routes)" || fail "route.c's table read" "$routes"
for r in $routes; do
	if [[ $r == *"{x}" ]]; then
		dp=$(jq -r --arg p "${r%\{x\}}" '.paths | keys[] | select(startswith($p) and
			(.[($p | length):] | test("^\\{[a-z_]+\\}$")))' "$DOC")
		probe=${r%\{x\}}1
	else
		dp=$(jq -r --arg p "$r" '.paths | keys[] | select(. == $p)' "$DOC")
		probe=$r
	fi
	if [ -z "$dp" ]; then
		fail "route $r is in the document"
		continue
	fi
	# the methods the server takes on it (405 for the others) are in the document
	missing=""
	for m in GET POST PUT DELETE PATCH; do
		st=$(status "$m" "$probe")
		[ "$st" = 405 ] && continue
		jq -e --arg p "$dp" --arg m "${m,,}" '.paths[$p][$m]' "$DOC" >/dev/null || missing+=" $m($st)"
	done
	[ -z "$missing" ] && pass "route $r is in the document as $dp, with its methods" ||
		fail "route $r: methods the server takes but the document lacks:$missing"
done
st=$(status GET /no/such/route)
expect_json "an unknown path is still 404 no such endpoint ($st)" "$(body GET /no/such/route)" \
	'.error.code == "not_found" and (.error.message | startswith("no such endpoint"))'

# ---- the /docs page ----
curl -s -m 20 -D "$SVC_TMP/docs.h" -o "$SVC_TMP/docs.html" "$U/docs"
grep -qi '^content-type: text/html' "$SVC_TMP/docs.h" && pass "/docs is text/html, no key" ||
	fail "/docs is text/html" "$(head -5 "$SVC_TMP/docs.h")"
grep -q '<script src="/docs.js"></script>' "$SVC_TMP/docs.html" && pass "/docs loads /docs.js" ||
	fail "/docs loads /docs.js" "$(head -c 300 "$SVC_TMP/docs.html")"
if grep -Eqi '(src|href)="(https?:)?//' "$SVC_TMP/docs.html" web/docs.js; then
	fail "/docs loads nothing from another host"
else
	pass "/docs loads nothing from another host"
fi
grep -qi "^content-security-policy: default-src 'self'" "$SVC_TMP/docs.h" && pass "/docs has a self-only CSP" ||
	fail "/docs has a self-only CSP"
curl -s -m 20 -D "$SVC_TMP/js.h" -o "$SVC_TMP/docs.js" "$U/docs.js"
grep -qi '^content-type: text/javascript' "$SVC_TMP/js.h" && cmp -s "$SVC_TMP/docs.js" web/docs.js &&
	pass "/docs.js is served as JavaScript" || fail "/docs.js is served" "$(head -5 "$SVC_TMP/js.h")"
check "docs.js parses" "$NODE" --check web/docs.js
[ "$(status HEAD /openapi.json)" = 200 ] && pass "HEAD /openapi.json" || fail "HEAD /openapi.json"
[ "$(status POST /openapi.json)" = 405 ] && pass "POST /openapi.json is 405" || fail "POST /openapi.json is 405"

kill -0 "$SVC_SERVE_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
finish
