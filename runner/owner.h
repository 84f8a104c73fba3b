/* owner: the folder that holds what this process's sandboxes put on the host,
 * locked while the process lives, and the reclaim of what dead owners left.
 *
 * How it works. sandbox_global_init opens an owner: the folder
 * <box_root>/owners/<id> (id "o<pid>x<random hex>"), made as ".<id>", locked
 * with flock on the folder itself and only then renamed into place, so that a
 * reclaimer never finds a live owner unlocked. Everything the process's
 * sandboxes make on the host is found from that folder:
 *   - boxes, gVisor's bundles and work folder, runsc's --root: inside it;
 *   - cgroups: named "<word>-<id>-..." in the parent folders that its file
 *     `cgroups` lists (owner_note_cgroup_parent), so a reclaimer needs no
 *     configuration of the dead process;
 *   - processes: in those cgroups, and runsc processes whose --root is inside it.
 * A process that ends in any way (exit, SIGKILL, a crash) drops its lock. The
 * next owner_reclaim_dead under the same box_root (any process: the next
 * worker at its start, `judge up` after its children) takes the lock and
 * reclaims: kills the processes, unmounts every mount below the folder,
 * removes the cgroups, then the folder. A live owner's lock cannot be taken,
 * so processes side by side on one host never touch each other's things;
 * nothing is matched by pid, so a reused pid changes nothing.
 *
 * The process's own folder goes with owner_close (after a clean shutdown it
 * finds nothing left to reclaim) or, for a stop that cannot wait for the
 * backends, owner_reclaim_self: the same reclaim without runsc, in a few
 * system calls per cgroup and mount.
 */
#pragma once
#include <stddef.h>

/* What a reclaim found and removed. */
struct owner_counts {
	int processes; /* runsc processes outside cgroups, killed */
	int cgroups;   /* cgroups removed (every hierarchy counts) */
	int mounts;    /* mounts unmounted */
};

/* Opens (creates and locks) this process's owner folder under box_root, an
 * absolute path. A second call in the same process returns 0 and keeps the
 * first owner; a process forked from an owner opens its own. 0, or -1 with err. */
int owner_open(const char *box_root, char *err, size_t errlen);
/* This process's owner id ("o<pid>x<hex>", at most 24 characters) and folder,
 * or NULL when it has none. */
const char *owner_id(void);
const char *owner_dir(void);
/* Records that this owner makes cgroups named "<word>-<id>-..." in the cgroup
 * folder parent (which need not exist yet), for whoever reclaims it. A parent
 * noted before is not written again. 0, or -errno. */
int owner_note_cgroup_parent(const char *parent);
/* Reclaims every owner folder under box_root whose lock is free (its process
 * is gone), and any ".<id>" left by a process that died while making its
 * own. Returns how many owners were reclaimed (each logged with what it held). */
int owner_reclaim_dead(const char *box_root);
/* Kills, unmounts and removes everything this process's owner holds, keeping
 * the folder and its lock (for a stop that cannot wait: sandbox_global_abort).
 * Adds what it found into *c when c is not NULL. */
void owner_reclaim_self(struct owner_counts *c);
/* Reclaims whatever this process's owner still holds, removes its folder and
 * drops the lock. Returns how many things were left to reclaim (0 after a
 * clean shutdown of the backends), or 0 when there is no owner. */
int owner_close(void);
