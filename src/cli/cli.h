/* The command-line front end: one entry per command, tmux-style. Front ends
 * never call libX11 or libwebsockets: they call the run/scenario API. */
#ifndef KSR_CLI_H
#define KSR_CLI_H

#include "ksr/run.h"

typedef struct cli_command {
	const char *name;
	const char *summary;
	const char *usage; /* printed by `CMD --help` */
	int (*exec)(int argc, char **argv);
} cli_command;

extern const cli_command cli_cmd_run;
extern const cli_command cli_cmd_validate;
extern const cli_command cli_cmd_inspect;
extern const cli_command cli_cmd_record;
extern const cli_command cli_cmd_version;
extern const cli_command cli_cmd_watch;
extern const cli_command cli_cmd_mcp;

/* run --junit FILE (run_junit.c): keep the report, write JUnit after the run. */
typedef struct cli_junit_state {
	const char *path;
	cJSON *report;
	void (*next)(void *ud, const cJSON *report);
	void *next_ud;
} cli_junit_state;
void cli_junit_hook(cli_junit_state *s, ksr_run_opts *o);
int cli_junit_finish(cli_junit_state *s, const char *out_dir, int rc);

/* True when argv holds -h/--help (before a `--`). */
int cli_wants_help(int argc, char **argv);
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* PREFIX then the formatted message and a newline on stderr, the message
 * redacted and on one line with its control characters written out
 * (ksr_utf8_escape_controls): for every message that may carry outside text. */
void cli_say(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flush stdout; when what was printed there could not be written (a full
 * disk, /dev/full, a closed pipe) say so, naming WHAT, and return -1: the
 * command then exits 2 (docs/cli.md, exit codes). 0 when all went out. */
int cli_stdout_check(const char *prefix, const char *what);
/* TEXT and a newline on stdout, flushed, checked the same way. */
int cli_stdout_put(const char *prefix, const char *what, const char *text);

#endif
