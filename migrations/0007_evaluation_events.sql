-- 0007_evaluation_events: an evaluation's progress as a live stream
-- (GET /v1/evaluations/{id}/events, judge/api/evaluation.h). When a sample's
-- submission becomes final, by whatever path (a worker's finish, the
-- reaper's give-up), the same transaction counts it on its evaluation and
-- writes a `sample` event to the stream 'eval:<evaluation id>' of
-- output_chunks (migrations/0004), then `done` after the last sample, with
-- NOTIFY judge_output: no worker code path can forget it, and the SSE relay
-- of live output carries it to clients.

-- samples counted on the row, so that the trigger never counts them all
ALTER TABLE evaluations ADD COLUMN total integer,
	ADD COLUMN finished integer NOT NULL DEFAULT 0;
UPDATE evaluations e SET
	total = (SELECT count(*) FROM evaluation_samples es WHERE es.evaluation_id = e.id),
	finished = (SELECT count(*) FROM evaluation_samples es
		JOIN submissions s ON s.id = es.submission_id
		WHERE es.evaluation_id = e.id AND s.status NOT IN ('queued', 'running'));
ALTER TABLE evaluations ALTER COLUMN total SET NOT NULL;

-- the trigger finds a submission's sample by its id
CREATE INDEX evaluation_samples_submission ON evaluation_samples (submission_id);

-- The UPDATE of the evaluation's row comes first: it holds that row until
-- the finish commits, so two workers finishing samples of one evaluation
-- write its events one after the other, and their seqs follow commit order
-- (a reader that saw seq n never misses a smaller one committed later).
CREATE FUNCTION output_evaluation_sample() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	s record;
	e record;
BEGIN
	SELECT evaluation_id, idx, task_id INTO s FROM evaluation_samples
		WHERE submission_id = NEW.id;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	UPDATE evaluations SET finished = finished + 1 WHERE id = s.evaluation_id
		RETURNING finished, total INTO e;
	INSERT INTO output_chunks (stream, event, data)
	VALUES ('eval:' || s.evaluation_id, 'sample',
		json_build_object('task_id', s.task_id, 'index', s.idx, 'submission_id', NEW.id,
			'status', NEW.status, 'passed', NEW.status = 'accepted',
			'time_ms', coalesce(NEW.result -> 'time_ms', '0'::jsonb),
			'done', e.finished, 'total', e.total)::text);
	IF e.finished >= e.total THEN
		INSERT INTO output_chunks (stream, event, data)
		VALUES ('eval:' || s.evaluation_id, 'done',
			json_build_object('id', s.evaluation_id, 'status', 'done',
				'done', e.finished, 'total', e.total)::text);
	END IF;
	PERFORM pg_notify('judge_output', 'eval:' || s.evaluation_id);
	RETURN NULL;
END
$$;
CREATE TRIGGER submissions_evaluation_sample AFTER UPDATE OF status ON submissions
	FOR EACH ROW
	WHEN (OLD.status IN ('queued', 'running') AND NEW.status NOT IN ('queued', 'running'))
	EXECUTE FUNCTION output_evaluation_sample();
