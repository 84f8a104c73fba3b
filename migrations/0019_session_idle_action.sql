-- 0019_session_idle_action: what an idle session does when its idle_ttl
-- passes (docs/sessions.md, "Pause, resume, snapshots and forks"): 'close'
-- ends it as before; 'pause' has its worker store it as a paused session
-- (its image, no sandbox), which the next call resumes. The request's
-- idle_action, else judge.ini's session_idle_action.
--
-- A paused session's expires_at is when it is deleted (judge.ini
-- paused_retention_s after its pause, within its lifetime): a worker's sweep
-- ends it there and deletes the pause images of ended sessions.
ALTER TABLE sessions ADD COLUMN idle_action text NOT NULL DEFAULT 'close'
	CHECK (idle_action IN ('close', 'pause'));
CREATE INDEX sessions_paused ON sessions (expires_at) WHERE status = 'paused';
