/* oci: writes the OCI runtime bundle config (config.json) of one gVisor sandbox. */
#pragma once
#include <stddef.h>

/* What goes into one bundle. Paths are host paths unless said otherwise. */
struct oci_params {
	const char *rootfs;	      /* read-only root folder (holds /etc, /box, the init) */
	const char *const *args;      /* the container's process, paths as seen inside */
	const char *const *ro_paths;  /* bound read-only at the same path; may be NULL */
	const char *const *std_binds; /* host folders bound read-only at the same path
				       * (/usr, /lib ...); may be NULL */
	const char *control_dir;      /* bound read-write at /.b (the box arrives there) */
	const char *cgroups_path;     /* linux.cgroupsPath, e.g. "/judge-gvisor/<id>" */
	long long memory_bytes;	      /* linux.resources.memory.limit; 0 = none */
	long pids;		      /* linux.resources.pids.limit; 0 = none */
	long long tmp_bytes;	      /* size of the /tmp tmpfs */
	/* the network namespace to join, by a path runsc can open (with
	 * --network=host); NULL = a namespace of the sandbox's own */
	const char *netns_path;
};

/* Writes path (a config.json) from p. Returns 0, or -1 with a message in err. */
int oci_write_config(const char *path, const struct oci_params *p, char *err, size_t errlen);
