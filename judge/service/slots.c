/* slots: machine-wide sandbox slot numbers by flock (see slots.h). */
#include "judge/service/slots.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"

int slots_take(const char *box_root, enum slot_kind kind, int *fd_out)
{
	int first = kind == SLOT_SESSION ? SLOT_GRADE_END : SLOT_CLI_END;
	int end = kind == SLOT_SESSION ? SLOT_LOCKS_MAX : SLOT_GRADE_END;
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
	int ret = -1;
	strbuf_addf(&dir, "%s-slots", box_root);
	if (mkdir(dir.buf, 0700) < 0 && errno != EEXIST) {
		log_error("slots: cannot create '%s': %s", dir.buf, strerror(errno));
		goto out;
	}
	for (int n = first; n < end; n++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%d", dir.buf, n);
		int fd = open(path.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			log_error("slots: cannot open '%s': %s", path.buf, strerror(errno));
			goto out;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*fd_out = fd;
			ret = n;
			goto out;
		}
		close(fd);
	}
	log_error("slots: all %d %s slot numbers are taken", end - first,
		  kind == SLOT_SESSION ? "session" : "grading");
out:
	strbuf_release(&dir);
	strbuf_release(&path);
	return ret;
}
