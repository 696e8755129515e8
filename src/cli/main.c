/* kasm-session-runtime: dispatch to a command. Exit codes: 0 pass (or
 * pass-with-concerns), 1 app-failed, 2 test-error or usage error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_command *const commands[] = {
        &cli_cmd_run,     &cli_cmd_validate, &cli_cmd_inspect, &cli_cmd_record,
        &cli_cmd_version, &cli_cmd_watch,    &cli_cmd_mcp,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	char prefix[64];
	snprintf(prefix, sizeof prefix, "kasm-session-runtime %s: ", cmd->name);
	cli_say(prefix, "%s", msg ? msg : "invalid usage");
	free(msg);
	fprintf(stderr, "Try 'kasm-session-runtime %s --help'.\n", cmd->name);
	return 2;
}

static void print_help(FILE *to)
{
	fprintf(to, "usage: kasm-session-runtime COMMAND [ARGS...]\n\n"
	            "Tests a desktop app inside a remote-desktop (X11) session from a YAML\n"
	            "scenario and writes evidence an orchestrator can trust.\n\nCommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(to, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(to, "\nEvery command takes --help. Exit codes: 0 pass or pass-with-concerns,\n"
	            "1 app-failed, 2 test-error (or a usage error).\n"
	            "Environment: see kasm-session-runtime run --help and docs/cli.md.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_help(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_help(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		return cli_cmd_version.exec(1, argv + 1);
	for (size_t i = 0; i < N_COMMANDS; i++) {
		const cli_command *cmd = commands[i];
		if (strcmp(argv[1], cmd->name) != 0)
			continue;
		if (cli_wants_help(argc - 1, argv + 1)) {
			fputs(cmd->usage, stdout);
			return 0;
		}
		return cmd->exec(argc - 1, argv + 1);
	}
	cli_say("kasm-session-runtime: ", "unknown command '%s'", argv[1]);
	print_help(stderr);
	return 2;
}
