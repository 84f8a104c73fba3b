# judge — build, test, run. `make run` and `make test` do all their own set-up.
CC ?= gcc
BUILD := build
BIN := bin/judge
PKGS := libpq libmicrohttpd libcjson libseccomp libpcre2-8 yaml-0.1 libcurl libarchive

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wvla
HARDEN := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) $(HARDEN) -MMD -MP -pthread
LDFLAGS += -pie -Wl,-z,relro,-z,now -pthread
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
BUILD := build/san
BIN := bin/judge-san
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lpq -lmicrohttpd -lcjson -lseccomp -lpcre2-8 -lyaml -lcurl -larchive)
CPPFLAGS += -I. -I/usr/include/postgresql $(PKG_CFLAGS)
# libpq, libmicrohttpd, libcurl and libarchive are loaded on first use, not linked (common/dynlib.h):
# they and their ~30 dependencies cost ~4.5 ms at every start of a one-shot `judge run`
LIBS := $(filter-out -lpq -lmicrohttpd -lcurl -larchive,$(PKG_LIBS)) -lz -lm

# the folder tells the layer (docs/ARCHITECTURE.md): common/ < store/, runner/ < grading/ < service/ < api/, cli/
SRCS := $(sort $(filter-out runner/zygote/%,$(wildcard common/*.c runner/*.c runner/*/*.c judge/*/*.c judge/*/*/*.c)))
# the SQL migrations are built into the binary (judge/store/migrate.h)
MIGRATIONS := $(sort $(wildcard migrations/*.sql))
# and so are web/'s OpenAPI document, /docs page, playground and dashboard (judge/api/docs.h)
WEB := $(sort $(wildcard web/*.json web/*.html web/*.js web/*.css))
OBJS := $(SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/migrations.o $(BUILD)/gen/web.o
LIB_OBJS := $(filter-out $(BUILD)/judge/cli/main.o,$(OBJS))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

# `make install`: where things go (DESTDIR is prepended to all of them)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
STATEDIR ?= /var/lib/judge

.PHONY: all deps test unit-tests run bench bench-runner bench-session bench-sessions bench-eval bench-oneshot bench-compile bench-pause bench-e2b bench-forks soak bench-soak format format-check clean fuzz install web FORCE
all: $(BIN) bin/box_init bin/ns_init bin/sessd

# box_init: the first process of every gVisor sandbox (runner/gvisor/gvisor.c); static,
# since the sandbox root has only what the runtime needs. Not in the runner/*/*.c glob (init/ is one level deeper).
bin/box_init: runner/gvisor/init/box_init.c runner/gvisor/init/box_proto.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -I. -static -o $@ $<

# ns_init: the first process of every native run (runner/native/native.c); static and
# small, so that starting it copies nothing of the worker. On x86-64 without libc
# (its own _start and system calls): glibc's static start-up was half its cost.
NS_INIT_FLAGS := $(if $(filter x86_64,$(shell uname -m)),-ffreestanding -nostdlib -fno-pie -no-pie \
	-fno-stack-protector -fno-tree-loop-distribute-patterns -fno-asynchronous-unwind-tables)
bin/ns_init: runner/native/init/ns_init.c runner/native/init/ns_proto.h runner/native/init/clone_run.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -I. -static $(NS_INIT_FLAGS) -o $@ $<

# sessd: the program of every session's sandbox (runner/session/session.c starts a
# session's contexts and processes through it); static, so it needs nothing of
# the sandbox's root. Not in the runner/*/*.c glob (init/ is one level deeper).
SESSD_SRCS := runner/session/init/sessd.c runner/session/init/shell_shortcut.c
bin/sessd: $(SESSD_SRCS) runner/session/init/sessd_proto.h runner/session/init/shell_shortcut.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -I. -static -o $@ $(SESSD_SRCS)

$(BIN): $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# an installed binary (one not in a checkout) looks for SYSCONFDIR/judge/judge.ini
# when ./judge.ini is missing, and without one for DATADIR/judge/languages and
# problems and STATEDIR (judge/cli/home.c); home.o is rebuilt when they change
$(BUILD)/judge/cli/home.o: CPPFLAGS += -DJUDGE_SYSCONFDIR='"$(SYSCONFDIR)"' \
	-DJUDGE_DATADIR='"$(DATADIR)"' -DJUDGE_STATEDIR='"$(STATEDIR)"'
$(BUILD)/judge/cli/home.o: $(BUILD)/gen/sysconfdir
$(BUILD)/gen/sysconfdir: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SYSCONFDIR) $(DATADIR) $(STATEDIR)' | cmp -s - $@ || \
		echo '$(SYSCONFDIR) $(DATADIR) $(STATEDIR)' > $@
FORCE:

$(BUILD)/gen/migrations.c: $(MIGRATIONS) common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh judge/store/migrate.h migration_file migration_files .sql \
		$(MIGRATIONS) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/migrations.o: $(BUILD)/gen/migrations.c
	$(CC) $(CPPFLAGS) -I. $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/web.c: $(WEB) common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh judge/api/docs.h docs_file docs_files "" $(WEB) > $@.tmp && mv $@.tmp $@

# The playground's and the dashboard's bundles (web/playground.js, web/dashboard.js)
# from web/src/ with npm and esbuild. They are committed, so `make` needs neither
# Node nor the network; tests/integration/web.sh fails when they are stale.
web:
	cd web/src && npm ci --no-audit --no-fund --silent && node build.mjs

$(BUILD)/gen/web.o: $(BUILD)/gen/web.c
	$(CC) $(CPPFLAGS) -I. $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS) -lcriterion $(LDFLAGS)

# sessd's shell shortcut is not in the binary: its test builds it in
$(BUILD)/tests/test_shell_shortcut: tests/test_shell_shortcut.c runner/session/init/shell_shortcut.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ -lcriterion $(LDFLAGS)

tests-build: $(BIN) bin/box_init bin/ns_init bin/sessd $(TEST_BINS)

# Installs missing Debian packages and language runtimes; quick when all is there.
deps:
	@bash languages/deps.sh

test: deps
	@$(MAKE) --no-print-directory tests-build
	@bash tests/run.sh $(BUILD) $(BIN)

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) up --config judge.ini

# Installs the binary, box_init, ns_init and sessd (found beside it), languages/, problems/, a
# judge.ini with absolute paths (kept when one is there: the new one goes
# beside it as judge.ini.new) and the systemd units. Runtimes: `make deps`.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/judge $(DESTDIR)$(SYSCONFDIR)/judge \
		$(DESTDIR)$(UNITDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/judge
	install -m 755 bin/box_init $(DESTDIR)$(BINDIR)/box_init
	install -m 755 bin/ns_init $(DESTDIR)$(BINDIR)/ns_init
	install -m 755 bin/sessd $(DESTDIR)$(BINDIR)/sessd
	rm -rf $(DESTDIR)$(DATADIR)/judge/languages $(DESTDIR)$(DATADIR)/judge/problems
	cp -R languages problems $(DESTDIR)$(DATADIR)/judge/
	chmod -R u=rwX,go=rX $(DESTDIR)$(DATADIR)/judge
	sed -e 's|^state_dir = .*|state_dir = $(STATEDIR)|' \
	    -e 's|^languages_dir = .*|languages_dir = $(DATADIR)/judge/languages|' \
	    -e 's|^problems_dir = .*|problems_dir = $(DATADIR)/judge/problems|' \
	    judge.ini > $(BUILD)/judge.ini.installed
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/judge/judge.ini ] && \
	    ! cmp -s $(BUILD)/judge.ini.installed $(DESTDIR)$(SYSCONFDIR)/judge/judge.ini; then \
		echo "install: keeping $(DESTDIR)$(SYSCONFDIR)/judge/judge.ini; the new one is judge.ini.new"; \
		install -m 644 $(BUILD)/judge.ini.installed $(DESTDIR)$(SYSCONFDIR)/judge/judge.ini.new; \
	else \
		install -m 644 $(BUILD)/judge.ini.installed $(DESTDIR)$(SYSCONFDIR)/judge/judge.ini; \
	fi
	for u in judge-serve judge-worker; do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
			dist/systemd/$$u.service.in > $(DESTDIR)$(UNITDIR)/$$u.service && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u.service || exit 1; \
	done

bench: deps all
	@bash tests/bench/service.sh $(BIN)

bench-runner: deps all
	@bash tests/bench/runner.sh $(BIN)

bench-oneshot: deps all
	@bash tests/bench/oneshot.sh $(BIN)

# the C# hello compile through the warm compile server against a fresh csc (issue 25)
bench-compile: deps all
	@bash tests/bench/compile.sh $(BIN)

bench-session: all
	@bash tests/bench/session.sh

# evaluation throughput (judge eval and /v1/evaluations) against bare python3
bench-eval: deps all
	@bash tests/bench/eval.sh $(BIN)
	@bash tests/bench/humaneval.sh $(BIN)
	@bash tests/bench/evalsets.sh $(BIN)

# the session targets of issue 11 end to end (create, a trivial cell, idle memory, 50 open, npm cache)
# gVisor's floor for a warm Python run: a fork from a started python against a fresh
# start, under gVisor alone (docs/warm-start.md)
bench-forks: deps
	@bash tests/bench/forks.sh

bench-sessions: deps all
	@bash tests/bench/sessions.sh $(BIN)

# pause and resume of a Python session with ~100 MB of files against a fresh create (issue 26)
bench-pause: all
	@bash tests/bench/session_pause.sh $(BIN)

# E2B's SDK against the judge (issue 23): create to first result, runCode, commands.run, beside bare baselines
bench-e2b: deps all
	@bash tests/bench/e2b.sh $(BIN)

# a bounded soak (issue 29): loud, quiet and session keys against one service; the quiet
# key's p99 under load, queue wait per key, RSS over time. SOAK_S=1800 for a long one.
soak bench-soak: all
	@bash tests/bench/soak.sh $(BIN)

fuzz:
	@bash tests/fuzz/run.sh

FORMAT_FILES = $(wildcard common/*.[ch] judge/*/*.[ch] judge/*/*/*.[ch] runner/*.[ch] runner/*/*.[ch] runner/*/init/*.[ch] tests/*.c)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format ok"

clean:
	rm -rf build bin

-include $(OBJS:.o=.d) $(TEST_BINS:=.d)
