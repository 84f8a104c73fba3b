-- A session resumed from an image (pause, snapshot, fork) says whether its
-- memory came back with it (gVisor's checkpoint, docs/sessions.md): NULL
-- until its sandbox starts from an image, then true or false.
ALTER TABLE sessions ADD COLUMN resumed_memory boolean;
