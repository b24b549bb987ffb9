# Test target programs and the README examples.  Included by the top-level
# Makefile (which defines CC); also usable alone:
#   make -f tests/targets/targets.mk CC=cc targets
#
# Every tests/targets/NAME.c becomes tests/targets/bin/NAME and every
# examples/NAME.c becomes examples/bin/NAME, built -O0 -g with frame
# pointers so sites and backtraces are exact.  They are tracees, not part of
# avtrace: the project's CFLAGS and SANITIZE do not apply to them.
#
# Variants of mutex_counter (no source of their own):
#   mutex_counter_stripped          dynamic, symbol table stripped
#   mutex_counter_static            -static (libc linked in, no libc.so)
#   mutex_counter_static_stripped   the static one stripped: avtrace cannot
#                                   find pthread_mutex_lock and must refuse
# and acc_locked_hot_stripped: functions only from .eh_frame (access covers)

CC ?= cc
STRIP ?= strip

TARGET_CFLAGS := -std=gnu11 -O0 -g -pthread -fno-omit-frame-pointer \
	-Wall -Wextra -Wno-unused-parameter
TARGET_LDFLAGS := -pthread

TARGET_SRC := $(sort $(filter-out tests/targets/glib_%.c tests/targets/tree_check_%.c,\
	$(wildcard tests/targets/*.c)))
TARGET_VARIANTS := mutex_counter_stripped mutex_counter_static \
	mutex_counter_static_stripped acc_locked_hot_stripped
TARGET_CXX_SRC := $(sort $(wildcard tests/targets/*.cc))
TARGET_BINS := $(patsubst tests/targets/%.c,tests/targets/bin/%,$(TARGET_SRC)) \
	$(patsubst tests/targets/%.cc,tests/targets/bin/%,$(TARGET_CXX_SRC)) \
	$(addprefix tests/targets/bin/,$(TARGET_VARIANTS))

EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,examples/bin/%,$(EXAMPLE_SRC))

targets: $(TARGET_BINS) examples

examples: $(EXAMPLE_BINS)

tests/targets/bin examples/bin:
	mkdir -p $@

tests/targets/bin/%: tests/targets/%.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -o $@ $< $(TARGET_LDFLAGS)

examples/bin/%: examples/%.c tests/targets/targets.mk | examples/bin
	$(CC) $(TARGET_CFLAGS) -o $@ $< $(TARGET_LDFLAGS)

# Built as Debian builds its packages: -O2 without frame pointers (rbp is
# data), C++ with exceptions.  Call stacks must not change what they compute.
OPT_CFLAGS := -O2 -g -pthread -fomit-frame-pointer -Wall
CXX ?= c++

tests/targets/bin/stacks_o2: tests/targets/stacks_o2.c tests/targets/targets.mk | tests/targets/bin
	$(CC) -std=gnu11 $(OPT_CFLAGS) -o $@ $< $(TARGET_LDFLAGS)

tests/targets/bin/%: tests/targets/%.cc tests/targets/targets.mk | tests/targets/bin
	$(CXX) -std=gnu++17 $(OPT_CFLAGS) -o $@ $< $(TARGET_LDFLAGS)

# C++20 std::atomic::wait/notify targets (issue 29): -std=c++20 for
# <atomic>'s wait, -O0 -g like the C targets so the payload's store stays
# where the source puts it (after the flag's, in the buggy one).
tests/targets/bin/atomic_wait tests/targets/bin/atomic_wait_ok: tests/targets/bin/%: tests/targets/%.cc tests/targets/targets.mk | tests/targets/bin
	$(CXX) -std=c++20 -O0 -g -pthread -fno-omit-frame-pointer -Wall -Wextra -o $@ $< $(TARGET_LDFLAGS)

# The work-stealing queues (issue 30, shape 3): -O2 by the rule above,
# and -O0 (bin/NAME_O0), where every inlined std::vector template keeps
# its frame and its stack objects.
CXX_O0_BINS := tests/targets/bin/cxx_wsq_O0 tests/targets/bin/cxx_wsq_ok_O0 \
	tests/targets/bin/cxx_account_O0
targets: $(CXX_O0_BINS)
tests/targets/bin/cxx_wsq_ok tests/targets/bin/cxx_wsq_ok_O0: tests/targets/cxx_wsq.cc
$(CXX_O0_BINS): tests/targets/bin/%_O0: tests/targets/%.cc tests/targets/targets.mk | tests/targets/bin
	$(CXX) -std=gnu++17 -O0 -g -pthread -fno-omit-frame-pointer -Wall -o $@ $< $(TARGET_LDFLAGS)

# It reads the agent's shared region (trace/agent_proto.h).
tests/targets/bin/agent_drained: tests/targets/agent_drained.c trace/agent_proto.h tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -I. -o $@ $< $(TARGET_LDFLAGS)

tests/targets/bin/mutex_counter_static: tests/targets/mutex_counter.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -static -o $@ $< $(TARGET_LDFLAGS)

tests/targets/bin/mutex_counter_stripped: tests/targets/bin/mutex_counter
	$(STRIP) -o $@ $<

tests/targets/bin/mutex_counter_static_stripped: tests/targets/bin/mutex_counter_static
	$(STRIP) -o $@ $<

tests/targets/bin/acc_locked_hot_stripped: tests/targets/bin/acc_locked_hot
	$(STRIP) -o $@ $<

# Access-breakpoint targets (acc_*.c) are built a second time -O2 -g
# without frame pointers (bin/NAME_O2): optimized code is what the
# decoder must handle (registers for locals, rbp as a general register).
ACC_O2_CFLAGS := -std=gnu11 -O2 -g -pthread -Wall -Wextra -Wno-unused-parameter
ACC_O2_BINS := $(patsubst tests/targets/%.c,tests/targets/bin/%_O2,$(wildcard tests/targets/acc_*.c))
targets: $(ACC_O2_BINS)

tests/targets/bin/%_O2: tests/targets/%.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(ACC_O2_CFLAGS) -o $@ $< $(TARGET_LDFLAGS)

# The top-level clean already removes tests/targets/bin.
clean: clean-examples
clean-examples:
	rm -rf examples/bin

.PHONY: targets examples clean-examples

# ---- multi: several files and a shared library of its own, built in the
# variants the symbolizer must handle (tests/e2e/test_symbolize.sh)
MULTI_SRC := tests/targets/multi/main.c tests/targets/multi/work.c
MULTI_DEPS := $(MULTI_SRC) tests/targets/multi/multi.h tests/targets/bin/libmulti.so tests/targets/targets.mk
MULTI_LINK := -Ltests/targets/bin -lmulti -Wl,-rpath,'$$ORIGIN'
MULTI_BINS := $(addprefix tests/targets/bin/,multi_O0 multi_O2 multi_nopie multi_stripped)
TARGET_BINS += tests/targets/bin/libmulti.so $(MULTI_BINS)

tests/targets/bin/libmulti.so: tests/targets/multi/lib.c tests/targets/multi/multi.h | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -fPIC -shared -o $@ $<

tests/targets/bin/multi_O0: $(MULTI_DEPS) | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -o $@ $(MULTI_SRC) $(MULTI_LINK) $(TARGET_LDFLAGS)

tests/targets/bin/multi_O2: $(MULTI_DEPS) | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -O2 -o $@ $(MULTI_SRC) $(MULTI_LINK) $(TARGET_LDFLAGS)

tests/targets/bin/multi_nopie: $(MULTI_DEPS) | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -no-pie -o $@ $(MULTI_SRC) $(MULTI_LINK) $(TARGET_LDFLAGS)

tests/targets/bin/multi_stripped: tests/targets/bin/multi_O0
	$(STRIP) -o $@ $<
targets: tests/targets/bin/libmulti.so $(MULTI_BINS)

# ---- memory accesses (tests/e2e/test_memory.sh, docs/memory-access.md):
# every tests/targets/mem_NAME.c is built twice from the same source, so
# line markers name the same lines in both:
#   bin/mem_NAME        annotated: -I include, AVT_* are USDT probes
#   bin/mem_NAME_plain  -DAVT_NO_ANNOTATIONS: tests/targets/mem/mem.h
#                       defines AVT_* empty (for --watch)
# and the annotation benchmark's loop (bench/annotation-overhead) twice at
# -O2, the build whose cost matters: bin/annot_bench, bin/annot_bench_plain.
MEM_SRC := $(sort $(wildcard tests/targets/mem_*.c))
MEM_BINS := $(patsubst tests/targets/%.c,tests/targets/bin/%,$(MEM_SRC))
MEM_PLAIN_BINS := $(addsuffix _plain,$(MEM_BINS))
MEM_DEPS := tests/targets/mem/mem.h include/avtrace.h tests/targets/targets.mk
ANNOT_BENCH_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra
TARGET_BINS += $(MEM_PLAIN_BINS) tests/targets/bin/annot_bench_plain

$(MEM_BINS): tests/targets/bin/%: tests/targets/%.c $(MEM_DEPS) | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -Iinclude -o $@ $< $(TARGET_LDFLAGS)

$(MEM_PLAIN_BINS): tests/targets/bin/%_plain: tests/targets/%.c $(MEM_DEPS) | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -DAVT_NO_ANNOTATIONS -o $@ $< $(TARGET_LDFLAGS)

tests/targets/bin/annot_bench: tests/targets/annot_bench.c $(MEM_DEPS) | tests/targets/bin
	$(CC) $(ANNOT_BENCH_CFLAGS) -Iinclude -o $@ $<

tests/targets/bin/annot_bench_plain: tests/targets/annot_bench.c $(MEM_DEPS) | tests/targets/bin
	$(CC) $(ANNOT_BENCH_CFLAGS) -DAVT_NO_ANNOTATIONS -o $@ $<

targets: $(MEM_PLAIN_BINS) tests/targets/bin/annot_bench_plain

# ---- a library with avtrace.h probes loaded by dlopen() (dlopener.c)
tests/targets/bin/libannot.so: tests/targets/dl/annot_lib.c include/avtrace.h | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -Iinclude -fPIC -shared -o $@ $<

tests/targets/bin/dlopener: tests/targets/bin/libannot.so
tests/targets/bin/dlopener: TARGET_LDFLAGS += -ldl
targets: tests/targets/bin/libannot.so

# ---- avtrace verify (tests/e2e/test_verify.sh): the bank bug of
# verify_bank.c and its rebuilt variants, one -D flag each (see the source)
VERIFY_BANK_VARIANTS := hold inside atomic moved nobob
VERIFY_BANK_BINS := $(addprefix tests/targets/bin/verify_bank_,$(VERIFY_BANK_VARIANTS))
TARGET_BINS += $(VERIFY_BANK_BINS)
targets: $(VERIFY_BANK_BINS)

tests/targets/bin/verify_bank_%: tests/targets/verify_bank.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -DVB_$(shell echo $* | tr a-z A-Z) -o $@ $< $(TARGET_LDFLAGS)

# moved: the source itself gets lines above the bug (a copy of the same
# name in bin/moved/), so lines move too
tests/targets/bin/verify_bank_moved: tests/targets/verify_bank.c tests/targets/targets.mk | tests/targets/bin
	mkdir -p tests/targets/bin/moved
	{ for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo '/* a line added above the bug */'; done; cat $<; } \
		>tests/targets/bin/moved/verify_bank.c
	$(CC) $(TARGET_CFLAGS) -DVB_MOVED -o $@ tests/targets/bin/moved/verify_bank.c $(TARGET_LDFLAGS)
# Built by clang -g -O0 (no .debug_aranges, clang's default): reports of
# clang-built programs must show source lines all the same.  Skipped when
# there is no clang (its test then skips).
CLANG ?= clang
ifneq ($(shell command -v $(CLANG) 2>/dev/null),)
targets: tests/targets/bin/clang_bank
endif

tests/targets/bin/clang_bank: tests/targets/clang/clang_bank.c tests/targets/targets.mk | tests/targets/bin
	$(CLANG) -std=gnu11 -O0 -g -pthread -fno-omit-frame-pointer -o $@ $< $(TARGET_LDFLAGS)

# ---- AddressSanitizer builds (tests/e2e/test_asan30.sh): two bugs, a
# correct program, a crash, a stack object shared with a thread, a fault
# in every run and an exec with an empty environment (exec_noenv, which
# runs acc_events), built as C projects build their tests under
# ASan, by gcc (libasan.so, which must be the first library) and by clang
# (its runtime linked into the program): bin/asan/NAME_gcc,
# bin/asan/NAME_clang.  bench/asan builds every target so.
# Each compiler's variants are built only when it can link -fsanitize=address.
ASAN_NAMES := bank lockorder mutex_counter crash acc_stackobj acc_value_fault exec_noenv acc_events
ASAN_CFLAGS := -std=gnu11 -fsanitize=address -g -O1 -pthread -fno-omit-frame-pointer
asan_ok = $(shell echo 'int main(void){return 0;}' | $(1) -fsanitize=address -x c - -o /dev/null 2>/dev/null && echo yes)
ifeq ($(call asan_ok,$(CC)),yes)
targets: $(addprefix tests/targets/bin/asan/,$(addsuffix _gcc,$(ASAN_NAMES)))
endif
ifneq ($(shell command -v $(CLANG) 2>/dev/null),)
ifeq ($(call asan_ok,$(CLANG)),yes)
targets: $(addprefix tests/targets/bin/asan/,$(addsuffix _clang,$(ASAN_NAMES)))
endif
endif

tests/targets/bin/asan:
	mkdir -p $@

# one rule per program and compiler: its source is a target's or an example's
define asan_rules
tests/targets/bin/asan/$(1)_gcc: $(2) tests/targets/targets.mk | tests/targets/bin/asan
	$$(CC) $$(ASAN_CFLAGS) -o $$@ $$< $$(TARGET_LDFLAGS)
tests/targets/bin/asan/$(1)_clang: $(2) tests/targets/targets.mk | tests/targets/bin/asan
	$$(CLANG) $$(ASAN_CFLAGS) -Wno-unknown-attributes -o $$@ $$< $$(TARGET_LDFLAGS)
endef
$(foreach n,$(ASAN_NAMES),$(eval $(call asan_rules,$(n),$(firstword $(wildcard tests/targets/$(n).c examples/$(n).c)))))

# ---- GLib programs (tests/e2e/test_syncspec.sh, docs/sync-spec.md): GLib's
# locks are futex words in libglib, known by avtrace's built-in GLib sync
# spec.  Skipped with a message without GLib's headers (scripts/setup
# --test installs libglib2.0-dev); their tests then skip too.
PKG_CONFIG ?= pkg-config
GLIB_SRC := $(sort $(wildcard tests/targets/glib_*.c))
GLIB_BINS := $(patsubst tests/targets/%.c,tests/targets/bin/%,$(GLIB_SRC))
GLIB_CFLAGS := $(shell $(PKG_CONFIG) --cflags glib-2.0 2>/dev/null)
GLIB_LIBS := $(shell $(PKG_CONFIG) --libs glib-2.0 2>/dev/null)
ifneq ($(GLIB_LIBS),)
targets: $(GLIB_BINS)
else
targets: glib-skip
glib-skip:
	@echo "targets: no glib-2.0 (pkg-config glib-2.0): GLib targets not built (scripts/setup --test installs libglib2.0-dev)"
.PHONY: glib-skip
endif

$(GLIB_BINS): tests/targets/bin/%: tests/targets/%.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) $(GLIB_CFLAGS) -o $@ $< $(TARGET_LDFLAGS) $(GLIB_LIBS)

# GLib loaded late: dl_glib (not linked with GLib) dlopen()s this plugin
ifneq ($(GLIB_LIBS),)
tests/targets/bin/libglibplug.so: tests/targets/dl/glib_plug.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) $(GLIB_CFLAGS) -fPIC -shared -o $@ $< $(GLIB_LIBS)
tests/targets/bin/dl_glib: tests/targets/bin/libglibplug.so
targets: tests/targets/bin/libglibplug.so
endif

# the correct counterparts are their buggy program built with one -D
tests/targets/bin/glib_bank_ok: tests/targets/glib_bank.c
tests/targets/bin/glib_cond_ok: tests/targets/glib_cond_if.c
tests/targets/bin/glib_rwlock_ok: tests/targets/glib_rwlock_split.c

# ---- process trees (issue 28, tests/e2e/test_tree28.sh): the tree_*.c
# programs are built by the rules above; here the wrapper scripts (copied
# executable), the Check suites in CK_FORK mode (skipped with a message
# without Check's pkg-config file) and a tiny CMake project whose tests
# ctest runs (skipped without cmake; its test then skips).
TREE_SCRIPTS := $(addprefix tests/targets/bin/,tree_wrapper.sh tree_wrapper_ok.sh)
TARGET_BINS += $(TREE_SCRIPTS)
targets: $(TREE_SCRIPTS)

$(TREE_SCRIPTS): tests/targets/bin/%: tests/targets/% | tests/targets/bin
	install -m 755 $< $@

CHECK_SRC := $(sort $(wildcard tests/targets/tree_check_*.c))
CHECK_BINS := $(patsubst tests/targets/%.c,tests/targets/bin/%,$(CHECK_SRC))
CHECK_TARGET_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_TARGET_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)
ifneq ($(CHECK_TARGET_LIBS),)
targets: $(CHECK_BINS)
else
targets: check-targets-skip
check-targets-skip:
	@echo "targets: no check (pkg-config check): tree_check_* not built (scripts/setup --test installs check)"
.PHONY: check-targets-skip
endif

$(CHECK_BINS): tests/targets/bin/%: tests/targets/%.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) $(CHECK_TARGET_CFLAGS) -o $@ $< $(TARGET_LDFLAGS) $(CHECK_TARGET_LIBS)

CMAKE ?= cmake
CMAKE_PROJ_BIN := tests/targets/bin/cmake_proj
ifneq ($(shell command -v $(CMAKE) 2>/dev/null),)
targets: $(CMAKE_PROJ_BIN)/bank_test
else
targets: cmake-proj-skip
cmake-proj-skip:
	@echo "targets: no cmake: $(CMAKE_PROJ_BIN) not built"
.PHONY: cmake-proj-skip
endif

# A tiny autotools project (am_proj/: automake, libtool), copied into bin/
# and bootstrapped there (the generated files stay out of the source
# tree); its test programs are built, `make check` is the test's to run.
# Skipped without autoreconf or libtoolize; its test then skips.
AUTORECONF ?= autoreconf
AM_PROJ_BIN := tests/targets/bin/am_proj
AM_PROJ_SRC := $(addprefix tests/targets/am_proj/,configure.ac Makefile.am ledger.c ledger.h bank_test.c)
ifneq ($(and $(shell command -v $(AUTORECONF) 2>/dev/null),$(shell command -v libtoolize 2>/dev/null)),)
targets: $(AM_PROJ_BIN)/bank_test
else
targets: am-proj-skip
am-proj-skip:
	@echo "targets: no autoreconf or libtoolize: $(AM_PROJ_BIN) not built"
.PHONY: am-proj-skip
endif

$(AM_PROJ_BIN)/bank_test: $(AM_PROJ_SRC) tests/targets/targets.mk | tests/targets/bin
	rm -rf $(AM_PROJ_BIN) && mkdir -p $(AM_PROJ_BIN)
	cp $(AM_PROJ_SRC) $(AM_PROJ_BIN)/
	cd $(AM_PROJ_BIN) && { $(AUTORECONF) -fi && ./configure CC="$(CC)" CFLAGS="-O0 -g" && \
		MAKEFLAGS= $(MAKE) bank_test bank_ok_test; } >build.log 2>&1 || { tail -n 20 build.log; exit 1; }

# configured out of tree, in bin/; bank_ok_test is built with bank_test
$(CMAKE_PROJ_BIN)/bank_test: tests/targets/cmake_proj/CMakeLists.txt tests/targets/tree_bank.c \
		tests/targets/tree_bank_ok.c tests/targets/targets.mk | tests/targets/bin
	$(CMAKE) -S tests/targets/cmake_proj -B $(CMAKE_PROJ_BIN) \
		-DCMAKE_C_COMPILER="$$(command -v $(CC))" >$(CMAKE_PROJ_BIN).log
	MAKEFLAGS= $(CMAKE) --build $(CMAKE_PROJ_BIN) >>$(CMAKE_PROJ_BIN).log
	touch $@

# futex_lock_ok is futex_lock.c with FUTEX_LOCK_OK defined (it includes it)
tests/targets/bin/futex_lock_ok: tests/targets/futex_lock.c

# cas_spinlock_ok is cas_spinlock.c with CAS_SPINLOCK_OK defined (it includes it)
tests/targets/bin/cas_spinlock_ok: tests/targets/cas_spinlock.c

# An allocator of its own in a shared library the program is linked with
# (as redis-server with jemalloc): tests/e2e/test_record.sh
tests/targets/bin/libbumpalloc.so: tests/targets/alloc/bumpalloc.c tests/targets/targets.mk | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -fPIC -shared -o $@ $<

tests/targets/bin/own_malloc: tests/targets/own_malloc.c tests/targets/bin/libbumpalloc.so | tests/targets/bin
	$(CC) $(TARGET_CFLAGS) -o $@ $< -Ltests/targets/bin -lbumpalloc -Wl,-rpath,'$$ORIGIN' $(TARGET_LDFLAGS)
targets: tests/targets/bin/libbumpalloc.so
