# Fuzz harnesses (tests/fuzz/README.md), included by the top Makefile.
# Not part of `make check`: `make fuzz` runs each harness for FUZZ_SECONDS
# (default 60) on its seed corpus, one after the other, and fails on the
# first crash, hang, leak, out-of-memory or sanitizer report; the input is
# left in tests/fuzz/crashes/.  FUZZ_TARGETS picks harnesses.
#
#   make fuzz FUZZ_SECONDS=1800 FUZZ_TARGETS=trace

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= trace schedule pattern meta predict dump
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -I. $(PKG_CFLAGS) \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_DIR := tests/fuzz
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRC))
FUZZ_BIN := $(patsubst %,$(FUZZ_DIR)/bin/fuzz_%,$(FUZZ_TARGETS))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/bin/fuzz_%: $(FUZZ_DIR)/fuzz_%.c $(FUZZ_DIR)/fuzz_util.h $(FUZZ_OBJ)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_EXTRA) $(FUZZ_OBJ) -pthread $(PKG_LIBS)

# dump is cli code: its harness links cli/dump.c and cli/names.c too
$(FUZZ_DIR)/bin/fuzz_dump: $(FUZZ_DIR)/obj/cli/dump.o $(FUZZ_DIR)/obj/cli/names.o
$(FUZZ_DIR)/bin/fuzz_dump: FUZZ_EXTRA := $(FUZZ_DIR)/obj/cli/dump.o $(FUZZ_DIR)/obj/cli/names.o

# objects of a pattern rule's chain are intermediate: keep them
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_DIR)/obj/cli/dump.o $(FUZZ_DIR)/obj/cli/names.o

fuzz-build: $(FUZZ_BIN)

# Each harness grows its own working corpus (not committed) from the
# committed seeds; -close_fd_mask=3 silences the readers' error lines,
# not the sanitizers' reports.
fuzz: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIR)/crashes
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_DIR)/work/$$t; \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/bin/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 -malloc_limit_mb=1024 -close_fd_mask=3 -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_DIR)/crashes/$$t- \
			$(FUZZ_DIR)/work/$$t $(FUZZ_DIR)/corpus/$$t > $(FUZZ_DIR)/work/$$t.log 2>&1; \
		rc=$$?; \
		grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)' \
			$(FUZZ_DIR)/work/$$t.log; \
		test $$rc -eq 0 || { echo "fuzz_$$t failed (log: $(FUZZ_DIR)/work/$$t.log)"; exit 1; }; \
	done

fuzz-clean:
	rm -rf $(FUZZ_DIR)/obj $(FUZZ_DIR)/bin $(FUZZ_DIR)/work $(FUZZ_DIR)/crashes

.PHONY: fuzz fuzz-build fuzz-clean
