/* validate: load-time checks only, `file:line:col: message` per error on
 * stderr; --json or --format github add a machine form on stdout. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "ksr/json.h"
#include "ksr/scenario.h"

typedef enum validate_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_GITHUB,
} validate_format;

/* GitHub workflow commands: data escapes %, CR and LF; property values
 * (file=...) also ':' and ',', which would end the property. */
static void print_github_escaped(const char *s, bool property)
{
	for (; *s; s++) {
		if (*s == '%')
			fputs("%25", stdout);
		else if (*s == '\r')
			fputs("%0D", stdout);
		else if (*s == '\n')
			fputs("%0A", stdout);
		else if (property && *s == ':')
			fputs("%3A", stdout);
		else if (property && *s == ',')
			fputs("%2C", stdout);
		else
			putchar(*s);
	}
}

static void print_github(const char *path, const ksr_err *e)
{
	fputs("::error file=", stdout);
	print_github_escaped(path, true);
	/* Line 0 means no position (e.g. an unreadable file): annotate the file. */
	if (e->line > 0)
		printf(",line=%d,col=%d", e->line, e->col > 0 ? e->col : 1);
	fputs("::", stdout);
	print_github_escaped(e->msg, false);
	putchar('\n');
}

static cJSON *json_error(const char *path, const ksr_err *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", path);
	cJSON_AddNumberToObject(o, "line", e->line);
	cJSON_AddNumberToObject(o, "col", e->col);
	cJSON_AddStringToObject(o, "message", e->msg);
	return o;
}

static int validate_one(const char *path, validate_format format, cJSON *json_errors)
{
	ksr_errlist errs = {0};
	ksr_scenario *s = ksr_scenario_load(path, &errs);
	for (size_t i = 0; i < errs.len; i++) {
		const ksr_err *e = &errs.items[i];
		cli_say(NULL, "%s:%d:%d: %s", path, e->line, e->col, e->msg);
		if (format == FORMAT_JSON)
			cJSON_AddItemToArray(json_errors, json_error(path, e));
		else if (format == FORMAT_GITHUB)
			print_github(path, e);
	}
	int ok = s != NULL;
	if (ok)
		cli_say(NULL, "%s: ok", path);
	ksr_scenario_free(s);
	ksr_errlist_free(&errs);
	return ok;
}

static int parse_format(const char *name, validate_format *format)
{
	if (strcmp(name, "text") == 0)
		*format = FORMAT_TEXT;
	else if (strcmp(name, "json") == 0)
		*format = FORMAT_JSON;
	else if (strcmp(name, "github") == 0)
		*format = FORMAT_GITHUB;
	else
		return cli_usage_error(&cli_cmd_validate,
		                       "--format '%s': expected text, json or github", name);
	return 0;
}

/* Options before the first file; returns the index of the first file, or -1. */
static int parse_options(int argc, char **argv, validate_format *format)
{
	int first = 1;
	for (; first < argc && argv[first][0] == '-'; first++) {
		const char *a = argv[first];
		if (strcmp(a, "--json") == 0) {
			*format = FORMAT_JSON;
		} else if (strcmp(a, "--format") == 0 && first + 1 < argc) {
			if (parse_format(argv[++first], format))
				return -1;
		} else if (strncmp(a, "--format=", 9) == 0) {
			if (parse_format(a + 9, format))
				return -1;
		} else if (strcmp(a, "--") == 0) {
			first++;
			break;
		} else {
			cli_usage_error(&cli_cmd_validate, "unknown or incomplete option '%s'", a);
			return -1;
		}
	}
	if (first >= argc) {
		cli_usage_error(&cli_cmd_validate, "needs at least one SCENARIO.yaml");
		return -1;
	}
	return first;
}

static int validate_exec(int argc, char **argv)
{
	validate_format format = FORMAT_TEXT;
	int first = parse_options(argc, argv, &format);
	if (first < 0)
		return 2;
	cJSON *errors = format == FORMAT_JSON ? cJSON_CreateArray() : NULL;
	int all_ok = 1;
	for (int i = first; i < argc; i++)
		all_ok &= validate_one(argv[i], format, errors);
	if (errors) {
		char *text = ksr_json_print(errors, false);
		int put = cli_stdout_put("kasm-session-runtime validate: ", "the result", text);
		cJSON_free(text);
		cJSON_Delete(errors);
		if (put < 0)
			return 2;
	}
	if (cli_stdout_check("kasm-session-runtime validate: ", "the result") < 0)
		return 2;
	return all_ok ? 0 : 2;
}

const cli_command cli_cmd_validate = {
        .name = "validate",
        .summary = "check scenarios without running them",
        .usage = "usage: kasm-session-runtime validate [OPTIONS] SCENARIO.yaml...\n\n"
                 "Loads each scenario and reports every load-time error as\n"
                 "FILE:LINE:COL: MESSAGE on stderr (FILE: ok for a valid file).\n\n"
                 "Options:\n"
                 "  --json             also print the errors as a JSON array on stdout\n"
                 "  --format FORMAT    text (default), json (same as --json), or github:\n"
                 "                     also print one GitHub Actions annotation per error\n"
                 "                     on stdout: ::error file=F,line=L,col=C::MESSAGE\n"
                 "  -h, --help         this text\n\n"
                 "Exit: 0 when every file is valid, 2 otherwise.\n",
        .exec = validate_exec,
};
