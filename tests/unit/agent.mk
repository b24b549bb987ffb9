# Fixture of tests/unit/test_agent_ring (included by the top Makefile): a
# program the agent library is preloaded into without a tracer.

AGENT_FIX := tests/unit/bin/agent_fix

UNIT_EXTRA += $(AGENT_FIX) $(AGENT)
tests/unit/test_agent_ring: $(AGENT_FIX) $(AGENT)
tests/unit/test_agent_ring: ALL_CFLAGS += -DAGENT_SO='"$(CURDIR)/$(AGENT)"'

$(AGENT_FIX): tests/unit/fixtures/agent_fix.c trace/agent_proto.h tests/unit/agent.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O0 -g -Wall -I. -o $@ $< -pthread
