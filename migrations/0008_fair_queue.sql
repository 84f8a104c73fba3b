-- 0008_fair_queue: the claim shares the workers fairly between API keys
-- (weighted), puts interactive requests ahead of bulk work only up to a bound,
-- and a revoked key's queued work ends as `cancelled` (docs/operations.md,
-- "Queue policy"; judge/service/queue.h).

-- a key's share of the workers against the other keys with queued work
ALTER TABLE api_keys ADD COLUMN weight integer NOT NULL DEFAULT 1
	CONSTRAINT api_keys_weight_check CHECK (weight BETWEEN 1 AND 1000);

-- `cancelled`: queued work of a key that was revoked (after internal_error,
-- as in enum sub_status of judge/grading/status.h)
ALTER TABLE submissions DROP CONSTRAINT submissions_status_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_status_check CHECK (status IN (
	'queued', 'running', 'completed', 'accepted', 'wrong_answer', 'timeout',
	'memory_limit', 'output_limit', 'runtime_error', 'compile_error', 'internal_error',
	'cancelled'));

-- The claim walks the keys that have queued work (one index probe each) and
-- looks at the heads of each key's two queues, oldest first: all of it in
-- this one index. The class (priority > 0)::int is 0 for interactive, 1 for
-- bulk work (an int: a boolean's "= false" would be planned as priority <= 0,
-- which this index does not answer).
CREATE INDEX submissions_fair ON submissions ((coalesce(api_key_id, 0)), ((priority > 0)::int), id)
	WHERE status = 'queued';
DROP INDEX submissions_queue;

-- Claims one queued submission for worker_name (a lease of lease_ms) and
-- returns it, or nothing when none is queued. The order:
--  1. keys: the one with the fewest running submissions per its weight goes
--     first (running / weight); a key with none running always goes before a
--     key with some, so a quiet key's work starts at the next free slot
--     whatever another key queued;
--  2. ties, and inside a key: the oldest head, where a bulk submission counts
--     as queued lead_ms later than it was: an interactive request goes ahead
--     of bulk work queued less than lead_ms before it, never of older (aging).
-- A head that another claim holds is skipped (SKIP LOCKED), never waited for.
-- Volatile: each query sees rows committed while it runs, and the UPDATE sees
-- the row the SELECT ... FOR UPDATE locked.
CREATE FUNCTION judge_claim(worker_name text, lease_ms bigint, lead_ms bigint)
RETURNS SETOF submissions LANGUAGE plpgsql AS $$
DECLARE
	lead_by interval := lead_ms * interval '1 millisecond';
	k record;
	class int;
	pick bigint;
BEGIN
	FOR k IN
		WITH RECURSIVE keys(key) AS (
			(SELECT coalesce(api_key_id, 0) FROM submissions WHERE status = 'queued'
			 ORDER BY coalesce(api_key_id, 0) LIMIT 1)
			UNION ALL
			SELECT (SELECT coalesce(api_key_id, 0) FROM submissions
				WHERE status = 'queued' AND coalesce(api_key_id, 0) > keys.key
				ORDER BY coalesce(api_key_id, 0) LIMIT 1)
			FROM keys WHERE keys.key IS NOT NULL),
		running AS (SELECT coalesce(api_key_id, 0) AS key, count(*) AS n
			FROM submissions WHERE status = 'running' GROUP BY 1),
		heads AS MATERIALIZED (SELECT keys.key,
			coalesce(running.n, 0)::float8 / coalesce(a.weight, 1) AS share,
			(SELECT created FROM submissions WHERE status = 'queued'
				AND coalesce(api_key_id, 0) = keys.key AND (priority > 0)::int = 0
				ORDER BY id LIMIT 1) AS head_i,
			(SELECT created FROM submissions WHERE status = 'queued'
				AND coalesce(api_key_id, 0) = keys.key AND (priority > 0)::int = 1
				ORDER BY id LIMIT 1) + lead_by AS head_b
			FROM keys LEFT JOIN running USING (key) LEFT JOIN api_keys a ON a.id = keys.key
			WHERE keys.key IS NOT NULL)
		SELECT * FROM heads ORDER BY share, least(head_i, head_b), key
	LOOP
		FOREACH class IN ARRAY CASE WHEN k.head_i IS NULL OR k.head_b < k.head_i
			THEN ARRAY[1, 0] ELSE ARRAY[0, 1] END
		LOOP
			SELECT id INTO pick FROM submissions WHERE status = 'queued'
				AND coalesce(api_key_id, 0) = k.key AND (priority > 0)::int = class
				ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED;
			IF pick IS NOT NULL THEN
				RETURN QUERY UPDATE submissions SET status = 'running',
					attempts = attempts + 1, worker = worker_name, started = now(),
					lease_until = now() + lease_ms * interval '1 millisecond'
					WHERE id = pick RETURNING *;
				RETURN;
			END IF;
		END LOOP;
	END LOOP;
END
$$;
