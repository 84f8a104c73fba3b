-- 0018_call_env_blank: a call's own environment variables are kept only
-- until it is answered. An execute's or a process's env (the "env" of
-- session_calls.request: ["NAME=value", ...]) often carries a secret an agent
-- passes for one call; once the call is done its values are blanked and its
-- names kept ("NAME="), so the history still says which variables were set.
-- The session's own env (sessions.env) stays: restarts, pauses and snapshots
-- need it, and DELETE of the session ends it.
CREATE FUNCTION session_call_env_names(request jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
	SELECT jsonb_set(request, '{env}', (
		SELECT coalesce(jsonb_agg(split_part(e, '=', 1) || '=' ORDER BY n), '[]'::jsonb)
		FROM jsonb_array_elements_text(request->'env') WITH ORDINALITY AS t(e, n)))
$$;

CREATE FUNCTION session_call_env_blank() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.request := session_call_env_names(NEW.request);
	RETURN NEW;
END $$;

CREATE TRIGGER session_calls_env_blank BEFORE INSERT OR UPDATE OF state ON session_calls
	FOR EACH ROW WHEN (NEW.state = 'done' AND jsonb_typeof(NEW.request->'env') = 'array')
	EXECUTE FUNCTION session_call_env_blank();

-- the calls answered before this migration
UPDATE session_calls SET request = session_call_env_names(request)
	WHERE state = 'done' AND jsonb_typeof(request->'env') = 'array';
