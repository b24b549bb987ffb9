# Fixtures of tests/unit/test_tracer_layers (included by the top Makefile):
# two objects that call each other, a circle scripts/file-cycles must find.

CYCLE_FIX := tests/unit/bin/cycle/cycle_a.o tests/unit/bin/cycle/cycle_b.o

UNIT_EXTRA += $(CYCLE_FIX)
tests/unit/test_tracer_layers: $(CYCLE_FIX) $(LIB_OBJ)
tests/unit/test_tracer_layers: ALL_CFLAGS += -DAVT_SRCDIR='"$(CURDIR)"'

tests/unit/bin/cycle/%.o: tests/unit/fixtures/%.c tests/unit/tracer.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O0 -c -o $@ $<
