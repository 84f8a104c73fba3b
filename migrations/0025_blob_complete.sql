-- 0025_blob_complete: a blob's chunks are written on several connections at
-- once (judge/service/blobstore.c), so its row is committed before them,
-- unfinished, and marked complete in one statement once every chunk is in.
-- A load never sees an unfinished blob; a worker that died while storing
-- leaves one, which blobstore_sweep deletes once it is old. Its stored bytes
-- count against the key's cap from the start (a reservation).
ALTER TABLE blobs ADD COLUMN complete boolean NOT NULL DEFAULT true;
CREATE INDEX blobs_unfinished ON blobs (created) WHERE NOT complete;
