-- 0011_problems: problem packages in the database, where every worker reads
-- them (docs/problems.md, judge/service/problemstore.h).
--
-- A package's files are content-addressed blobs (SHA-256 of the bytes), kept
-- in chunks so that no value is larger than a chunk; a blob is stored once
-- however many versions or problems hold it. A version is a manifest of
-- (path, blob, size) and the package's content hash; a problem points at the
-- version new submissions get. A submission names the version it was queued
-- against, so a later version never changes it. Nothing here is deleted: a
-- retired problem keeps its versions for the submissions that used them.

CREATE TABLE problem_blobs (
	hash text PRIMARY KEY, -- lower-case hex SHA-256 of the file's bytes
	size bigint NOT NULL,
	chunks integer NOT NULL,
	created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE problem_chunks (
	hash text NOT NULL REFERENCES problem_blobs (hash),
	seq integer NOT NULL,
	data bytea NOT NULL,
	PRIMARY KEY (hash, seq)
);

CREATE TABLE problems (
	id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
	-- the owner; NULL: the operator's (problems_dir, or a server without keys)
	api_key_id bigint REFERENCES api_keys (id),
	visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'public')),
	-- the version new submissions get; NULL until one is ready
	current_version integer,
	created timestamptz NOT NULL DEFAULT now(),
	-- DELETE /v1/problems/{id}: no new submissions; the row keeps the id taken
	retired timestamptz
);

-- verifying: its verification job is queued or running; ready: it may become
-- current (verified, kept anyway, or loaded from problems_dir); refused: some
-- example submission did not get its expected verdict; failed: the package
-- cannot be graded (its output validator does not build, ...)
CREATE TABLE problem_versions (
	problem_id text NOT NULL REFERENCES problems (id),
	version integer NOT NULL,
	hash text NOT NULL, -- the package's content hash (judge/grading/package.h)
	files jsonb NOT NULL, -- the manifest: [[path, blob hash, size], ...]
	info jsonb NOT NULL, -- what GET /v1/problems/{id} shows of it
	status text NOT NULL CHECK (status IN ('verifying', 'ready', 'refused', 'failed')),
	keep boolean NOT NULL DEFAULT false, -- refused submissions do not refuse it
	source text NOT NULL CHECK (source IN ('upload', 'dir')),
	api_key_id bigint REFERENCES api_keys (id), -- who uploaded it
	verification bigint UNIQUE REFERENCES submissions (id),
	report jsonb,
	-- the time limit verification inferred when the package gives none
	time_limit_ms integer,
	created timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (problem_id, version)
);
CREATE INDEX problem_versions_hash ON problem_versions (hash);

-- A verification job is a submission whose request holds "verify" (the
-- worker runs the package's example submissions, judge/grading/verify.h) and
-- whose result is the report. When it becomes final, by whatever path (a
-- worker's finish, the reaper's give-up), the same transaction settles its
-- version and, when that is ready and newer, makes it current.
CREATE FUNCTION problem_version_verified() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	v record;
	ran boolean := NEW.status = 'completed' AND jsonb_typeof(NEW.result) = 'object';
	ok boolean;
	gradable boolean;
	st text;
BEGIN
	SELECT problem_id, version, keep INTO v FROM problem_versions
		WHERE verification = NEW.id FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	ok := ran AND coalesce((NEW.result ->> 'ok')::boolean, false);
	gradable := ran AND coalesce((NEW.result ->> 'gradable')::boolean, false);
	st := CASE WHEN ok OR (gradable AND v.keep) THEN 'ready'
		WHEN gradable THEN 'refused' ELSE 'failed' END;
	UPDATE problem_versions SET status = st, report = NEW.result,
		time_limit_ms = CASE WHEN ran AND (NEW.result ->> 'time_limit_inferred')::boolean
			THEN (NEW.result ->> 'time_limit_ms')::integer END
		WHERE problem_id = v.problem_id AND version = v.version;
	IF st = 'ready' THEN
		UPDATE problems SET current_version = v.version
			WHERE id = v.problem_id
			AND (current_version IS NULL OR current_version < v.version);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER submissions_problem_verified AFTER UPDATE OF status ON submissions
	FOR EACH ROW
	WHEN (OLD.status IN ('queued', 'running') AND NEW.status NOT IN ('queued', 'running')
		AND NEW.request ? 'verify')
	EXECUTE FUNCTION problem_version_verified();
