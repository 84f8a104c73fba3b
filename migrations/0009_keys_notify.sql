-- 0009_keys_notify: every change to api_keys (a key created by `judge keys
-- create`, the admin API or `judge up`; a key revoked) NOTIFYs judge_keys in
-- the same transaction, so `judge serve` reloads its copy of the keys when the
-- change commits (judge/service/auth.h) instead of on a timer: a key is usable
-- the moment its creator has it, and a revoked one is refused as soon.
CREATE FUNCTION api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('judge_keys', '');
	RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
	FOR EACH STATEMENT EXECUTE FUNCTION api_keys_changed();
