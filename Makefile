# judge — build, test, run. `make run` and `make test` do all their own set-up.
CC ?= gcc
BUILD := build
BIN := bin/judge
PKGS := libpq libmicrohttpd libcjson libseccomp libpcre2-8 yaml-0.1 libcurl

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
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lpq -lmicrohttpd -lcjson -lseccomp -lpcre2-8 -lyaml -lcurl)
CPPFLAGS += -I. -I/usr/include/postgresql $(PKG_CFLAGS)
LIBS := $(PKG_LIBS) -lm

# the folder tells the layer (docs/ARCHITECTURE.md): common/ < store/, runner/ < grading/ < service/ < api/, cli/
SRCS := $(sort $(wildcard common/*.c runner/*.c judge/*/*.c))
# the SQL migrations are built into the binary (judge/store/migrate.h)
MIGRATIONS := $(sort $(wildcard migrations/*.sql))
OBJS := $(SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/migrations.o
LIB_OBJS := $(filter-out $(BUILD)/judge/cli/main.o,$(OBJS))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps test unit-tests run bench bench-runner format format-check clean fuzz
all: $(BIN) bin/box_init

# box_init: the first process of every gVisor sandbox (runner/gvisor.c); static,
# since the sandbox root has only what the runtime needs. Not in the runner/*.c glob.
bin/box_init: runner/init/box_init.c runner/init/box_proto.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -I. -static -o $@ $<

$(BIN): $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/migrations.c: $(MIGRATIONS) migrations/embed.sh
	@mkdir -p $(dir $@)
	sh migrations/embed.sh $(MIGRATIONS) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/migrations.o: $(BUILD)/gen/migrations.c
	$(CC) $(CPPFLAGS) -I. $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS) -lcriterion $(LDFLAGS)

tests-build: $(BIN) bin/box_init $(TEST_BINS)

# Installs missing Debian packages and language runtimes; quick when all is there.
deps:
	@bash languages/deps.sh

test: deps
	@$(MAKE) --no-print-directory tests-build
	@bash tests/run.sh $(BUILD) $(BIN)

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) up --config judge.ini

bench: deps all
	@bash tests/bench/service.sh $(BIN)

bench-runner: deps all
	@bash tests/bench/runner.sh $(BIN)

fuzz:
	@bash tests/fuzz/run.sh

FORMAT_FILES = $(wildcard common/*.[ch] judge/*/*.[ch] runner/*.[ch] tests/*.c)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format ok"

clean:
	rm -rf build bin

-include $(OBJS:.o=.d)
