#include "cli.h"
int cmd_replay(int argc, char **argv) { (void)argc; (void)argv; return usage_error("replay", "not built yet"); }
int cmd_schedule(int argc, char **argv) { (void)argc; (void)argv; return usage_error("schedule", "not built yet"); }
