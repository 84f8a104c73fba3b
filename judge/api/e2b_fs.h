/* e2b_fs: envd's filesystem.Filesystem service (Connect-RPC in JSON, what the
 * SDK's `files` calls besides read and write) over a session's file calls
 * (docs/e2b.md): Stat (file_stat), ListDir (file_list, one level), MakeDir
 * (file_mkdir; `already_exists` when the folder was there), Move
 * (file_move), Remove (file_delete; a missing path is no error, as envd's
 * RemoveAll). Paths are E2B's (under /home/user, the session folder).
 * WatchDir and the watcher calls answer `unimplemented`.
 */
#pragma once

struct api;
struct http_request;

/* Handles POST /filesystem.Filesystem/<method> of sandbox (a session id). */
void e2b_fs_handle(struct http_request *r, struct api *a, const char *sandbox, const char *method);
