/* test_oci: the network namespace oci_write_config names: none of its own for a
 * pooled sandbox (runsc --network=none), the caller's path for a session's
 * egress proxy (runsc --network=host joins it). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "runner/gvisor/oci.h"

/* The namespaces array of the config written from p. */
static cJSON *write_and_read(const struct oci_params *p, cJSON **root)
{
	char path[] = "/tmp/test_oci.XXXXXX", err[256];
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(oci_write_config(path, p, err, sizeof(err)), 0, "%s", err);
	struct strbuf sb = STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&sb, path, 1 << 20), 0);
	unlink(path);
	*root = cJSON_Parse(sb.buf);
	strbuf_release(&sb);
	cr_assert(*root);
	return cJSON_GetObjectItem(cJSON_GetObjectItem(*root, "linux"), "namespaces");
}

static const cJSON *ns_of(const cJSON *nss, const char *type)
{
	const cJSON *n;
	cJSON_ArrayForEach(
	    n, nss) if (!strcmp(cJSON_GetObjectItem(n, "type")->valuestring, type)) return n;
	return NULL;
}

static const char *const args[] = {"/init", NULL};

Test(oci, network_of_its_own_without_a_path)
{
	struct oci_params p = {.rootfs = "/r", .args = args, .control_dir = "/c", .tmp_bytes = 1};
	cJSON *root;
	const cJSON *net = ns_of(write_and_read(&p, &root), "network");
	cr_assert(net);
	cr_assert_null(cJSON_GetObjectItem(net, "path"));
	cJSON_Delete(root);
}

Test(oci, network_named_by_path)
{
	struct oci_params p = {.rootfs = "/r",
			       .args = args,
			       .control_dir = "/c",
			       .tmp_bytes = 1,
			       .netns_path = "/proc/12/fd/7"};
	cJSON *root;
	const cJSON *nss = write_and_read(&p, &root);
	const cJSON *net = ns_of(nss, "network");
	cr_assert(net);
	cr_assert_str_eq(cJSON_GetObjectItem(net, "path")->valuestring, "/proc/12/fd/7");
	/* only the network namespace is the caller's */
	cr_assert_null(cJSON_GetObjectItem(ns_of(nss, "pid"), "path"));
	cJSON_Delete(root);
}
