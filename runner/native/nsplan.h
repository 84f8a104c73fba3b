/* nsplan: the worker's side of a native run's plan (the format is in
 * runner/native/init/ns_proto.h): builds it from a run spec, and explains ns_init's
 * reports. Not for judge/. */
#pragma once
#include "runner/native/init/ns_proto.h"
#include "runner/sandbox.h"
#include "runner/scmp.h"

/* What the worker adds to every plan from its global set-up. */
struct nsplan_host {
	const char *box_root;		  /* read-only paths under it are refused */
	const char *newroot;		  /* host folder where init mounts its root */
	const struct scmp_filter *filter; /* installed by the program before execve */
	int last_cap;
};

/* Builds the root and the program of one run of spec in sb into p (zeroed by the
 * caller up to its pool). Read-only paths under box_root, /proc, /sys, /dev,
 * /root, /home, /run or /etc itself are refused. Returns 0 or -1 with the reason
 * in err. */
int nsplan_build(struct nsinit_plan *p, const struct sandbox *sb, const struct run_spec *spec,
		 const struct nsplan_host *host, char *err, size_t errlen);
/* Writes what failed, from a NSINIT_FAIL report, into buf. */
void nsplan_explain(const struct nsinit_plan *p, const struct nsinit_report *r, char *buf,
		    size_t len);
