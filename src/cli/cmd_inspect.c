/* inspect: what an author needs to write a scenario, as text or JSON. The data
 * comes from ksr_inspect (a cJSON document); this file only formats it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "ksr/inspect.h"

static const char inspect_usage[] =
        "usage: kasm-session-runtime inspect [OPTIONS]\n\n"
        "Lists what a scenario can reach: the windows (title, class, PID, geometry,\n"
        "type) and, for each window's process, its accessibility controls (role,\n"
        "name, states, actions, extents), each with the scenario step that reaches it\n"
        "at the highest rung: click_element: \"NAME\" (with role: when the name is\n"
        "ambiguous), else click: FX FY (a fraction of the window's client area).\n"
        "Windows get a window: ^Title$ line.\n\n"
        "Options:\n"
        "  --xvfb              inspect a private Xvfb session (D-Bus, AT-SPI, openbox)\n"
        "  --launch CMD        run CMD first (sh -c; stopped at the end) and wait for its\n"
        "                      window\n"
        "  --wait-window RE    with --launch: the window title to wait for (default: any\n"
        "                      new window)\n"
        "  --window RE         list only windows whose title matches RE\n"
        "  --cdp PORT          also list a browser page's interactive elements\n"
        "                      (remote debugging port on 127.0.0.1)\n"
        "  --max-nodes N       accessibility nodes walked per app (default 5000)\n"
        "  --timeout S         bound on the whole inspection (default 30)\n"
        "  --json              print the JSON document instead of text\n"
        "  -h, --help          this text\n\n"
        "Environment: DISPLAY (without --xvfb), KASM_RUNTIME_XVFB_SIZE (1280x720).\n"
        "Exit: 0 listed, 2 no display, the launched app's window never came, or a\n"
        "usage error.\n";

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
	printf("\n");
	const cJSON *reach = cJSON_GetObjectItem(c, "reach");
	const cJSON *line;
	int k = 0;
	if (!cJSON_IsObject(reach)) {
		printf("      (no step reaches it: no usable name and no position in a window)\n");
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

static int parse_opts(int argc, char **argv, ksr_inspect_opts *o, bool *json)
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
	return 0;
}

static int inspect_exec(int argc, char **argv)
{
	ksr_inspect_opts o = {0};
	bool json = false;
	if (parse_opts(argc, argv, &o, &json))
		return 2;
	const char *size = getenv("KASM_RUNTIME_XVFB_SIZE");
	if (size && parse_size(size, &o.xvfb_w, &o.xvfb_h) < 0)
		return cli_usage_error(&cli_cmd_inspect,
		                       "KASM_RUNTIME_XVFB_SIZE='%s' is not WIDTHxHEIGHT", size);
	ksr_cancel_install();
	cJSON *doc = NULL;
	ksr_err err = {0};
	if (ksr_inspect(&o, &doc, &err) < 0) {
		fprintf(stderr, "kasm-session-runtime inspect: %s\n", err.msg);
		return 2;
	}
	if (json) {
		char *text = cJSON_Print(doc);
		printf("%s\n", text);
		cJSON_free(text);
	} else {
		print_text(doc);
	}
	cJSON_Delete(doc);
	return 0;
}

const cli_command cli_cmd_inspect = {
        .name = "inspect",
        .summary = "list windows and controls with the scenario step that reaches each",
        .usage = inspect_usage,
        .exec = inspect_exec,
};
