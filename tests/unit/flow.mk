# Fixture of tests/unit/test_flow (included by the top Makefile): machine
# code whose read values go where the function names say, at -O0.

FLOW_BIN := tests/unit/bin/flow_O0

UNIT_EXTRA += $(FLOW_BIN)
tests/unit/test_flow: $(FLOW_BIN)

$(FLOW_BIN): tests/unit/fixtures/flow_fix.c tests/unit/flow.mk include/avtrace.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O0 -g -fPIE -pie -Wall -o $@ $<
