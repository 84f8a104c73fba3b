/* sessimage: a session's image — its folder packed into one byte string, and
 * the settings a new sandbox needs — stored for pause, resume, snapshots and
 * forks (docs/sessions.md, migrations/0016_session_images.sql).
 *
 * How it works: sessimage_pack walks the session folder through the
 * sandbox's file calls (never following a link the code planted) into a
 * simple record format: "JSI1", then per entry a type ('d' folder, 'f'
 * file, 'l' symlink), its permission bits, its path and, for a file, its
 * bytes, for a link, its target (kept as the code wrote it: only the code
 * inside resolves it; the host never follows a link of the box); 'E' ends
 * it. Other entries (FIFOs, sockets) are counted in *skipped. The packed bytes go to
 * blobstore.h (chunked, compressed, checked) under the session's API key;
 * a session_images row beside it keeps the language, limits, egress policy
 * and contexts. sessimage_unpack checks every length before it trusts it, so
 * a damaged image is an error, never a crash.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

struct db;
struct sandbox;

/* Packs sb's box into out. Returns 0 with *files (files, folders and links
 * packed) and *skipped (FIFOs, sockets, what changed meanwhile), or -1 with err. */
int sessimage_pack(struct sandbox *sb, struct strbuf *out, long *files, long *skipped, char *err,
		   size_t errlen);
/* Appends the memory section to a packed image: "M", then per regular file
 * of dir (a session checkpoint, runner/session/session.h) 'c', its name and
 * bytes, then 'E'. 0, or -1 with err. */
int sessimage_pack_memory(const char *dir, struct strbuf *out, char *err, size_t errlen);
/* Unpacks len bytes at data (sessimage_pack's) into sb's box, and its memory
 * section, when it has one, into the folder memory_dir (*memory true then;
 * memory_dir NULL: skipped). beside: data is a copy's head (sessimage_load
 * from_cache), whose memory files are in memory_dir already. Returns 0 with
 * *files, or -1 with err (a malformed image, or a box too small for it). */
int sessimage_unpack(struct sandbox *sb, const void *data, size_t len, const char *memory_dir,
		     bool beside, bool *memory, long *files, char *err, size_t errlen);
/* Keeps packed (with its memory section) as a copy in the folder to_dir: each
 * memory file a hard link of the one of the same name and size in from_dir
 * (the checkpoint packed; may be NULL), else written; then the rest of the
 * image, without those files' bytes, in to_dir/head, written last. No byte of
 * memory is copied. 0, or -1 with err (to_dir then holds no usable copy). */
int sessimage_copy_write(const struct strbuf *packed, const char *from_dir, const char *to_dir,
			 const char *head, char *err, size_t errlen);

/* Stores packed as an image of session_id ("pause" or "snapshot", name may be
 * ""), with the session's language, limits and network and contexts (may be
 * NULL), under the session's key (its chunks also on the nmore connections
 * more: blobstore_store), whose images may hold cap_bytes (0: no
 * cap). A pause replaces the session's earlier pause image; a "checkpoint"
 * (the worker's periodic one) its earlier checkpoint, and becomes the
 * session's checkpoint_image_id, its checkpoint_at taken_ms before now (when
 * its state was taken: a call during the checkpoint is a use after it).
 * Returns 0 with image_id and *stored (compressed bytes), 1 over the cap (err
 * says so), -1 with err. */
int sessimage_save(struct db *db, struct db *const *more, int nmore, const char *session_id,
		   const char *kind, const char *name, const cJSON *contexts,
		   const struct strbuf *packed, long files, long long cap_bytes, long taken_ms,
		   char image_id[37], long long *stored, char *err, size_t errlen);
/* Reads image image_id: its packed files into packed (checked by blobstore)
 * and its contexts into *contexts (caller owns it). cached (NULL: none) names
 * a folder that may hold a copy of it (sessimage_copy_write's, head
 * "head-<image_id>": the worker's copy of an image it stored): used when
 * blobstore_verify_parts says its head and memory files, read where they lie,
 * are the stored image (*from_cache: packed is then the head, its memory files
 * in cached), else the image is read from the database. Returns 1, 0 when
 * there is no such image, -1 with err. */
int sessimage_load(struct db *db, const char *image_id, const char *cached, struct strbuf *packed,
		   cJSON **contexts, bool *from_cache, char *err, size_t errlen);

/* A snapshot of key as POST /v1/sessions {from_snapshot} needs it: 1 with
 * language (32 bytes), *limits, *network and *env (caller owns them; network
 * and env may be NULL), 0 when key has no such snapshot, -1 with err. */
int sessimage_snapshot_get(struct db *db, const char *image_id, int64_t key, char *language,
			   cJSON **limits, cJSON **network, cJSON **env, char *err, size_t errlen);

/* key's snapshots (only image_id's, unless NULL) into *out: a new array of
 * {id, name, session_id, language, files, size, stored,
 * created_at}, newest first, at most 1000. 0 or -1 with err. */
int sessimage_snapshot_list(struct db *db, int64_t key, const char *image_id, cJSON **out,
			    char *err, size_t errlen);
/* Deletes key's snapshot image_id and its stored bytes (freeing its part of
 * the key's cap); sessions made from it keep their files. Returns 1 deleted,
 * 0 no such snapshot of key, 2 kept because a session is starting from it,
 * -1 with err. */
int sessimage_snapshot_delete(struct db *db, const char *image_id, int64_t key, char *err,
			      size_t errlen);
/* Deletes the pause images of sessions that ended (closed, expired, lost,
 * failed) with their blobs, at most 100 a call: their bytes no longer count
 * against the key's cap; and the blobs left unfinished (blobstore_sweep).
 * Returns how many, or -1 with err. */
int sessimage_sweep(struct db *db, char *err, size_t errlen);
