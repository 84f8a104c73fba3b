/* dynlib: shared libraries loaded on first use (see dynlib.h). */
#include "common/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *dynlib_sym(struct dynlib *lib, const char *name)
{
	pthread_mutex_lock(&lib->lock);
	if (!lib->handle)
		lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	void *f = lib->handle ? dlsym(lib->handle, name) : NULL;
	if (!f) {
		const char *why = dlerror();
		fprintf(stderr, "judge: cannot load %s from %s: %s\n", name, lib->soname,
			why ? why : "not found");
		exit(1);
	}
	pthread_mutex_unlock(&lib->lock);
	return f;
}
