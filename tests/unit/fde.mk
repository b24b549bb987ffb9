# Fixtures of tests/unit/test_fde (included by the top Makefile): functions
# whose .eh_frame FDEs use other pointer encodings than the pc-relative
# sdata4 compilers write (hand-written CIEs, linked with .eh_frame_hdr),
# and compiled functions linked static with no .eh_frame_hdr.  Neither
# runs: they are only read.

FDE_BINS := tests/unit/bin/fde_enc tests/unit/bin/fde_plain

UNIT_EXTRA += $(FDE_BINS)
tests/unit/test_fde: $(FDE_BINS)

tests/unit/bin/fde_enc: tests/unit/fixtures/fde_enc.s tests/unit/fde.mk
	@mkdir -p $(@D)
	$(CC) -nostdlib -static -no-pie -Wl,--eh-frame-hdr -Wl,-e,f_abs -o $@ $<

tests/unit/bin/fde_plain: tests/unit/fixtures/fde_plain.c tests/unit/fde.mk
	@mkdir -p $(@D)
	$(CC) -std=c11 -O0 -fasynchronous-unwind-tables -nostdlib -static -no-pie \
		-Wl,--no-eh-frame-hdr -Wl,-e,f_two -o $@ $<
