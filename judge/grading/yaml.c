/* yaml: the YAML files of problem packages read through libyaml's document API. */
#include "judge/grading/yaml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

/* Parses path. A missing file leaves y unloaded and returns 0 (*present false). */
int yaml_load(struct yaml_file *y, const char *path, bool *present, char *err, size_t errlen)
{
	memset(y, 0, sizeof *y);
	if (present)
		*present = false;
	struct strbuf text = STRBUF_INIT;
	int rc = strbuf_read_file(&text, path, YML_MAX);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path,
			 rc == -EFBIG ? "file too large" : strerror(-rc));
		return -1;
	}
	if (present)
		*present = true;
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		xalloc_die(0); /* libyaml's only failure here is its allocation */
	yaml_parser_set_input_string(&parser, (const unsigned char *)text.buf, text.len);
	int ret = -1;
	if (!yaml_parser_load(&parser, &y->doc)) {
		snprintf(err, errlen, "%s:%zu: invalid YAML: %s", path,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "parse error");
		goto out;
	}
	y->loaded = true;
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	if (root && root->type != YAML_MAPPING_NODE &&
	    !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
		snprintf(err, errlen, "%s: expected a mapping of keys at the top", path);
		goto out;
	}
	ret = 0;
out:
	yaml_parser_delete(&parser);
	strbuf_release(&text);
	return ret;
}

void yaml_release(struct yaml_file *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

yaml_node_t *yaml_root_map(struct yaml_file *y)
{
	if (!y->loaded)
		return NULL;
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	return root && root->type == YAML_MAPPING_NODE ? root : NULL;
}

const char *yaml_scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

yaml_node_t *yaml_get(struct yaml_file *y, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = yaml_scalar(yaml_document_get_node(&y->doc, p->key));
		if (k && !strcmp(k, key))
			return yaml_document_get_node(&y->doc, p->value);
	}
	return NULL;
}

/* YAML null: a missing value, "~" or "null". */
bool yaml_is_null(yaml_node_t *n)
{
	const char *s = yaml_scalar(n);
	return !n || (s && (!*s || !strcmp(s, "~") || !strcmp(s, "null")) &&
		      n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
}

int yaml_double(yaml_node_t *n, const char *what, const char *file, double lo, double *out,
		char *err, size_t errlen)
{
	if (yaml_is_null(n))
		return 0;
	const char *s = yaml_scalar(n);
	char *end = NULL;
	double v = s ? strtod(s, &end) : NAN;
	if (!s || end == s || *end || !isfinite(v) || v < lo) {
		snprintf(err, errlen, "%s: %s must be a number of at least %g, got '%s'", file,
			 what, lo, s ? s : "(not a number)");
		return -1;
	}
	*out = v;
	return 0;
}

int yaml_long(yaml_node_t *n, const char *what, const char *file, long *out, char *err,
	      size_t errlen)
{
	double v = 0;
	if (yaml_is_null(n))
		return 0;
	if (yaml_double(n, what, file, 0, &v, err, errlen) < 0)
		return -1;
	if (v <= 0 || v > 1e9) {
		snprintf(err, errlen, "%s: %s must be a positive whole number, got '%s'", file,
			 what, yaml_scalar(n));
		return -1;
	}
	*out = (long)ceil(v);
	return 0;
}
