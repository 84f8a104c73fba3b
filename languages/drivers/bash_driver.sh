# bash_driver.sh: the bash session driver (languages/drivers/PROTOCOL.md).
# One shell for the whole session: each cell is eval'd in it, so the working
# directory, variables, functions and exports persist. The cell runs inside a
# function so that SIGINT can end it (`return` from the trap); declare and
# typeset at a cell's top level are made global so that they persist too.

__judge_token=$JUDGE_TOKEN
unset JUDGE_TOKEN
# the request stream off fd 0, a private fd for replies; user code gets neither
exec {__judge_req}<&0 {__judge_reply}>&1 </dev/null
__judge_n=0
__judge_in_cell=

declare() {
	if [ "${FUNCNAME[1]}" = __judge_cell ]; then builtin declare -g "$@"; else builtin declare "$@"; fi
}
typeset() {
	if [ "${FUNCNAME[1]}" = __judge_cell ]; then builtin typeset -g "$@"; else builtin typeset "$@"; fi
}

# JSON string of $1 (bash has no JSON: escape what RFC 8259 requires)
__judge_json() {
	local s=$1 c out= i
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		if [[ $c < ' ' ]]; then printf -v c '\\u%04x' "'$c"; fi
		out+=$c
	done
	printf '"%s"' "$out"
}

__judge_send() {
	local LC_ALL=C
	printf '%s %d\n%s' "$__judge_token" "${#1}" "$1" >&"$__judge_reply"
}

__judge_cell() {
	eval "$__judge_code"
}

# the cell's own variables ("K=V\0" each, $1 bytes on the request stream),
# exported; what they replaced is kept for __judge_env_restore. The driver's
# own names (__judge_*) are left alone.
__judge_env_set() {
	local kv k
	__judge_env_keys=() __judge_env_old=() __judge_env_had=()
	(($1 > 0)) || return 0
	head -c "$1" <&"$__judge_req" >"${TMPDIR:-/tmp}/.judge-env"
	while IFS= read -r -d '' kv; do
		k=${kv%%=*}
		[[ $k == __judge_* || $k == "$kv" ]] && continue
		__judge_env_keys+=("$k")
		# 0: unset, 1: a shell variable, 2: an exported one
		if [[ $(builtin declare -p "$k" 2>/dev/null) == "declare -"*x* ]]; then
			__judge_env_had+=(2) __judge_env_old+=("${!k}")
		elif [[ -v $k ]]; then
			__judge_env_had+=(1) __judge_env_old+=("${!k}")
		else
			__judge_env_had+=(0) __judge_env_old+=("")
		fi
		export "$kv"
	done <"${TMPDIR:-/tmp}/.judge-env"
	rm -f "${TMPDIR:-/tmp}/.judge-env"
}
__judge_env_restore() {
	local i
	for ((i = ${#__judge_env_keys[@]} - 1; i >= 0; i--)); do
		case ${__judge_env_had[i]} in
		2) export "${__judge_env_keys[i]}=${__judge_env_old[i]}" ;;
		1)
			export -n "${__judge_env_keys[i]}"
			printf -v "${__judge_env_keys[i]}" '%s' "${__judge_env_old[i]}"
			;;
		*) unset "${__judge_env_keys[i]}" ;;
		esac
	done
}

trap '[ -n "$__judge_in_cell" ] && return 130' INT
__judge_send "{\"ready\": true, \"version\": $(__judge_json "$BASH_VERSION")}"
while LC_ALL=C IFS=' ' read -r __judge_word __judge_clen __judge_slen __judge_elen <&"$__judge_req"; do
	[ "$__judge_word" = CELL ] || exit 2
	__judge_code=
	if ((__judge_clen > 0)); then
		LC_ALL=C IFS= read -r -d '' -N "$__judge_clen" __judge_code <&"$__judge_req"
	fi
	__judge_in=/dev/null
	if ((__judge_slen > 0)); then
		__judge_in=${TMPDIR:-/tmp}/.judge-stdin
		head -c "$__judge_slen" <&"$__judge_req" >"$__judge_in"
	fi
	__judge_env_set "${__judge_elen:-0}"
	__judge_n=$((__judge_n + 1))
	__judge_in_cell=1
	__judge_cell <"$__judge_in" {__judge_req}<&- {__judge_reply}>&-
	__judge_rc=$?
	__judge_in_cell=
	__judge_env_restore
	if [ "$__judge_rc" = 0 ]; then
		__judge_send '{"status": "ok", "result": null, "error": null}'
	else
		__judge_send "{\"status\": \"error\", \"result\": null, \"error\": {\"name\": \"ExitStatus\", \"value\": \"$__judge_rc\", \"traceback\": \"\"}}"
	fi
done
exit 0
