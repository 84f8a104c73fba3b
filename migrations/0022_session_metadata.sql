-- 0022_session_metadata: what a session's creator attached to it and the
-- secret of its E2B sandbox (docs/e2b.md).
--
-- metadata: {"key": "value"} strings the creator gave (E2B's create
-- metadata), shown back with the session and filtered on by E2B's list; NULL
-- when none was given.
-- access_token: the E2B sandbox's envdAccessToken, a random secret made at
-- create: its envd traffic carries it (X-Access-Token) and signed file URLs
-- are hashes of it, which is why it is kept as it is and not as a hash (the
-- judge recomputes the signature). Never shown in a listing; NULL for
-- sessions made without one (their envd traffic carries the API key).
ALTER TABLE sessions ADD COLUMN metadata jsonb;
ALTER TABLE sessions ADD COLUMN access_token text;
CREATE UNIQUE INDEX sessions_access_token ON sessions (access_token)
	WHERE access_token IS NOT NULL;
