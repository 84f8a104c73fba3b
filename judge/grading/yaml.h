/* yaml (yaml_): a small reader for the YAML files of problem packages, over
 * libyaml's document API: a file is parsed whole into a node tree, and keys and
 * scalars are picked out of it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

/* YAML files of a package are small; anything larger is a broken package. */
#define YML_MAX ((size_t)1 << 20)

/* A parsed YAML file. */
struct yaml_file {
	yaml_document_t doc;
	bool loaded;
};

/* Parses path (at most YML_MAX bytes) into y, whose top must be a mapping or
 * empty. A missing file leaves y unloaded and returns 0 (*present false).
 * Returns 0, or -1 with a message naming path in err. Release y with
 * yaml_release in both cases. present may be NULL. */
int yaml_load(struct yaml_file *y, const char *path, bool *present, char *err, size_t errlen);

/* Frees y's node tree; y may be unloaded. */
void yaml_release(struct yaml_file *y);

/* The top mapping of y, or NULL when y is unloaded or empty. */
yaml_node_t *yaml_root_map(struct yaml_file *y);

/* The text of a scalar node (owned by the document), or NULL for NULL and
 * other nodes. */
const char *yaml_scalar(yaml_node_t *n);

/* The value under key in mapping map, or NULL when map is not a mapping or has
 * no such key. */
yaml_node_t *yaml_get(struct yaml_file *y, yaml_node_t *map, const char *key);

/* YAML null: a missing value, "~" or "null". */
bool yaml_is_null(yaml_node_t *n);

/* Reads the number n (named what in file) of at least lo into *out; a null n
 * leaves *out unchanged. Returns 0, or -1 with a message in err. */
int yaml_double(yaml_node_t *n, const char *what, const char *file, double lo, double *out,
		char *err, size_t errlen);

/* The same for a positive whole number (a fraction is rounded up), at most 1e9. */
int yaml_long(yaml_node_t *n, const char *what, const char *file, long *out, char *err,
	      size_t errlen);
