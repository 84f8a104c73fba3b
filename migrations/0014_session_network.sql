-- 0014_session_network: a session's egress policy (judge/service/session/sessnet.h),
-- as POST /v1/sessions asked it within judge.ini's egress cap: {"mode":
-- "allowlist", "allow": ["api.github.com", "*.example.org:443"]} or {"mode":
-- "open"}; NULL is none, the default (no network at all, as every session
-- before this migration). GET /v1/sessions/{id} shows it as "network".
ALTER TABLE sessions ADD COLUMN network jsonb;
