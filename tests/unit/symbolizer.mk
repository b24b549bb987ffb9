# Fixtures of tests/unit/test_symbolizer (included by the top Makefile).
# The same two sources in every shape the symbolizer must handle: -O0/-O2,
# PIE/non-PIE, fully stripped, symbols without DWARF, DWARF split off
# behind .gnu_debuglink, and an executable using a library of its own.

SYM_FIXDIR := tests/unit/fixtures
SYM_BINDIR := tests/unit/bin
SYM_SRC := $(SYM_FIXDIR)/sym_main.c $(SYM_FIXDIR)/sym_a.c
SYM_DEPS := $(SYM_SRC) $(SYM_FIXDIR)/sym_fix.h tests/unit/symbolizer.mk
SYM_CC = $(CC) -std=c11 -D_GNU_SOURCE -pthread -Wall

SYM_FIXTURES := $(addprefix $(SYM_BINDIR)/,sym_O0_pie sym_O2_pie sym_O0_nopie \
	sym_O2_nopie sym_stripped sym_nodebug sym_dbglink sym_dbglink.debug \
	libsymfix.so sym_shlib)

UNIT_EXTRA += $(SYM_FIXTURES)
tests/unit/test_symbolizer: $(SYM_FIXTURES)

$(SYM_BINDIR)/sym_O0_pie: $(SYM_DEPS)
	@mkdir -p $(@D)
	$(SYM_CC) -O0 -g -fPIE -pie -o $@ $(SYM_SRC)

$(SYM_BINDIR)/sym_O2_pie: $(SYM_DEPS)
	@mkdir -p $(@D)
	$(SYM_CC) -O2 -g -fPIE -pie -o $@ $(SYM_SRC)

$(SYM_BINDIR)/sym_O0_nopie: $(SYM_DEPS)
	@mkdir -p $(@D)
	$(SYM_CC) -O0 -g -fno-pie -no-pie -o $@ $(SYM_SRC)

$(SYM_BINDIR)/sym_O2_nopie: $(SYM_DEPS)
	@mkdir -p $(@D)
	$(SYM_CC) -O2 -g -fno-pie -no-pie -o $@ $(SYM_SRC)

$(SYM_BINDIR)/sym_stripped: $(SYM_BINDIR)/sym_O0_pie
	strip -o $@ $<

$(SYM_BINDIR)/sym_nodebug: $(SYM_BINDIR)/sym_O0_pie
	strip --strip-debug -o $@ $<

# The link names the debug file by basename, found beside the executable.
$(SYM_BINDIR)/sym_dbglink.debug: $(SYM_BINDIR)/sym_O0_pie
	objcopy --only-keep-debug $< $@

$(SYM_BINDIR)/sym_dbglink: $(SYM_BINDIR)/sym_O0_pie $(SYM_BINDIR)/sym_dbglink.debug
	strip -o $@ $<
	objcopy --add-gnu-debuglink=$(SYM_BINDIR)/sym_dbglink.debug $@

$(SYM_BINDIR)/libsymfix.so: $(SYM_FIXDIR)/sym_lib.c $(SYM_FIXDIR)/sym_fix.h
	@mkdir -p $(@D)
	$(SYM_CC) -O0 -g -fPIC -shared -o $@ $<

$(SYM_BINDIR)/sym_shlib: $(SYM_DEPS) $(SYM_BINDIR)/libsymfix.so
	$(SYM_CC) -O0 -g -DSYM_WITH_LIB -o $@ $(SYM_SRC) -L$(SYM_BINDIR) -lsymfix \
		-Wl,-rpath,'$$ORIGIN'
