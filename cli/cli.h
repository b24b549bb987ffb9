/*
 * The avtrace command: one function per subcommand, each returning the
 * process exit status (0, 1, 2, 3 as in ARCHITECTURE.md; record returns the
 * target's own status).  Only cli/ decides exit statuses.
 */
#ifndef AVT_CLI_H
#define AVT_CLI_H

#define EXIT_USAGE 2

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int replay_all(const char *dir, unsigned jobs, const char *timeout);
int summary_table(const char *dir);

/* "avtrace: <cmd>: ..." usage error; returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
