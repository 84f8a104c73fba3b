-- A session resumed from an image (pause, snapshot, fork) says whether its
-- memory came back with it (gVisor's checkpoint, docs/sessions.md): NULL
-- until its sandbox starts from an image, then true or false.
ALTER TABLE sessions ADD COLUMN resumed_memory boolean;

-- Periodic checkpoints (judge.ini checkpoint_interval_s): a session's last
-- one, when it was taken, and, once a session was moved to another worker
-- from it, how old it was then (the first answer says so).
ALTER TABLE session_images DROP CONSTRAINT session_images_kind_check;
ALTER TABLE session_images ADD CONSTRAINT session_images_kind_check
	CHECK (kind = 'pause' OR kind = 'snapshot' OR kind = 'checkpoint');
ALTER TABLE sessions ADD COLUMN checkpoint_image_id uuid REFERENCES session_images (id)
	ON DELETE SET NULL;
ALTER TABLE sessions ADD COLUMN checkpoint_at timestamptz;
ALTER TABLE sessions ADD COLUMN restored_checkpoint_age_s double precision;
