-- 0015_session_egress: every attempt of a session's code to reach the network
-- through its egress proxy (judge/service/session/sessegress.h), allowed or
-- refused: what it asked (method, host, port), the decision and why, the
-- address connected to and the bytes each way. GET /v1/sessions/{id}/history
-- lists them beside the calls; /metrics counts them by decision. Kept as long
-- as the session's row (ON DELETE CASCADE), as its calls.
CREATE TABLE session_egress (
	id bigserial PRIMARY KEY,
	session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	at timestamptz NOT NULL DEFAULT now(),
	method text NOT NULL,
	host text NOT NULL,
	port integer NOT NULL,
	allowed boolean NOT NULL,
	reason text NOT NULL,
	addr text NOT NULL DEFAULT '',
	bytes_out bigint NOT NULL DEFAULT 0,
	bytes_in bigint NOT NULL DEFAULT 0
);
CREATE INDEX session_egress_session ON session_egress (session_id, id);
