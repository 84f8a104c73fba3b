-- 0005_evaluations: evaluation runs (POST /v1/evaluations): each sample is a
-- submission of its own, graded by the workers like any other; an evaluation
-- row groups them and keeps what pass@k needs (judge/service/evalstore.c).
CREATE TABLE evaluations (
	id bigserial PRIMARY KEY,
	api_key_id bigint REFERENCES api_keys (id),
	language text NOT NULL,
	-- the k of pass@k asked for, as a JSON array of numbers
	ks jsonb NOT NULL,
	created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE evaluation_samples (
	evaluation_id bigint NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
	-- the sample's position in the request's samples array
	idx integer NOT NULL,
	task_id text NOT NULL,
	submission_id bigint NOT NULL REFERENCES submissions (id),
	PRIMARY KEY (evaluation_id, idx)
);
