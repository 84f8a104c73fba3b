/* package: the files of a problem package as a checked tree on disk, read from
 * a zip (an upload) or a folder (problems_dir, `judge problems add DIR`), with
 * its content hash (docs/problems.md).
 *
 * Every path is checked before anything is written: relative, '/'-separated,
 * no empty, "." or ".." segment, no control character, valid UTF-8 (a
 * backslash is a character like another: DOMjudge's examples hold one), at most PACKAGE_PATH_MAX
 * bytes; a file and a folder of one name, or a name given twice, are refused. Names whose segment
 * starts with '.' (.git, .DS_Store) and a zip's __MACOSX/ folder are left out. Links and devices
 * are refused (a zip's entries by zipfiles.h; a folder's by lstat, never followed). Sizes are
 * capped: the files' count, and their bytes in all, counted as a zip inflates (a bomb stops at the
 * cap) and from each file's size before a folder's file is read (a sparse 10 GB file is refused
 * unread).
 *
 * A package's content hash is the SHA-256 of its manifest: one line
 * "<file sha256> <size> <path>\n" per file, in byte order of the paths. Two
 * packages with the same files have the same hash, whatever the zip.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PACKAGE_PATH_MAX 512

struct package_file {
	char *path;    /* relative to the package's folder */
	char hash[65]; /* lower-case hex SHA-256 of the bytes */
	int64_t size;  /* bytes */
};

struct package {
	char *dir; /* host folder that holds problem.yaml and the files */
	char *tmp; /* the temporary folder made here (removed by package_release), or NULL */
	struct package_file *files; /* sorted by path */
	int nfiles;
	int64_t bytes; /* all files' sizes */
	char hash[65]; /* the content hash */
};

struct package_caps {
	int max_files;
	int64_t max_bytes;
};

/* Checks one path of a package (rules above). Returns true when it is valid;
 * else why says what is wrong. */
bool package_path_valid(const char *path, char *why, size_t whylen);

/* Unpacks the zip of len bytes into a new folder under tmp_root (mkdtemp)
 * and fills pk. The package's folder is the zip's top, or the zip's one
 * top-level folder when problem.yaml is there. Returns 0, or -1 with a
 * message in err naming the file at fault (pk is then empty). */
int package_from_zip(struct package *pk, const void *zip, size_t len, const char *tmp_root,
		     const struct package_caps *caps, char *err, size_t errlen);

/* Fills pk from the folder dir, which stays where it is (pk->tmp NULL).
 * Returns 0, or -1 with a message in err naming the file at fault. */
int package_from_dir(struct package *pk, const char *dir, const struct package_caps *caps,
		     char *err, size_t errlen);

/* Frees what pk holds and removes its temporary folder; pk may be zeroed. */
void package_release(struct package *pk);

/* The manifest as JSON: [[path, sha256, size], ...] (caller owns it). */
cJSON *package_manifest_json(const struct package_file *files, int n);
/* Reads a manifest of package_manifest_json into *files (caller frees with
 * package_files_free) and checks every path and hash. Returns the count, or
 * -1 with err. */
int package_manifest_parse(const cJSON *j, struct package_file **files, char *err, size_t errlen);
void package_files_free(struct package_file *files, int n);

/* The content hash of files (sorted by path) into hash. */
void package_hash(const struct package_file *files, int n, char hash[65]);

/* Creates the new file path (checked with package_path_valid) under the
 * folder dirfd, with its missing parent folders, never through a link.
 * Returns its fd (write-only), or -1 with err (one that exists: "twice"). */
int package_create_file(int dirfd, const char *path, char *err, size_t errlen);

/* Removes the tree at path (no link is followed). Returns 0 or -errno. */
int package_rmtree(const char *path);
