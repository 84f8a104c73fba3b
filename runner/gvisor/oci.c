/* oci: writes the OCI runtime bundle config (config.json) of one gVisor sandbox.
 *
 * The container's process is box_init running as root inside the sandbox with
 * just the capabilities it needs to bind the box and become the box uid
 * (SYS_ADMIN, SETUID, SETGID, KILL); it drops them all before it execs the
 * program. gVisor's root is not root on the host: the sentry and gofer run
 * confined by runsc, and --network=none leaves only loopback. A session with an
 * egress policy names its proxy's namespace instead (netns_path, --network=host).
 */
#include "runner/gvisor/oci.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cJSON *str_array(const char *const *v)
{
	cJSON *a = cJSON_CreateArray();
	for (; a && v && *v; v++)
		cJSON_AddItemToArray(a, cJSON_CreateString(*v));
	return a;
}

static void add_mount(cJSON *mounts, const char *dest, const char *type, const char *src,
		      const char *const *opts)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "destination", dest);
	cJSON_AddStringToObject(m, "type", type);
	cJSON_AddStringToObject(m, "source", src);
	cJSON_AddItemToObject(m, "options", str_array(opts));
	cJSON_AddItemToArray(mounts, m);
}

static cJSON *build(const struct oci_params *p)
{
	static const char *const caps[] = {"CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_KILL",
					   NULL};
	static const char *const none[] = {NULL};
	static const char *const env[] = {"PATH=/usr/bin:/bin", NULL};
	static const char *const ro[] = {"rbind", "ro", "nosuid", "nodev", NULL};
	static const char *const rw[] = {"rbind", "rw", "nosuid", "nodev", NULL};
	char tmpopt[64];

	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "ociVersion", "1.0.2");

	cJSON *proc = cJSON_AddObjectToObject(root, "process");
	cJSON *user = cJSON_AddObjectToObject(proc, "user");
	cJSON_AddNumberToObject(user, "uid", 0);
	cJSON_AddNumberToObject(user, "gid", 0);
	cJSON_AddItemToObject(proc, "args", str_array(p->args));
	cJSON_AddItemToObject(proc, "env", str_array(env));
	cJSON_AddStringToObject(proc, "cwd", "/");
	cJSON_AddBoolToObject(proc, "noNewPrivileges", 1);
	cJSON *cap = cJSON_AddObjectToObject(proc, "capabilities");
	cJSON_AddItemToObject(cap, "bounding", str_array(caps));
	cJSON_AddItemToObject(cap, "effective", str_array(caps));
	cJSON_AddItemToObject(cap, "permitted", str_array(caps));
	cJSON_AddItemToObject(cap, "inheritable", str_array(none));
	cJSON_AddItemToObject(cap, "ambient", str_array(none));

	cJSON *r = cJSON_AddObjectToObject(root, "root");
	cJSON_AddStringToObject(r, "path", p->rootfs);
	cJSON_AddBoolToObject(r, "readonly", 1);
	cJSON_AddStringToObject(root, "hostname", "box");

	cJSON *mounts = cJSON_AddArrayToObject(root, "mounts");
	add_mount(mounts, "/proc", "proc", "proc", none);
	snprintf(tmpopt, sizeof(tmpopt), "size=%lld", p->tmp_bytes);
	const char *const tmp[] = {"nosuid", "nodev", "mode=1777", tmpopt, NULL};
	add_mount(mounts, "/tmp", "tmpfs", "tmpfs", tmp);
	for (const char *const *b = p->std_binds; b && *b; b++)
		add_mount(mounts, *b, "bind", *b, ro);
	for (const char *const *b = p->ro_paths; b && *b; b++)
		add_mount(mounts, *b, "bind", *b, ro);
	add_mount(mounts, "/.b", "bind", p->control_dir, rw);

	cJSON *lnx = cJSON_AddObjectToObject(root, "linux");
	cJSON *ns = cJSON_AddArrayToObject(lnx, "namespaces");
	static const char *const nss[] = {"pid", "network", "ipc", "uts", "mount", NULL};
	for (const char *const *n = nss; *n; n++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", *n);
		if (!strcmp(*n, "network") && p->netns_path)
			cJSON_AddStringToObject(o, "path", p->netns_path);
		cJSON_AddItemToArray(ns, o);
	}
	if (p->cgroups_path)
		cJSON_AddStringToObject(lnx, "cgroupsPath", p->cgroups_path);
	cJSON *res = cJSON_AddObjectToObject(lnx, "resources");
	if (p->memory_bytes > 0) {
		cJSON *mem = cJSON_AddObjectToObject(res, "memory");
		cJSON_AddNumberToObject(mem, "limit", (double)p->memory_bytes);
	}
	if (p->pids > 0) {
		cJSON *pids = cJSON_AddObjectToObject(res, "pids");
		cJSON_AddNumberToObject(pids, "limit", (double)p->pids);
	}
	return root;
}

int oci_write_config(const char *path, const struct oci_params *p, char *err, size_t errlen)
{
	int ret = -1, fd = -1;
	char *text = NULL;
	cJSON *root = build(p); /* cJSON allocates through xalloc: never NULL */
	text = cJSON_PrintUnformatted(root);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		goto out;
	}
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "cannot write '%s': %s", path,
				 n < 0 ? strerror(errno) : "short write");
			goto out;
		}
		off += (size_t)n;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(text);
	cJSON_Delete(root);
	return ret;
}
