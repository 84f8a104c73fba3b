-- 0004_output: live output of runs (docs/ARCHITECTURE.md, "Live output").
-- Workers append a stream's events here (judge/service/outstream.h) and
-- NOTIFY judge_output with the stream id; `judge serve` relays them as
-- Server-Sent Events (judge/api/sse.h). The two meet only here.

-- One row per event. seq is global: a stream's events are its rows in seq
-- order, and seq is the SSE id a client resumes from (Last-Event-ID). Each
-- stream has one writer at a time, whose batches commit in order.
CREATE TABLE output_chunks (
	seq bigserial PRIMARY KEY,
	-- 'sub:<submission id>', 'cell:<session call id>'
	stream text NOT NULL CHECK (length(stream) BETWEEN 1 AND 200),
	-- stdout, stderr, test, truncated, done, ...
	event text NOT NULL CHECK (event ~ '^[a-z_]{1,32}$'),
	-- one JSON value on one line (stdout and stderr: a string of valid UTF-8)
	data text NOT NULL,
	created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX output_chunks_stream ON output_chunks (stream, seq);
-- pruning scans by age (outstream_prune)
CREATE INDEX output_chunks_created ON output_chunks (created);
CREATE INDEX output_chunks_done ON output_chunks (created) WHERE event = 'done';

-- A submission's stream ends with `done` in the same transaction that makes
-- the row final, by whatever path (a worker's finish, the reaper's give-up):
-- a reader never waits for a done that cannot come. The data is small; the
-- relay renders the result from the row.
CREATE FUNCTION output_submission_done() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO output_chunks (stream, event, data)
	VALUES ('sub:' || NEW.id, 'done',
		json_build_object('id', NEW.id, 'status', NEW.status)::text);
	PERFORM pg_notify('judge_output', 'sub:' || NEW.id);
	RETURN NULL;
END
$$;
CREATE TRIGGER submissions_output_done AFTER UPDATE OF status ON submissions
	FOR EACH ROW
	WHEN (OLD.status IN ('queued', 'running') AND NEW.status NOT IN ('queued', 'running'))
	EXECUTE FUNCTION output_submission_done();
