-- 0010_session_model: session calls typed end to end
-- (judge/service/session/sesscall.h). A call's kind is one of enum
-- scall_kind's names: code contexts and processes join cells, installs and
-- files. Its answer (session_calls.response) is a typed reply, stored as
-- {"reply": {...}} or, for the session's errors, {"error": {"code": <enum
-- sess_err name>, "message": ...}}: no HTTP status is stored, a front maps
-- the error (judge/api/sessrender.c).

ALTER TABLE session_calls DROP CONSTRAINT session_calls_kind_check;
ALTER TABLE session_calls ADD CONSTRAINT session_calls_kind_check CHECK (kind IN (
	'execute', 'install', 'file_put', 'file_get', 'file_list', 'file_delete', 'close',
	'context_create', 'context_list', 'context_restart', 'context_remove',
	'process_start', 'process_input', 'process_close_stdin', 'process_signal',
	'process_wait', 'process_list'));

-- A streamed cell (request.stream) ends its live output with result or error,
-- then done carrying the whole stored answer (serve renders it, sse.h's
-- done_data), in the transaction that stores the answer, by whatever path
-- (the worker, or the reaper of a lost worker).
CREATE OR REPLACE FUNCTION session_call_done() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	s text := 'cell:' || NEW.id;
	reply jsonb := NEW.response -> 'reply';
	err jsonb := coalesce(NEW.response -> 'error', reply -> 'error');
BEGIN
	IF reply IS NOT NULL AND jsonb_typeof(reply -> 'result') = 'string' THEN
		INSERT INTO output_chunks (stream, event, data) VALUES (s, 'result', (reply -> 'result')::text);
	END IF;
	IF err IS NOT NULL AND jsonb_typeof(err) = 'object' THEN
		INSERT INTO output_chunks (stream, event, data) VALUES (s, 'error', err::text);
	END IF;
	INSERT INTO output_chunks (stream, event, data) VALUES (s, 'done', NEW.response::text);
	PERFORM pg_notify('judge_output', s);
	RETURN NULL;
END
$$;
