-- 0002_tokens: a UUID token per submission (the Judge0 API names submissions
-- by token, not by id) and what a front API needs to answer in its own shape.

-- gen_random_uuid() is built in from PostgreSQL 13: 122 random bits, so a
-- token cannot be guessed from another one (ids can).
ALTER TABLE submissions ADD COLUMN token uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX submissions_token ON submissions (token);
-- NULL for /v1; {"api": "judge0", "language_id": 71, "base64_encoded": false, ...}
-- for a submission made through the Judge0 API: the fields it echoes back and
-- the shape (and method, PUT) of its callback.
ALTER TABLE submissions ADD COLUMN front jsonb;
