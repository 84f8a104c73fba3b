-- 0013_session_history: GET /v1/sessions/{id}/history reads a session's
-- calls in order (judge/service/session/sessdb.h, sessdb_history): every
-- session_calls row is the audit trail, kept as long as its session's row
-- (ON DELETE CASCADE). The pending-only index does not serve that scan.
CREATE INDEX session_calls_history ON session_calls (session_id, id);
