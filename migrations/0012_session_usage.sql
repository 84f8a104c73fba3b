-- 0012_session_usage: what a session's sandbox used, as its worker last read
-- it from the sandbox's cgroup (judge/service/session/sesshost.c, every
-- second): {"cpu_ms", "memory_kb", "processes", "pids_refused",
-- "throttled_ms"}. cpu_ms counts every process of the session, background
-- ones included; GET /v1/sessions/{id} shows it as "usage".
ALTER TABLE sessions ADD COLUMN usage jsonb;
