/* record: write a scenario by demonstration (ksr_record, docs/recording.md).
 * This file parses the options and writes the YAML where it was asked. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ksr/record.h"
#include "ksr/session.h"

static const char record_usage[] =
        "usage: kasm-session-runtime record [--xvfb] [--launch CMD] [-o FILE] [OPTIONS]\n\n"
        "Watches a person (or a script, or an agent over MCP) drive an app and\n"
        "writes a scenario: input as the X server saw it (the RECORD extension),\n"
        "each action at the highest rung it allows: key chords as key:, typed\n"
        "characters as one type:, a click on a control the app publishes as\n"
        "click_element with its role, else a declared fraction of the window under\n"
        "the pointer (target: window when it is another window), a new window as\n"
        "wait_window, scrolls as scroll:. After each step, checks for what changed:\n"
        "window titles (window:, no_window:), the clicked control's state\n"
        "(expect_state), files written under --watch-dir (file:). Events that\n"
        "cannot be placed (the desktop, another app) become comments.\n\n"
        "Recording stops on --stop-key, SIGINT (Ctrl-C) or SIGTERM (the scenario so\n"
        "far is written), --timeout, or when the display goes.\n\n"
        "Options:\n"
        "  --xvfb              record on a private Xvfb session (D-Bus, AT-SPI, openbox)\n"
        "  --launch CMD        run CMD first (sh -c; stopped at the end), wait for its\n"
        "                      window; it becomes the scenario's launch:\n"
        "  -o, --output FILE   write the scenario to FILE (default: standard output)\n"
        "  --stop-key CHORD    the chord that stops recording (default ctrl+alt+F12)\n"
        "  --watch-dir DIR     files written under DIR become file: checks (repeatable)\n"
        "  --name NAME         the scenario's name (default: recorded)\n"
        "  --timeout S         stop after S seconds (default: only when told)\n"
        "  -h, --help          this text\n\n"
        "Environment: DISPLAY (without --xvfb), KASM_RUNTIME_XVFB_SIZE (1280x720).\n"
        "Exit: 0 written, 2 recording could not start (no display, no RECORD\n"
        "extension, the launched app's window never came), the output could not be\n"
        "written, the written scenario does not load, or a usage error.\n";

#define MAX_WATCH 32

static int parse_int(const char *text, int lo, int hi, int *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || !end || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_opts(int argc, char **argv, ksr_record_opts *o, const char **output,
                      const char **dirs)
{
	static const struct option longopts[] = {
	        {"xvfb", no_argument, NULL, 'x'},
	        {"launch", required_argument, NULL, 'l'},
	        {"output", required_argument, NULL, 'o'},
	        {"stop-key", required_argument, NULL, 's'},
	        {"watch-dir", required_argument, NULL, 'w'},
	        {"name", required_argument, NULL, 'n'},
	        {"timeout", required_argument, NULL, 't'},
	        {NULL, 0, NULL, 0},
	};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			o->xvfb = true;
			break;
		case 'l':
			o->launch = optarg;
			break;
		case 'o':
			*output = optarg;
			break;
		case 's':
			o->stop_key = optarg;
			break;
		case 'w':
			if (o->n_watch_dirs == MAX_WATCH)
				return cli_usage_error(&cli_cmd_record, "at most %d --watch-dir",
				                       MAX_WATCH);
			dirs[o->n_watch_dirs++] = optarg;
			break;
		case 'n':
			o->name = optarg;
			break;
		case 't':
			if (parse_int(optarg, 1, 86400, &o->timeout_s))
				return cli_usage_error(&cli_cmd_record,
				                       "--timeout '%s' is not a valid number",
				                       optarg);
			break;
		default:
			return cli_usage_error(&cli_cmd_record, "unknown or incomplete option '%s'",
			                       argv[optind - 1]);
		}
	}
	if (optind != argc)
		return cli_usage_error(&cli_cmd_record, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static void show_message(void *ud, const char *message)
{
	(void)ud;
	cli_say("kasm-session-runtime record: ", "%s", message);
}

static int write_out(const char *path, const char *yaml)
{
	if (!path) {
		fputs(yaml, stdout);
		return fflush(stdout) == 0 ? 0 : -1;
	}
	FILE *f = fopen(path, "we");
	if (!f) {
		cli_say("kasm-session-runtime record: ", "cannot write %s: %s", path,
		        strerror(errno));
		return -1;
	}
	int rc = fputs(yaml, f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		cli_say("kasm-session-runtime record: ", "writing %s failed", path);
	return rc;
}

static int record_exec(int argc, char **argv)
{
	ksr_record_opts o = {.on_message = show_message};
	const char *output = NULL;
	const char *dirs[MAX_WATCH];
	if (parse_opts(argc, argv, &o, &output, dirs))
		return 2;
	o.watch_dirs = dirs;
	const char *size = getenv("KASM_RUNTIME_XVFB_SIZE");
	if (size && ksr_session_parse_size(size, &o.xvfb_w, &o.xvfb_h) < 0)
		return cli_usage_error(&cli_cmd_record,
		                       "KASM_RUNTIME_XVFB_SIZE='%s' is not WIDTHxHEIGHT", size);
	ksr_cancel_install();
	ksr_record_result res = {0};
	ksr_err err = {0};
	if (ksr_record(&o, &res, &err) < 0) {
		cli_say("kasm-session-runtime record: ", "%s", err.msg);
		return 2;
	}
	int rc = write_out(output, res.yaml) < 0 ? 2 : 0;
	if (res.invalid[0]) {
		cli_say("kasm-session-runtime record: ",
		        "the written scenario does not load (a recorder bug, please report it): %s",
		        res.invalid);
		rc = 2;
	}
	ksr_record_result_clear(&res);
	return rc;
}

const cli_command cli_cmd_record = {
        .name = "record",
        .summary = "write a scenario by demonstration (drive the app once)",
        .usage = record_usage,
        .exec = record_exec,
};
