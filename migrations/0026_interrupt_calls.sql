-- A call that interrupts a session's running cell (POST
-- /v1/sessions/{id}/interrupt, and a streamed cell whose client left, as
-- E2B's code interpreter does): it runs beside the cell, not behind it.
ALTER TABLE session_calls DROP CONSTRAINT session_calls_kind_check;
ALTER TABLE session_calls ADD CONSTRAINT session_calls_kind_check CHECK (kind IN (
	'execute', 'install', 'file_put', 'file_get', 'file_list', 'file_delete', 'close',
	'context_create', 'context_list', 'context_restart', 'context_remove',
	'process_start', 'process_input', 'process_close_stdin', 'process_signal',
	'process_wait', 'process_list', 'pause', 'snapshot',
	'file_stat', 'file_mkdir', 'file_move',
	'watch_start', 'watch_events', 'watch_stop', 'interrupt'));
