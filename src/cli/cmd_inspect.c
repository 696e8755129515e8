/* inspect: what an author needs to write a scenario, as text or JSON. The data
 * comes from ksr_inspect (a cJSON document); this file only formats it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "ksr/evidence.h"
#include "ksr/json.h"
#include "ksr/inspect.h"
#include "ksr/run.h"
#include "ksr/session.h"

static const char inspect_usage[] =
        "usage: kasm-session-runtime inspect [OPTIONS]\n"
        "       kasm-session-runtime inspect [--xvfb] --after SCENARIO.yaml [--line N] "
        "[OPTIONS]\n\n"
        "Lists what a scenario can reach: the windows (title, class, PID, geometry,\n"
        "type) and, for each window's process, its accessibility controls (role,\n"
        "name, states, actions, extents), each with the scenario step that reaches it\n"
        "at the highest rung: click_element: \"NAME\" (with role: when the name is\n"
        "ambiguous), else click: FX FY (a fraction of the window's client area).\n"
        "Windows get a window: ^Title$ line; a control with a keyboard shortcut a\n"
        "key: line first.\n\n"
        "With --after, the scenario runs first (launch, app wait, its steps: up to\n"
        "line N; plan: and goal: are not run) and the listing shows the app as the\n"
        "steps left it; the run's evidence goes to --out DIR (else a temporary folder\n"
        "named on stderr).\n\n"
        "With --launch or --after, the listing waits for the app to settle first, by\n"
        "the run's rules: --settle-s seconds (default 5 after --launch, 0 after\n"
        "--after's steps), then until its windows have not repainted for 0.5 s (at\n"
        "most 30 s). A key: line is offered only for a shortcut that the window's\n"
        "menu bar does not also claim as a mnemonic.\n\n"
        "Options:\n"
        "  --xvfb              inspect a private session (X server, D-Bus, AT-SPI, WM)\n"
        "  --display-server S  its X server: xvfb, xvnc (Xtigervnc, VNC on loopback only)\n"
        "                      or auto (Xvfb when installed); implies --xvfb\n"
        "  --wm W              its window manager: openbox, xfwm4 or auto; implies --xvfb\n"
        "  --launch CMD        run CMD first (sh -c; stopped at the end) and wait for its\n"
        "                      window\n"
        "  --wait-window RE    with --launch: the window title to wait for (default: any\n"
        "                      new window)\n"
        "  --window RE         list only windows whose title matches RE\n"
        "  --cdp PORT          also list a browser page's interactive elements\n"
        "                      (remote debugging port on 127.0.0.1)\n"
        "  --max-nodes N       accessibility nodes walked per app (default 5000)\n"
        "  --timeout S         bound on the whole inspection (default 30)\n"
        "  --settle-s N        seconds to let the app settle before the quiet wait\n"
        "                      (0..600; default 5 with --launch, 0 with --after)\n"
        "  --out DIR           keep the evidence in DIR (created): the listing as\n"
        "                      inspect.json, --launch's output as launch.log, --after's\n"
        "                      run (report, screenshots)\n"
        "  --after FILE        run SCENARIO FILE's steps first (on --xvfb or DISPLAY)\n"
        "  --line N            with --after: only the steps that start at or before line N\n"
        "  --json              print the JSON document instead of text\n"
        "  -h, --help          this text\n\n"
        "Environment: DISPLAY (without --xvfb), KASM_RUNTIME_XVFB_SIZE (1280x720).\n"
        "Exit: 0 listed, 2 no display, the launched app's window never came, or a\n"
        "usage error; with --after also 2 when the scenario is invalid or its app\n"
        "never came up.\n";

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

static int parse_size(const char *text, int *w, int *h)
{
	return text && sscanf(text, "%dx%d", w, h) == 2 && *w > 0 && *h > 0 ? 0 : -1;
}

/* ---- text ---- */

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void print_window(const cJSON *w)
{
	const cJSON *g = cJSON_GetObjectItem(w, "geometry");
	printf("window 0x%lx \"%s\"  class %s (%s)  pid %d  %s  at %d,%d %dx%d\n",
	       (unsigned long)num(w, "id"), str(w, "title"), str(w, "class"), str(w, "instance"),
	       (int)num(w, "pid"), str(w, "type"), (int)num(g, "x"), (int)num(g, "y"),
	       (int)num(g, "w"), (int)num(g, "h"));
	printf("    %s\n", str(w, "line"));
}

static void print_list(const char *label, const cJSON *arr)
{
	const cJSON *it;
	int k = 0;
	printf("  %s", label);
	cJSON_ArrayForEach(it, arr) printf("%s%s", k++ ? "," : " ", it->valuestring);
	if (!k)
		printf(" -");
}

static void print_control(const cJSON *c)
{
	const cJSON *e = cJSON_GetObjectItem(c, "extents");
	printf("  %s \"%s\"", str(c, "role"), str(c, "name"));
	if (cJSON_IsObject(e))
		printf("  at %d,%d %dx%d", (int)num(e, "x"), (int)num(e, "y"), (int)num(e, "w"),
		       (int)num(e, "h"));
	print_list("actions", cJSON_GetObjectItem(c, "actions"));
	print_list("states", cJSON_GetObjectItem(c, "states"));
	if (*str(c, "reads")) /* what a text: check reads there */
		printf("  reads %s", str(c, "reads"));
	printf("\n");
	const cJSON *reach = cJSON_GetObjectItem(c, "reach");
	const cJSON *line;
	int k = 0;
	if (*str(c, "key"))
		printf("      - %s    # its keyboard shortcut (%s)\n", str(c, "key"),
		       str(c, "keybinding"));
	else if (*str(c, "key_withheld"))
		printf("      # no key: line: %s\n", str(c, "key_withheld"));
	if (!cJSON_IsObject(reach)) {
		printf("      (no step reaches it: no locator finds it alone and %s)\n",
		       cJSON_IsObject(e) ? "it is not showing in a listed window"
		                         : "it has no position on screen");
		return;
	}
	cJSON_ArrayForEach(line, cJSON_GetObjectItem(reach, "step"))
	        printf("      %s %s\n", k++ ? " " : "-", line->valuestring);
}

static void print_app(const cJSON *app)
{
	printf("\napp %s (pid %d", str(app, "name"), (int)num(app, "pid"));
	if (strcmp(str(app, "status"), "ok") != 0) {
		printf("): %s: %s\n", str(app, "status"), str(app, "reason"));
		return;
	}
	const cJSON *w = cJSON_GetObjectItem(app, "walk");
	printf(", toolkit %s %d, found by %s): %d nodes in %d ms%s%s\n",
	       *str(app, "toolkit") ? str(app, "toolkit") : "?", (int)num(app, "toolkit_major"),
	       str(app, "found_by"), (int)num(w, "nodes"), (int)num(w, "ms"),
	       cJSON_IsTrue(cJSON_GetObjectItem(w, "truncated")) ? ", cut by " : "",
	       cJSON_IsTrue(cJSON_GetObjectItem(w, "truncated")) ? str(w, "cut_by") : "");
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(app, "controls")) print_control(c);
}

static void print_page(const cJSON *page)
{
	printf("\npage: %s", str(page, "status"));
	if (strcmp(str(page, "status"), "ok") != 0) {
		printf(" (%s)\n", str(page, "reason"));
		return;
	}
	printf(" %s\n", str(page, "url"));
	const cJSON *el;
	cJSON_ArrayForEach(el, cJSON_GetObjectItem(page, "elements"))
	        printf("  %s \"%s\"  %s\n", str(el, "role"), str(el, "name"), str(el, "id"));
}

static void print_text(const cJSON *doc)
{
	const cJSON *scr = cJSON_GetObjectItem(doc, "screen");
	printf("display %s  %dx%d%s\n\n", str(doc, "display"), (int)num(scr, "w"),
	       (int)num(scr, "h"),
	       cJSON_IsTrue(cJSON_GetObjectItem(doc, "private_session")) ? "  (private session)"
	                                                                 : "");
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "windows")) print_window(it);
	const cJSON *acc = cJSON_GetObjectItem(doc, "accessibility");
	if (strcmp(str(acc, "status"), "ok") != 0)
		printf("\naccessibility: %s (%s)\n", str(acc, "status"), str(acc, "reason"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(acc, "apps")) print_app(it);
	print_page(cJSON_GetObjectItem(doc, "page"));
}

/* ---- options ---- */

typedef struct after_opts {
	const char *scenario; /* --after */
	int line;             /* --line */
	const char *out;      /* --out */
	char *launch_log;     /* --out's launch.log (malloc'd) */
} after_opts;

static int parse_seconds(const char *text, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || !end || end == text || *end || !(v >= 0 && v <= 600))
		return -1;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, ksr_inspect_opts *o, bool *json, after_opts *af)
{
	static const struct option longopts[] = {
	        {"xvfb", no_argument, NULL, 'x'},
	        {"json", no_argument, NULL, 'j'},
	        {"window", required_argument, NULL, 'w'},
	        {"launch", required_argument, NULL, 'l'},
	        {"wait-window", required_argument, NULL, 'W'},
	        {"cdp", required_argument, NULL, 'c'},
	        {"max-nodes", required_argument, NULL, 'n'},
	        {"timeout", required_argument, NULL, 't'},
	        {"after", required_argument, NULL, 'a'},
	        {"line", required_argument, NULL, 'L'},
	        {"display-server", required_argument, NULL, 'S'},
	        {"wm", required_argument, NULL, 'M'},
	        {"settle-s", required_argument, NULL, 's'},
	        {"out", required_argument, NULL, 'o'},
	        {NULL, 0, NULL, 0},
	};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		const char *bad = NULL;
		switch (c) {
		case 'x':
			o->xvfb = true;
			break;
		case 'j':
			*json = true;
			break;
		case 'w':
			o->window_re = optarg;
			break;
		case 'l':
			o->launch = optarg;
			break;
		case 'W':
			o->wait_window = optarg;
			break;
		case 'c':
			bad = parse_int(optarg, 1, 65535, &o->cdp_port) ? "--cdp" : NULL;
			break;
		case 'n':
			bad = parse_int(optarg, 1, 1000000, &o->max_nodes) ? "--max-nodes" : NULL;
			break;
		case 't':
			bad = parse_int(optarg, 1, 86400, &o->timeout_s) ? "--timeout" : NULL;
			break;
		case 'a':
			af->scenario = optarg;
			break;
		case 'L':
			bad = parse_int(optarg, 1, 10000000, &af->line) ? "--line" : NULL;
			break;
		case 's':
			bad = parse_seconds(optarg, &o->settle_s) ? "--settle-s" : NULL;
			o->settle = true;
			break;
		case 'o':
			af->out = optarg;
			break;
		case 'S':
			if (ksr_session_parse_server(optarg, &o->display_server) < 0)
				return cli_usage_error(
				        &cli_cmd_inspect,
				        "--display-server '%s' is not xvfb, xvnc or auto", optarg);
			o->xvfb = true;
			break;
		case 'M':
			if (ksr_session_parse_wm(optarg, &o->wm) < 0)
				return cli_usage_error(&cli_cmd_inspect,
				                       "--wm '%s' is not openbox, xfwm4 or auto",
				                       optarg);
			o->xvfb = true;
			break;
		default:
			return cli_usage_error(&cli_cmd_inspect,
			                       "unknown or incomplete option '%s'",
			                       argv[optind - 1]);
		}
		if (bad)
			return cli_usage_error(&cli_cmd_inspect, "%s '%s' is not a valid number",
			                       bad, optarg);
	}
	if (optind != argc)
		return cli_usage_error(&cli_cmd_inspect, "unexpected argument '%s'", argv[optind]);
	if (o->wait_window && !o->launch)
		return cli_usage_error(&cli_cmd_inspect, "--wait-window needs --launch");
	if (af->line && !af->scenario)
		return cli_usage_error(&cli_cmd_inspect, "--line needs --after");
	if (af->scenario && o->launch)
		return cli_usage_error(&cli_cmd_inspect,
		                       "--after launches the scenario's app: no --launch");
	return 0;
}

/* ---- --after: run the scenario's steps, then inspect ---------------------- */

typedef struct after_run {
	ksr_inspect_opts o;
	cJSON *doc;
	ksr_err err;
	int rc;
	bool called;
	char verdict[64];
} after_run;

static void inspect_now(void *ud)
{
	after_run *ar = ud;
	ar->called = true;
	ar->rc = ksr_inspect(&ar->o, &ar->doc, &ar->err);
}

static void keep_verdict(void *ud, const cJSON *report)
{
	after_run *ar = ud;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(report, "verdict");
	snprintf(ar->verdict, sizeof ar->verdict, "%s",
	         cJSON_IsString(v) ? v->valuestring : "no verdict");
}

static void show_message(void *ud, const char *message)
{
	(void)ud;
	cli_say("kasm-session-runtime inspect: ", "%s", message);
}

/* The private display for --after, shared by the run and the listing as by
 * several runs (ksr_session_start exports DISPLAY and the bus variables). */
static ksr_session *after_session(const ksr_inspect_opts *o, ksr_err *err)
{
	ksr_session_opts so = {.width = o->xvfb_w ? o->xvfb_w : 1280,
	                       .height = o->xvfb_h ? o->xvfb_h : 720,
	                       .server = o->display_server,
	                       .wm = o->wm};
	ksr_session *s = NULL;
	if (ksr_session_start(&so, ksr_deadline_in_ms(60000), &s, err) < 0)
		return NULL;
	return s;
}

static int inspect_after(const ksr_inspect_opts *o, const after_opts *af, cJSON **doc)
{
	ksr_err err = {0};
	ksr_session *s = NULL;
	if (o->xvfb && !(s = after_session(o, &err))) {
		cli_say("kasm-session-runtime inspect: ", "the private display did not start: %s",
		        err.msg);
		return 2;
	}
	char tmp[] = "/tmp/ksr-inspect-XXXXXX";
	const char *out = af->out ? af->out : mkdtemp(tmp);
	if (!out) {
		cli_say("kasm-session-runtime inspect: ", "cannot make a folder in /tmp: %s",
		        strerror(errno));
		ksr_session_stop(s);
		return 2;
	}
	after_run ar = {.o = *o};
	ar.o.xvfb = false;  /* the run's display: the one started here, or DISPLAY */
	ar.o.settle = true; /* the steps' last effects drawn before the listing */
	ksr_run_opts ro = {.scenario_path = af->scenario,
	                   .out_dir = out,
	                   .deadline_s = 600,
	                   .steps_only = true,
	                   .steps_until_line = af->line,
	                   .on_stages_done = inspect_now,
	                   .on_stages_done_ud = &ar,
	                   .on_report = keep_verdict,
	                   .on_report_ud = &ar,
	                   .on_message = show_message};
	int code = ksr_run_scenario(&ro);
	ksr_session_stop(s);
	cli_say("kasm-session-runtime inspect: ", "ran %s%s%.0d: %s (exit %d), evidence in %s",
	        af->scenario, af->line ? " up to line " : "", af->line,
	        ar.verdict[0] ? ar.verdict : "no verdict", code, out);
	if (!ar.called) {
		fprintf(stderr,
		        "kasm-session-runtime inspect: the scenario did not get as far as "
		        "its steps; see %s/report.md\n",
		        out);
		return 2;
	}
	if (ar.rc < 0) {
		cli_say("kasm-session-runtime inspect: ", "%s", ar.err.msg);
		cJSON_Delete(ar.doc);
		return 2;
	}
	cJSON_AddStringToObject(ar.doc, "after", af->scenario);
	cJSON_AddNumberToObject(ar.doc, "after_line", af->line);
	cJSON_AddStringToObject(ar.doc, "after_verdict", ar.verdict);
	cJSON_AddStringToObject(ar.doc, "after_out", out);
	*doc = ar.doc;
	return 0;
}

/* mkdir -p DIR: --out's folder. */
static int make_out_dir(const char *dir)
{
	char *p = strdup(dir);
	int rc = p ? 0 : -1;
	for (char *c = p ? p + 1 : NULL; c && rc == 0; c++) {
		bool end = *c == '\0';
		if (*c != '/' && !end)
			continue;
		*c = '\0';
		struct stat st;
		if ((mkdir(p, 0755) < 0 && errno != EEXIST) || stat(p, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			rc = -1;
		if (end)
			break;
		*c = '/';
	}
	if (rc < 0)
		cli_say("kasm-session-runtime inspect: ", "cannot create the --out folder %s: %s",
		        dir, errno ? strerror(errno) : "not a directory");
	free(p);
	return rc;
}

/* --out's inspect.json: the listing as --json prints it. */
static int save_listing(const char *dir, const cJSON *doc)
{
	char *path = NULL;
	if (asprintf(&path, "%s/inspect.json", dir) < 0)
		return -1;
	char *text = ksr_json_print(doc, true);
	/* As every file in an evidence folder: never through a link. */
	FILE *f = ksr_evidence_fopen_path(path, KSR_EVIDENCE_NEW);
	bool ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		cli_say("kasm-session-runtime inspect: ", "cannot write %s: %s", path,
		        strerror(errno));
	cJSON_free(text);
	free(path);
	return ok ? 0 : -1;
}

static int inspect_exec(int argc, char **argv)
{
	ksr_inspect_opts o = {.settle_s = -1};
	after_opts af = {0};
	bool json = false;
	if (parse_opts(argc, argv, &o, &json, &af))
		return 2;
	const char *size = getenv("KASM_RUNTIME_XVFB_SIZE");
	if (size && parse_size(size, &o.xvfb_w, &o.xvfb_h) < 0)
		return cli_usage_error(&cli_cmd_inspect,
		                       "KASM_RUNTIME_XVFB_SIZE='%s' is not WIDTHxHEIGHT", size);
	if (af.out && make_out_dir(af.out) < 0)
		return 2;
	if (af.out && o.launch) {
		if (asprintf(&af.launch_log, "%s/launch.log", af.out) < 0)
			return 2;
		o.launch_log = af.launch_log;
	}
	ksr_cancel_install();
	cJSON *doc = NULL;
	ksr_err err = {0};
	int rc = 0;
	if (af.scenario)
		rc = inspect_after(&o, &af, &doc);
	else if (ksr_inspect(&o, &doc, &err) < 0)
		rc = 2;
	free(af.launch_log);
	if (rc == 2 && !af.scenario)
		cli_say("kasm-session-runtime inspect: ", "%s", err.msg);
	if (rc)
		return rc;
	if (af.out && save_listing(af.out, doc) < 0) {
		cJSON_Delete(doc);
		return 2;
	}
	if (json) {
		char *text = ksr_json_print(doc, true);
		int put = cli_stdout_put("kasm-session-runtime inspect: ", "the result", text);
		cJSON_free(text);
		if (put < 0) {
			cJSON_Delete(doc);
			return 2;
		}
	} else {
		print_text(doc);
	}
	cJSON_Delete(doc);
	return cli_stdout_check("kasm-session-runtime inspect: ", "the result") < 0 ? 2 : 0;
}

const cli_command cli_cmd_inspect = {
        .name = "inspect",
        .summary = "list windows and controls with the scenario step that reaches each",
        .usage = inspect_usage,
        .exec = inspect_exec,
};
