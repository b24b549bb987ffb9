# Fixture of tests/unit/test_cfi (included by the top Makefile): a call
# chain built without frame pointers, rbp holding data at the stop.

CFI_BIN := tests/unit/bin/cfi_O2

UNIT_EXTRA += $(CFI_BIN)
tests/unit/test_cfi: $(CFI_BIN)

$(CFI_BIN): tests/unit/fixtures/cfi_fix.c tests/unit/cfi.mk
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -fomit-frame-pointer -g -fPIE -pie -Wall -o $@ $<
