-- 0006_admin: operator keys (the /dashboard and /v1/admin/*), the workers'
-- heartbeats it shows, and an index for its throughput and latency over time.

-- an admin key may read the dashboard's numbers and create and revoke keys
ALTER TABLE api_keys ADD COLUMN admin boolean NOT NULL DEFAULT false;

-- One row per running `judge worker` process, written by its housekeeping
-- thread every few seconds and removed when it stops; a row not seen for a
-- while belongs to a worker that died (the dashboard tells them apart).
-- (Not `workers`: the sessions' migration names its own registry so.)
CREATE TABLE worker_beats (
	name text PRIMARY KEY, -- host:pid
	backend text NOT NULL,
	slots integer NOT NULL,
	busy integer NOT NULL,
	started timestamptz NOT NULL DEFAULT now(),
	seen timestamptz NOT NULL DEFAULT now()
);

-- the dashboard reads the last hour of finished submissions
CREATE INDEX submissions_finished ON submissions (finished) WHERE finished IS NOT NULL;
-- and its recent failures
CREATE INDEX submissions_failures ON submissions (finished) WHERE status = 'internal_error';
