-- 0003_sessions: stateful sessions (judge/service/sessdb.h), the calls serve
-- routes to the worker that holds a session, and the workers' heartbeats.

-- A worker process that may hold sessions. It LISTENs on 'judge_w' || id and
-- beats last_seen; one whose beat is stale has lost its sessions.
CREATE TABLE workers (
	id bigserial PRIMARY KEY,
	name text NOT NULL, -- host:pid
	host text NOT NULL,
	capacity integer NOT NULL, -- sessions it may hold at once
	started timestamptz NOT NULL DEFAULT now(),
	last_seen timestamptz NOT NULL DEFAULT now(),
	stopped timestamptz
);

-- The states of a session: the same list, in the same order, as enum
-- sess_status in judge/service/sessdb.h.
CREATE TABLE sessions (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	api_key_id bigint REFERENCES api_keys (id),
	language text NOT NULL,
	status text NOT NULL DEFAULT 'starting' CONSTRAINT sessions_status_check CHECK (status IN (
		'starting', 'ready', 'closed', 'expired', 'lost', 'failed')),
	worker_id bigint REFERENCES workers (id),
	-- {"memory_mb", "cpu_ms", "wall_ms", "disk_mb"}: complete, as the worker applies them
	limits jsonb NOT NULL,
	idle_ttl_s integer NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	last_used timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL, -- last_used + idle_ttl_s
	max_until timestamptz NOT NULL,	 -- the lifetime cap
	closed timestamptz,
	close_reason text, -- why it ended: "closed by the client", "idle for 600 s" ...
	execution_count integer NOT NULL DEFAULT 0,
	restarts integer NOT NULL DEFAULT 0,
	CHECK ((status IN ('starting', 'ready')) = (closed IS NULL))
);
CREATE INDEX sessions_open ON sessions (worker_id) WHERE status IN ('starting', 'ready');
CREATE INDEX sessions_unclaimed ON sessions (created) WHERE status = 'starting' AND worker_id IS NULL;
CREATE INDEX sessions_key ON sessions (api_key_id, created);

-- One call of serve to the session's worker, and its answer.
CREATE TABLE session_calls (
	id bigserial PRIMARY KEY,
	session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	kind text NOT NULL CHECK (kind IN (
		'execute', 'install', 'file_put', 'file_get', 'file_list', 'file_delete', 'close')),
	request jsonb NOT NULL,
	body bytea, -- file_put's bytes
	-- {"http": 200, ...}: the HTTP status to answer and the JSON (or the error)
	response jsonb,
	response_body bytea, -- file_get's bytes
	state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done')),
	created timestamptz NOT NULL DEFAULT now(),
	started timestamptz,
	finished timestamptz,
	CHECK ((state = 'done') = (response IS NOT NULL))
);
CREATE INDEX session_calls_pending ON session_calls (session_id, id) WHERE state <> 'done';

-- A cell streamed to its client (request.stream, Accept: text/event-stream)
-- ends its live output (output_chunks of 0004_output.sql: the worker writes
-- stdout and stderr there as the code prints) with result or error, then done
-- carrying the whole answer, in the transaction that stores the answer, by
-- whatever path (the worker, or the reaper of a lost worker): a reader never
-- waits for a done that cannot come. plpgsql finds output_chunks when it runs.
CREATE FUNCTION session_call_done() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	s text := 'cell:' || NEW.id;
	body jsonb := NEW.response -> 'body';
	err jsonb := coalesce(NEW.response -> 'error', body -> 'error');
BEGIN
	IF body IS NOT NULL AND jsonb_typeof(body -> 'result') = 'string' THEN
		INSERT INTO output_chunks (stream, event, data) VALUES (s, 'result', (body -> 'result')::text);
	END IF;
	IF err IS NOT NULL AND jsonb_typeof(err) = 'object' THEN
		INSERT INTO output_chunks (stream, event, data) VALUES (s, 'error', err::text);
	END IF;
	INSERT INTO output_chunks (stream, event, data) VALUES (s, 'done', coalesce(body,
		jsonb_build_object('http', NEW.response -> 'http', 'error', NEW.response -> 'error'))::text);
	PERFORM pg_notify('judge_output', s);
	RETURN NULL;
END
$$;
CREATE TRIGGER session_calls_output_done AFTER UPDATE OF state ON session_calls
	FOR EACH ROW
	WHEN (OLD.state <> 'done' AND NEW.state = 'done' AND NEW.kind = 'execute' AND
		(NEW.request ->> 'stream') = 'true')
	EXECUTE FUNCTION session_call_done();
