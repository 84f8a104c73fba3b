-- 0017_session_env: a session's own environment variables (POST /v1/sessions
-- {env}; E2B's create envVars): every context's driver and every process of
-- the session starts with them. A snapshot keeps them, so that a session
-- started from it, or a fork, has them too. A JSON object of strings; NULL
-- for none.
ALTER TABLE sessions ADD COLUMN env jsonb;
ALTER TABLE session_images ADD COLUMN env jsonb;
