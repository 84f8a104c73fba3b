-- 0016_session_images: sessions that outlive their sandbox (docs/sessions.md,
-- "Pause, resume, snapshots and forks"). A paused session's folder, or a
-- named snapshot of it, is an image: its files in one blob and the settings
-- a new sandbox needs (language, limits, egress policy, contexts).
--
-- A blob (judge/service/blobstore.h) is a byte string of an API key, stored
-- in chunks, each compressed with zlib and checked by the SHA-256 of its
-- uncompressed bytes; the blob's size and SHA-256 check the whole on load.
-- Every worker reads them: nothing but PostgreSQL is shared between hosts.
-- blobs.stored (the compressed bytes) is what counts against the key's cap
-- (judge.ini session_images_mb_per_key).
CREATE TABLE blobs (
	id bigserial PRIMARY KEY,
	api_key_id bigint REFERENCES api_keys (id),
	size bigint NOT NULL,	-- bytes before compression
	stored bigint NOT NULL, -- compressed bytes held
	chunks integer NOT NULL,
	sha256 text NOT NULL, -- lower-case hex of the whole (uncompressed)
	created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blobs_key ON blobs (api_key_id);

CREATE TABLE blob_chunks (
	blob_id bigint NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
	seq integer NOT NULL,
	size integer NOT NULL,	-- bytes before compression
	sha256 text NOT NULL,	-- of those bytes
	data bytea NOT NULL,	-- zlib
	PRIMARY KEY (blob_id, seq)
);
-- already compressed: TOAST keeps it out of line as it is, without trying again
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- pause: the image a paused session resumes from (one per session, replaced
-- by the next pause); snapshot: a named image, POST /v1/sessions/{id}/snapshot,
-- from which POST /v1/sessions {from_snapshot} starts new sessions.
CREATE TABLE session_images (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	api_key_id bigint REFERENCES api_keys (id),
	session_id uuid REFERENCES sessions (id) ON DELETE SET NULL,
	kind text NOT NULL CHECK (kind = 'pause' OR kind = 'snapshot'),
	name text NOT NULL DEFAULT '',
	language text NOT NULL,
	limits jsonb NOT NULL,
	network jsonb,
	contexts jsonb NOT NULL DEFAULT '[]', -- [{"id", "language", "cwd"}]: started again on restore
	files integer NOT NULL,
	blob_id bigint NOT NULL REFERENCES blobs (id),
	created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_images_key ON session_images (api_key_id, created);

-- paused: no worker and no sandbox; open (not closed), so the next call or
-- POST /resume makes it 'starting' again and a worker restores image_id.
ALTER TABLE sessions ADD COLUMN image_id uuid REFERENCES session_images (id);
ALTER TABLE sessions DROP CONSTRAINT sessions_status_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_status_check CHECK (status IN (
	'starting', 'ready', 'closed', 'expired', 'lost', 'failed', 'paused'));
ALTER TABLE sessions DROP CONSTRAINT sessions_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_check
	CHECK ((status IN ('starting', 'ready', 'paused')) = (closed IS NULL));

ALTER TABLE session_calls DROP CONSTRAINT session_calls_kind_check;
ALTER TABLE session_calls ADD CONSTRAINT session_calls_kind_check CHECK (kind IN (
	'execute', 'install', 'file_put', 'file_get', 'file_list', 'file_delete', 'close',
	'context_create', 'context_list', 'context_restart', 'context_remove',
	'process_start', 'process_input', 'process_close_stdin', 'process_signal',
	'process_wait', 'process_list', 'pause', 'snapshot'));
