/* run: the staged run of one scenario; exit code = the verdict's. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ksr/run.h"
#include "progress.h"

static const char run_usage[] =
        "usage: kasm-session-runtime run [OPTIONS] SCENARIO.yaml\n\n"
        "Waits for the display and the app, runs the scenario's stages and steps,\n"
        "decides a verdict and writes the evidence folder (DONE last).\n\n"
        "Options:\n"
        "  --xvfb             run on a private Xvfb + window manager (KASM_RUNTIME_XVFB=1)\n"
        "  --out DIR          evidence folder (KASM_RUNTIME_OUT, default ./ksr-out)\n"
        "  --deadline S       hard bound on the whole run (KASM_RUNTIME_DEADLINE_S, 600)\n"
        "  --json             print report.json on stdout at the end\n"
        "  --update-baseline  write the first-look screenshot to the scenario's baseline\n"
        "  --junit FILE       also write the result as JUnit XML (one testcase per step)\n"
        "  -h, --help         this text\n\n"
        "Environment: DISPLAY, KASM_RUNTIME_XVFB, KASM_RUNTIME_XVFB_SIZE (1280x720),\n"
        "KASM_RUNTIME_OUT, KASM_RUNTIME_DEADLINE_S (see docs/cli.md).\n\n"
        "Exit: 0 pass or pass-with-concerns, 1 app-failed, 2 test-error.\n";

static int parse_seconds(const char *text, int *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || !end || *end || v <= 0 || v > 86400)
		return -1;
	*out = (int)v;
	return 0;
}

static bool env_true(const char *name)
{
	const char *v = getenv(name);
	return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0);
}

static void print_report(void *ud, const cJSON *report)
{
	(void)ud;
	char *text = cJSON_Print(report);
	printf("%s\n", text);
	fflush(stdout);
	cJSON_free(text);
}

static int defaults_from_env(ksr_run_opts *o)
{
	o->out_dir = getenv("KASM_RUNTIME_OUT") ? getenv("KASM_RUNTIME_OUT") : "./ksr-out";
	o->xvfb = env_true("KASM_RUNTIME_XVFB");
	o->xvfb_size = getenv("KASM_RUNTIME_XVFB_SIZE");
	o->deadline_s = 600;
	const char *d = getenv("KASM_RUNTIME_DEADLINE_S");
	if (d && parse_seconds(d, &o->deadline_s) < 0)
		return cli_usage_error(
		        &cli_cmd_run, "KASM_RUNTIME_DEADLINE_S='%s' is not a number of seconds", d);
	return 0;
}

static int run_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"xvfb", no_argument, NULL, 'x'},
	        {"out", required_argument, NULL, 'o'},
	        {"deadline", required_argument, NULL, 'd'},
	        {"json", no_argument, NULL, 'j'},
	        {"update-baseline", no_argument, NULL, 'u'},
	        {"junit", required_argument, NULL, 'J'},
	        {NULL, 0, NULL, 0},
	};
	ksr_run_opts o = {0};
	bool json = false;
	cli_junit_state junit = {0};
	if (defaults_from_env(&o))
		return 2;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			o.xvfb = true;
			break;
		case 'o':
			o.out_dir = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'u':
			o.update_baseline = true;
			break;
		case 'J':
			junit.path = optarg;
			break;
		case 'd':
			if (parse_seconds(optarg, &o.deadline_s) < 0)
				return cli_usage_error(&cli_cmd_run,
				                       "--deadline '%s' is not a number of seconds",
				                       optarg);
			break;
		default:
			return cli_usage_error(&cli_cmd_run, "unknown or incomplete option '%s'",
			                       argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error(&cli_cmd_run, "needs exactly one SCENARIO.yaml");
	o.scenario_path = argv[optind];
	progress p;
	progress_init(&p);
	o.on_event = progress_event;
	o.on_event_ud = &p;
	o.on_message = progress_message;
	o.on_message_ud = &p;
	if (json)
		o.on_report = print_report;
	if (!junit.path)
		return ksr_run_scenario(&o);
	cli_junit_hook(&junit, &o);
	return cli_junit_finish(&junit, o.out_dir, ksr_run_scenario(&o));
}

const cli_command cli_cmd_run = {
        .name = "run",
        .summary = "run a scenario: stages, steps, verdict, evidence",
        .usage = run_usage,
        .exec = run_exec,
};
