/* watch: follow runs' evidence folders and print a line per change (the
 * logic is in ksr/watch.h; this file parses options and prints). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ksr/fleet.h"
#include "ksr/junit.h"
#include "ksr/watch.h"

static const char watch_usage[] =
        "usage: kasm-session-runtime watch [OPTIONS] OUT_DIR...\n\n"
        "Follows one or more runs' evidence folders (inotify) and prints one line\n"
        "per change, never one for \"no change\":\n"
        "  READY run=ID scenario=NAME pid=PID out=DIR\n"
        "  EVENT stage|step|concern|blocked|resumed run=ID ...\n"
        "  EVENT terminal_pass|terminal_pass_with_concerns|terminal_app_failed|\n"
        "        terminal_test_error|terminal_died run=ID outcome=... reason=\"...\"\n"
        "  WAITING blocked=N runs=ID,...   (heartbeat while a run waits for a person)\n"
        "  ERROR no-run|deleted|interrupted|inotify path=... message=\"...\"\n"
        "  DONE runs=N pass=... exit_code=N\n"
        "then exits with the worst exit code of the runs (2 > 1 > 0).\n\n"
        "Options:\n"
        "  -r, --recursive          each OUT_DIR is a folder of runs (subfolders, also\n"
        "                           ones created later)\n"
        "  --timeout S              give up on a folder without a run after S s (600)\n"
        "  --waiting-heartbeat S    WAITING every S s while a run is blocked (30; 0: off)\n"
        "  --json                   print the same lines as JSON objects\n"
        "  --junit FILE             write every run's result as JUnit XML at the end\n"
        "  --html FILE              write the fleet page at the end: every run's\n"
        "                           verdict, outcome and duration, linked to its\n"
        "                           report.html\n"
        "  -h, --help               this text\n\n"
        "Exit: 0 every run passed, 1 an app failed, 2 a test-error, a died runtime,\n"
        "a folder without a run, or an interrupted watch.\n";

typedef struct watch_args {
	ksr_watch_opts o;
	bool json;
	const char *junit, *html;
} watch_args;

static int parse_seconds(const char *text, bool zero_ok, int64_t *ms)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || !end || *end || v < (zero_ok ? 0 : 1) || v > 86400 * 7)
		return -1;
	*ms = (int64_t)v * 1000;
	return 0;
}

static int parse(int argc, char **argv, watch_args *a)
{
	static const struct option longopts[] = {
	        {"recursive", no_argument, NULL, 'r'},
	        {"timeout", required_argument, NULL, 't'},
	        {"waiting-heartbeat", required_argument, NULL, 'H'},
	        {"json", no_argument, NULL, 'j'},
	        {"junit", required_argument, NULL, 'J'},
	        {"html", required_argument, NULL, 'W'},
	        {NULL, 0, NULL, 0},
	};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "r", longopts, NULL)) != -1) {
		if (c == 'r')
			a->o.recursive = true;
		else if (c == 'j')
			a->json = true;
		else if (c == 'J')
			a->junit = optarg;
		else if (c == 'W')
			a->html = optarg;
		else if (c == 't' && parse_seconds(optarg, false, &a->o.timeout_ms) == 0)
			continue;
		else if (c == 'H' && parse_seconds(optarg, true, &a->o.heartbeat_ms) == 0)
			continue;
		else
			return cli_usage_error(&cli_cmd_watch, "bad or unknown option '%s'",
			                       argv[optind - 1]);
	}
	if (optind >= argc)
		return cli_usage_error(&cli_cmd_watch, "needs at least one OUT_DIR");
	return 0;
}

static void print_lines(ksr_watch *w, bool json)
{
	cJSON *l;
	while ((l = ksr_watch_next(w))) {
		char *text = ksr_watch_format(l, json);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(l);
	}
	fflush(stdout);
}

/* The JUnit file or the fleet page (html) of every run. */
static int write_results(const ksr_watch *w, const char *path, bool html)
{
	size_t n = ksr_watch_n_runs(w);
	ksr_junit_run *runs = calloc(n ? n : 1, sizeof *runs);
	char(*abs)[PATH_MAX] = calloc(n ? n : 1, sizeof *abs);
	for (size_t i = 0; i < n; i++) {
		const char *dir = ksr_watch_run_dir(w, i);
		runs[i] = (ksr_junit_run){.report = ksr_watch_run_report(w, i),
		                          .out_dir = realpath(dir, abs[i]) ? abs[i] : dir,
		                          .terminal = ksr_watch_run_terminal(w, i)};
	}
	ksr_err err = {0};
	int rc = html ? ksr_fleet_write(path, runs, n, &err) : ksr_junit_write(path, runs, n, &err);
	if (rc < 0)
		cli_say("kasm-session-runtime watch: ", "--%s: %s", html ? "html" : "junit",
		        err.msg);
	free(runs);
	free(abs);
	return rc;
}

static int watch_exec(int argc, char **argv)
{
	watch_args a = {.o = {.heartbeat_ms = 30000}};
	if (parse(argc, argv, &a))
		return 2;
	ksr_err err = {0};
	ksr_cancel_install();
	ksr_watch *w = ksr_watch_create(&a.o, &err);
	if (!w) {
		cli_say("kasm-session-runtime watch: ", "%s", err.msg);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		ksr_watch_add(w, argv[i], &err);
	int rc = 2;
	for (;;) {
		ksr_wait r = ksr_watch_step(w, KSR_DEADLINE_NEVER);
		print_lines(w, a.json);
		if (ksr_watch_finished(w)) {
			rc = ksr_watch_exit_code(w);
			break;
		}
		if (r == KSR_WAIT_CANCELLED || r == KSR_WAIT_ERROR)
			break;
	}
	if (a.junit && write_results(w, a.junit, false) < 0)
		rc = 2;
	if (a.html && write_results(w, a.html, true) < 0)
		rc = 2;
	ksr_watch_free(w);
	return rc;
}

const cli_command cli_cmd_watch = {
        .name = "watch",
        .summary = "follow runs' evidence folders, a line per change",
        .usage = watch_usage,
        .exec = watch_exec,
};
