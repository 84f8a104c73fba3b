-- A session's own checkpoint interval (POST /v1/sessions checkpoint_interval_s):
-- NULL follows judge.ini's checkpoint_interval_s, 0 takes none, N every N
-- seconds of use (sessdb_checkpoint_due).
ALTER TABLE sessions ADD COLUMN checkpoint_interval_s integer
	CHECK (checkpoint_interval_s BETWEEN 0 AND 86400);
