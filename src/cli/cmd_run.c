/* run: the staged run of one scenario, or of several one after another into
 * OUT/<file name>/ (one private display for all with --xvfb); exit code = the
 * verdict's, the worst one for several. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ksr/json.h"
#include "ksr/junit.h"
#include "ksr/run.h"
#include "ksr/session.h"
#include "progress.h"

static const char run_usage[] =
        "usage: kasm-session-runtime run [OPTIONS] SCENARIO.yaml...\n\n"
        "Waits for the display and the app, runs the scenario's stages and steps,\n"
        "decides a verdict and writes the evidence folder (DONE last).\n"
        "Several scenarios run one after another, each into OUT/NAME/ (NAME: the\n"
        "scenario file's name without .yaml, made safe and unique); with --xvfb they\n"
        "share one private\n"
        "display. The exit code is then the worst of the runs'.\n"
        "Options may come before or after the scenarios; `--` ends them.\n\n"
        "Options:\n"
        "  --xvfb             run on a private display + window manager (KASM_RUNTIME_XVFB=1)\n"
        "  --display-server xvfb|xvnc|auto\n"
        "                     its X server (implies --xvfb; auto: Xvfb when installed,\n"
        "                     else Xtigervnc/Xvnc on loopback; KASM_RUNTIME_DISPLAY_SERVER)\n"
        "  --wm openbox|xfwm4|auto\n"
        "                     its window manager (implies --xvfb; auto: openbox when\n"
        "                     installed, else xfwm4; KASM_RUNTIME_WM)\n"
        "  --private-home     a private HOME and XDG folders for the private display's\n"
        "                     apps (implies --xvfb; default: the user's own with\n"
        "                     --display-server xvnc, private XDG folders otherwise;\n"
        "                     KASM_RUNTIME_PRIVATE_HOME=1)\n"
        "  -o, --out DIR      evidence folder (KASM_RUNTIME_OUT, default ./ksr-out)\n"
        "  --deadline S       hard bound on each run (KASM_RUNTIME_DEADLINE_S, 600)\n"
        "  --json             print report.json on stdout at the end (several\n"
        "                     scenarios: one document {exit_code, runs: [...]})\n"
        "  --update-baseline  write the first-look screenshot to the scenario's baseline\n"
        "  --junit FILE       also write the result as JUnit XML (one testcase per step)\n"
        "  --video            record the run's video (OUT/video.webm, as video: true)\n"
        "  --video-fps N      at most N video frames a second (1-60, default 10; implies --video)\n"
        "  -h, --help         this text\n\n"
        "Environment: DISPLAY, KASM_RUNTIME_XVFB, KASM_RUNTIME_XVFB_SIZE (1280x720),\n"
        "KASM_RUNTIME_DISPLAY_SERVER, KASM_RUNTIME_WM, KASM_RUNTIME_PRIVATE_HOME,\n"
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

/* --json could not be written: the run's exit code becomes 2. */
static bool json_lost;

static void print_report(void *ud, const cJSON *report)
{
	(void)ud;
	char *text = ksr_json_print(report, true);
	if (cli_stdout_put("kasm-session-runtime run: --json: ", "the report", text) < 0)
		json_lost = true;
	cJSON_free(text);
}

static int defaults_from_env(ksr_run_opts *o)
{
	o->out_dir = getenv("KASM_RUNTIME_OUT") ? getenv("KASM_RUNTIME_OUT") : "./ksr-out";
	o->xvfb = env_true("KASM_RUNTIME_XVFB");
	/* Like KASM_RUNTIME_DISPLAY_SERVER, it starts no private display itself. */
	o->private_home = env_true("KASM_RUNTIME_PRIVATE_HOME");
	o->xvfb_size = getenv("KASM_RUNTIME_XVFB_SIZE");
	o->deadline_s = 600;
	const char *ds = getenv("KASM_RUNTIME_DISPLAY_SERVER"), *wm = getenv("KASM_RUNTIME_WM");
	if (ds && *ds && ksr_session_parse_server(ds, &o->display_server) < 0)
		return cli_usage_error(&cli_cmd_run,
		                       "KASM_RUNTIME_DISPLAY_SERVER='%s' is not xvfb, xvnc or auto",
		                       ds);
	if (wm && *wm && ksr_session_parse_wm(wm, &o->wm) < 0)
		return cli_usage_error(&cli_cmd_run,
		                       "KASM_RUNTIME_WM='%s' is not openbox, xfwm4 or auto", wm);
	const char *d = getenv("KASM_RUNTIME_DEADLINE_S");
	if (d && parse_seconds(d, &o->deadline_s) < 0)
		return cli_usage_error(
		        &cli_cmd_run, "KASM_RUNTIME_DEADLINE_S='%s' is not a number of seconds", d);
	return 0;
}

typedef struct run_args {
	ksr_run_opts o;
	bool json;
	const char *junit;
	char **scenarios;
	int n_scenarios;
} run_args;

static int parse(int argc, char **argv, run_args *a)
{
	static const struct option longopts[] = {
	        {"xvfb", no_argument, NULL, 'x'},
	        {"out", required_argument, NULL, 'o'},
	        {"deadline", required_argument, NULL, 'd'},
	        {"json", no_argument, NULL, 'j'},
	        {"update-baseline", no_argument, NULL, 'u'},
	        {"junit", required_argument, NULL, 'J'},
	        {"video", no_argument, NULL, 'V'},
	        {"video-fps", required_argument, NULL, 'F'},
	        {"display-server", required_argument, NULL, 'S'},
	        {"wm", required_argument, NULL, 'W'},
	        {"private-home", no_argument, NULL, 'H'},
	        {NULL, 0, NULL, 0},
	};
	if (defaults_from_env(&a->o))
		return 2;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c == 'x')
			a->o.xvfb = true;
		else if (c == 'H')
			a->o.private_home = a->o.xvfb = true;
		else if (c == 'o')
			a->o.out_dir = optarg;
		else if (c == 'j')
			a->json = true;
		else if (c == 'u')
			a->o.update_baseline = true;
		else if (c == 'J')
			a->junit = optarg;
		else if (c == 'V')
			a->o.video = true;
		else if (c == 'F' &&
		         (parse_seconds(optarg, &a->o.video_fps) < 0 || a->o.video_fps > 60))
			return cli_usage_error(&cli_cmd_run, "--video-fps '%s' is not 1 to 60",
			                       optarg);
		else if (c == 'F')
			a->o.video = true;
		else if (c == 'S' && ksr_session_parse_server(optarg, &a->o.display_server) < 0)
			return cli_usage_error(&cli_cmd_run,
			                       "--display-server '%s' is not xvfb, xvnc or auto",
			                       optarg);
		else if (c == 'W' && ksr_session_parse_wm(optarg, &a->o.wm) < 0)
			return cli_usage_error(&cli_cmd_run,
			                       "--wm '%s' is not openbox, xfwm4 or auto", optarg);
		else if (c == 'S' || c == 'W')
			a->o.xvfb = true;
		else if (c == 'd' && parse_seconds(optarg, &a->o.deadline_s) < 0)
			return cli_usage_error(
			        &cli_cmd_run, "--deadline '%s' is not a number of seconds", optarg);
		else if (c != 'd' && c != 'S' && c != 'W' && c != 'F')
			return cli_usage_error(&cli_cmd_run, "unknown or incomplete option '%s'",
			                       argv[optind - 1]);
	}
	if (optind >= argc)
		return cli_usage_error(&cli_cmd_run, "needs at least one SCENARIO.yaml");
	a->scenarios = argv + optind;
	a->n_scenarios = argc - optind;
	return 0;
}

static void attach_progress(ksr_run_opts *o, progress *p)
{
	progress_init(p);
	o->on_event = progress_event;
	o->on_event_ud = p;
	o->on_message = progress_message;
	o->on_message_ud = p;
}

static int run_single(run_args *a)
{
	ksr_run_opts o = a->o;
	cli_junit_state junit = {.path = a->junit};
	progress p;
	attach_progress(&o, &p);
	o.scenario_path = a->scenarios[0];
	if (a->json)
		o.on_report = print_report;
	int rc;
	if (!junit.path) {
		rc = ksr_run_scenario(&o);
	} else {
		cli_junit_hook(&junit, &o);
		rc = cli_junit_finish(&junit, o.out_dir, ksr_run_scenario(&o));
	}
	return json_lost ? 2 : rc;
}

/* ---- several scenarios: OUT/<name>/ each, worst exit code ---------------- */

typedef struct run_many {
	char **names; /* sanitised, unique folder names */
	char **dirs;  /* OUT/<name> */
	int *codes;
	cJSON **reports; /* each run's rendered report (NULL when none) */
	int n;
} run_many;

/* The folder name: the scenario file's base name without .yaml/.yml (two
 * files may share a name:, never a path), kept to [A-Za-z0-9._-], never
 * hidden, never empty, at most 64 characters. */
static char *folder_name(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *name = ksr_xstrdup(base);
	char *dot = strrchr(name, '.');
	if (dot && dot != name && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0))
		*dot = '\0';
	if (strlen(name) > 64)
		name[64] = '\0';
	for (char *c = name; *c; c++) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		          (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.';
		if (!ok || (c == name && *c == '.'))
			*c = '_';
	}
	if (!*name) {
		free(name);
		name = ksr_xstrdup("scenario");
	}
	return name;
}

/* mkdir -p: OUT holds the shared display's log before any run creates it. */
static int mkdir_p(const char *dir)
{
	char *path = ksr_xstrdup(dir);
	int rc = 0;
	for (char *c = path + 1; rc == 0; c++) {
		bool last = *c == '\0';
		if (*c != '/' && !last)
			continue;
		*c = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			rc = -1;
		if (last)
			break;
		*c = '/';
	}
	free(path);
	return rc;
}

static bool name_taken(const run_many *m, int upto, const char *name)
{
	for (int i = 0; i < upto; i++)
		if (strcmp(m->names[i], name) == 0)
			return true;
	return false;
}

static void name_runs(run_many *m, const run_args *a)
{
	for (int i = 0; i < m->n; i++) {
		char *name = folder_name(a->scenarios[i]);
		for (int k = 2; name_taken(m, i, name); k++) {
			char *base = folder_name(a->scenarios[i]);
			free(name);
			name = ksr_xasprintf("%s-%d", base, k);
			free(base);
		}
		m->names[i] = name;
		m->dirs[i] = ksr_xasprintf("%s/%s", a->o.out_dir, name);
	}
}

static void keep_report(void *ud, const cJSON *report)
{
	cJSON **slot = ud;
	cJSON_Delete(*slot);
	*slot = cJSON_Duplicate(report, true);
}

/* One private display for every run: started here, shared through DISPLAY
 * (and the D-Bus/AT-SPI variables) that ksr_session_start exports. NULL when
 * it could not start: each run then starts its own and records why it failed. */
static ksr_session *start_shared_session(const run_args *a)
{
	ksr_session_opts so = {.width = 1280,
	                       .height = 720,
	                       .server = a->o.display_server,
	                       .wm = a->o.wm,
	                       .private_home = a->o.private_home};
	if (a->o.xvfb_size && ksr_session_parse_size(a->o.xvfb_size, &so.width, &so.height) < 0)
		return NULL; /* each run reports the bad size in its own evidence */
	if (mkdir_p(a->o.out_dir) < 0)
		return NULL;
	char *log = ksr_xasprintf("%s/session.log", a->o.out_dir);
	so.log_path = log;
	ksr_session *s = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&so, ksr_deadline_in_ms(60000), &s, &err) < 0) {
		cli_say("kasm-session-runtime: ",
		        "the shared private display did not start (%s); each run starts its own",
		        err.msg);
		s = NULL;
	}
	free(log);
	return s;
}

static int worse(int a, int b)
{
	return a > b ? a : b;
}

static void print_many_json(const run_many *m, const run_args *a, int rc)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddNumberToObject(doc, "exit_code", rc);
	cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
	for (int i = 0; i < m->n; i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "scenario", a->scenarios[i]);
		cJSON_AddStringToObject(r, "out", m->dirs[i]);
		cJSON_AddNumberToObject(r, "exit_code", m->codes[i]);
		cJSON_AddItemToObject(r, "report",
		                      m->reports[i] ? cJSON_Duplicate(m->reports[i], true)
		                                    : cJSON_CreateNull());
		cJSON_AddItemToArray(runs, r);
	}
	print_report(NULL, doc);
	cJSON_Delete(doc);
}

static int write_many_junit(const run_many *m, const char *path)
{
	ksr_junit_run *runs = ksr_xcalloc((size_t)m->n, sizeof *runs);
	char(*abs)[PATH_MAX] = ksr_xcalloc((size_t)m->n, sizeof *abs);
	for (int i = 0; i < m->n; i++)
		runs[i] = (ksr_junit_run){.report = m->reports[i],
		                          .out_dir = realpath(m->dirs[i], abs[i]) ? abs[i]
		                                                                  : m->dirs[i]};
	ksr_err err = {0};
	int rc = ksr_junit_write(path, runs, (size_t)m->n, &err);
	if (rc < 0)
		cli_say("kasm-session-runtime run: ", "--junit: %s", err.msg);
	free(runs);
	free(abs);
	return rc;
}

static int run_each(run_many *m, const run_args *a, bool shared_display)
{
	int rc = 0;
	for (int i = 0; i < m->n; i++) {
		ksr_run_opts o = a->o;
		progress p;
		attach_progress(&o, &p);
		o.scenario_path = a->scenarios[i];
		o.out_dir = m->dirs[i];
		o.xvfb = a->o.xvfb && !shared_display;
		o.on_report = keep_report;
		o.on_report_ud = &m->reports[i];
		cli_say("kasm-session-runtime: ", "[%d/%d] %s -> %s", i + 1, m->n, a->scenarios[i],
		        m->dirs[i]);
		/* After SIGTERM every later run ends at once as interrupted, so each
		 * folder still gets its DONE for an orchestrator waiting on it. */
		m->codes[i] = ksr_run_scenario(&o);
		rc = worse(rc, m->codes[i]);
	}
	return rc;
}

static void print_summary(const run_many *m)
{
	for (int i = 0; i < m->n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->reports[i], "verdict");
		cli_say("kasm-session-runtime: ", "%-12s exit %d  %s",
		        cJSON_IsString(v) ? v->valuestring : "no-report", m->codes[i], m->dirs[i]);
	}
}

static void run_many_free(run_many *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->names[i]);
		free(m->dirs[i]);
		cJSON_Delete(m->reports[i]);
	}
	free(m->names);
	free(m->dirs);
	free(m->codes);
	free(m->reports);
}

static int run_several(const run_args *a)
{
	run_many m = {.n = a->n_scenarios};
	m.names = ksr_xcalloc((size_t)m.n, sizeof *m.names);
	m.dirs = ksr_xcalloc((size_t)m.n, sizeof *m.dirs);
	m.codes = ksr_xcalloc((size_t)m.n, sizeof *m.codes);
	m.reports = ksr_xcalloc((size_t)m.n, sizeof *m.reports);
	name_runs(&m, a);
	ksr_cancel_install();
	ksr_session *shared = a->o.xvfb ? start_shared_session(a) : NULL;
	int rc = run_each(&m, a, shared != NULL);
	ksr_session_stop(shared);
	print_summary(&m);
	if (a->json) {
		print_many_json(&m, a, rc);
		rc = json_lost ? 2 : rc;
	}
	if (a->junit && write_many_junit(&m, a->junit) < 0)
		rc = 2;
	run_many_free(&m);
	return rc;
}

static int run_exec(int argc, char **argv)
{
	run_args a = {0};
	if (parse(argc, argv, &a))
		return 2;
	return a.n_scenarios == 1 ? run_single(&a) : run_several(&a);
}

const cli_command cli_cmd_run = {
        .name = "run",
        .summary = "run a scenario: stages, steps, verdict, evidence",
        .usage = run_usage,
        .exec = run_exec,
};
