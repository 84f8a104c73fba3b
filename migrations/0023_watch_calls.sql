-- The calls of a folder's watcher (E2B's files.watchDir and the watcher
-- trio, judge/service/session/sesswatch.h): start one (its events streamed,
-- or kept for polling), take the kept events, stop it.
ALTER TABLE session_calls DROP CONSTRAINT session_calls_kind_check;
ALTER TABLE session_calls ADD CONSTRAINT session_calls_kind_check CHECK (kind IN (
	'execute', 'install', 'file_put', 'file_get', 'file_list', 'file_delete', 'close',
	'context_create', 'context_list', 'context_restart', 'context_remove',
	'process_start', 'process_input', 'process_close_stdin', 'process_signal',
	'process_wait', 'process_list', 'pause', 'snapshot',
	'file_stat', 'file_mkdir', 'file_move',
	'watch_start', 'watch_events', 'watch_stop'));
