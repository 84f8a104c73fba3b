-- 0020_key_egress: a key's own egress cap (docs/egress.md, "The operator's
-- cap"), set through the admin API (PATCH /v1/admin/keys/{id}) or `judge keys
-- egress`: {"mode": "off" | "allowlist" | "open", "allow": [rule, ...]}. It
-- replaces judge.ini's [sessions] egress and egress_allow for that key's
-- sessions, above or below them; NULL is judge.ini's, as every key before.
ALTER TABLE api_keys ADD COLUMN egress jsonb;
