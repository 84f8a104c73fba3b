-- 0001_init: API keys and the submission queue.
-- `judge migrate` runs each file in one transaction and records it in
-- schema_migrations (created by judge migrate itself, not here).

CREATE TABLE api_keys (
	id bigserial PRIMARY KEY,
	name text NOT NULL,
	-- hex SHA-256 of the secret key; the key itself is never stored
	hash text NOT NULL UNIQUE,
	created timestamptz NOT NULL DEFAULT now(),
	revoked timestamptz
);

-- The states of a submission: the same list, in the same order, as enum
-- sub_status in judge/status.h (tests/test_queue.c checks it).
CREATE TABLE submissions (
	id bigserial PRIMARY KEY,
	status text NOT NULL DEFAULT 'queued' CONSTRAINT submissions_status_check CHECK (status IN (
		'queued', 'running', 'completed', 'accepted', 'wrong_answer', 'timeout',
		'memory_limit', 'output_limit', 'runtime_error', 'compile_error', 'internal_error')),
	-- the normalized grading request (judge/grade.h) and the result JSON
	request jsonb NOT NULL,
	result jsonb,
	-- lower goes first: 0 interactive (/v1/execute*), 10 bulk
	priority smallint NOT NULL DEFAULT 10,
	api_key_id bigint REFERENCES api_keys (id),
	idempotency_key text,
	callback_url text,
	-- claims so far; a claim is (id, worker, attempts)
	attempts integer NOT NULL DEFAULT 0,
	worker text,
	lease_until timestamptz,
	created timestamptz NOT NULL DEFAULT now(),
	started timestamptz,
	finished timestamptz,
	-- callback delivery: pending while callback_url is set and callback_done is null
	callback_attempts integer NOT NULL DEFAULT 0,
	callback_next timestamptz,
	callback_done timestamptz,
	callback_error text,
	CHECK ((status IN ('queued', 'running')) = (finished IS NULL)),
	CHECK (status <> 'running' OR (worker IS NOT NULL AND lease_until IS NOT NULL))
);

-- Same key, same API key: same submission. Keyless requests (api_key_id null,
-- auth off) share key space 0.
CREATE UNIQUE INDEX submissions_idempotency ON submissions ((coalesce(api_key_id, 0)), idempotency_key)
	WHERE idempotency_key IS NOT NULL;
-- The claim scans only queued rows, in priority order.
CREATE INDEX submissions_queue ON submissions (priority, id) WHERE status = 'queued';
-- The reaper scans only running rows by lease.
CREATE INDEX submissions_leases ON submissions (lease_until) WHERE status = 'running';
CREATE INDEX submissions_callbacks ON submissions (callback_next)
	WHERE callback_url IS NOT NULL AND callback_done IS NULL AND finished IS NOT NULL;
