# avtrace build.  `make` builds ./avtrace; `make check` builds and runs every
# test suite; `make SANITIZE=address,undefined` and `make DEVELOPER=1`
# (-Werror) are the two builds the project keeps clean.

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
PKG_CONFIG ?= pkg-config

PKGS := libdw libelf libunwind-ptrace jansson capstone
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lunwind-generic

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS) -pthread
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

LIB_DIRS := trace decode tracer symbolizer replay predict explore verify minimize
LIB_SRC := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_OBJ := $(LIB_SRC:.c=.o)
LIB := libavtrace.a

AGENT := libavtrace-agent.so

all: avtrace $(AGENT) targets

$(LIB): $(LIB_OBJ)
	$(AR) rcs $@ $^

%.o: %.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

avtrace: cli/main.o $(wildcard cli/*.c cli/*.h) $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$(wildcard cli/*.c)) $(LIB) $(ALL_LDFLAGS) $(PKG_LIBS)

# The in-process agent (agent/, docs/agent.md): preloaded into the target,
# so never built with the sanitizers, always position-independent, and
# linked with nothing of avtrace.
AGENT_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -fPIC -fvisibility=hidden \
	-ftls-model=initial-exec -I.
# agent/access.c runs between any two instructions of the program: no
# vector register may change (-mgeneral-regs-only).
$(AGENT): agent/avtrace_agent.c agent/access.c agent/agent_int.h trace/agent_proto.h trace/event.h
	$(CC) $(AGENT_CFLAGS) -mgeneral-regs-only -c -o agent/access.pic.o agent/access.c
	$(CC) $(AGENT_CFLAGS) -shared -Wl,-z,now -Wl,-soname,$(AGENT) -o $@ agent/avtrace_agent.c \
		agent/access.pic.o -pthread

# ---- test target programs (known behaviour, -O0 -g unless named otherwise)
include tests/targets/targets.mk

# ---- unit tests (Check)
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:.c=)

tests/unit/test_%: tests/unit/test_%.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LIB) $(ALL_LDFLAGS) $(PKG_LIBS) $(CHECK_LIBS)

# Fragments owned by one part each: extra prerequisites (fixture programs)
# of that part's unit tests, extra clean rules.
-include $(sort $(wildcard tests/unit/*.mk))

unit: $(UNIT_BIN) $(UNIT_EXTRA)
	@fail=0; for t in $(UNIT_BIN); do CK_DEFAULT_TIMEOUT=60 ./$$t || fail=1; done; exit $$fail

e2e: avtrace $(AGENT) targets
	@tests/e2e/run.sh

# The same suite on the ptrace path alone: record, test and so their
# replays without the in-process agent (docs/agent.md), which is what
# `--no-agent` gives; the agent's own tests (test_agent.sh) still use it.
e2e-ptrace: avtrace $(AGENT) targets
	@echo "e2e again, on ptrace alone (AVTRACE_AGENT=0):"
	@AVTRACE_AGENT=0 tests/e2e/run.sh

check: all $(UNIT_BIN) $(UNIT_EXTRA)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory e2e
	@$(MAKE) --no-print-directory e2e-ptrace
	@$(MAKE) --no-print-directory real

bench/predict_bench: bench/predict_bench.c $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(ALL_LDFLAGS) $(PKG_LIBS)

bench/predict_scale: bench/predict_scale.c $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(ALL_LDFLAGS) $(PKG_LIBS)

# the bare ptrace stop (bench/agent); a probe, not avtrace code
bench/int3_floor: bench/int3_floor.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra -o $@ $<

# -O0 access events through a pointer (bench/agent); a workload
bench/ptrsum: bench/ptrsum.c
	$(CC) -std=gnu11 -O0 -g -pthread -o $@ $<

bench/avfilter_bench: bench/avfilter_bench.c $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(ALL_LDFLAGS) $(PKG_LIBS)

# Debian's multithreaded programs (tests/real; skipped where not installed)
real: avtrace targets
	@E2E_TIMEOUT=$${E2E_TIMEOUT:-400} tests/e2e/run.sh tests/real/test_real.sh

# "10 times out of 10" for every bug shape of issues 13 and 14 (minutes;
# not part of check; REPEAT=N to change the count)
repeat: avtrace $(AGENT) targets
	@E2E_TIMEOUT=$${E2E_TIMEOUT:-1800} tests/e2e/run.sh tests/repeat/test_repeat.sh

# ---- fuzz harnesses (`make fuzz`; not part of check)
include tests/fuzz/fuzz.mk

demo: avtrace $(AGENT) targets
	@examples/demo.sh

install: avtrace $(AGENT)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/pkgconfig \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/lib/avtrace
	install -m 755 avtrace $(DESTDIR)$(PREFIX)/bin/avtrace
	install -m 644 docs/avtrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/avtrace.1
	install -m 644 $(AGENT) $(DESTDIR)$(PREFIX)/lib/avtrace/$(AGENT)
	install -m 644 include/avtrace.h $(DESTDIR)$(PREFIX)/include/avtrace.h
	sed 's|@PREFIX@|$(PREFIX)|' include/avtrace.pc.in > $(DESTDIR)$(PREFIX)/share/pkgconfig/avtrace.pc

clean:
	rm -f avtrace $(AGENT) agent/*.o bench/int3_floor bench/ptrsum $(LIB) cli/*.o cli/*.d $(foreach d,$(LIB_DIRS),$(d)/*.o $(d)/*.d)
	rm -f $(UNIT_BIN) tests/unit/*.o tests/unit/*.d
	rm -rf tests/unit/bin
	rm -rf tests/targets/bin avtrace-out tests/e2e/out bench/predict_bench bench/avfilter_bench bench/predict_scale

.PHONY: repeat all check unit e2e e2e-ptrace real install clean targets demo
-include $(LIB_OBJ:.o=.d) cli/main.d $(UNIT_BIN:=.d)
