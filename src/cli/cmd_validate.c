/* validate: load-time checks only, `file:line:col: message` per error. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "ksr/scenario.h"

static int validate_one(const char *path, cJSON *json_errors)
{
	ksr_errlist errs = {0};
	ksr_scenario *s = ksr_scenario_load(path, &errs);
	for (size_t i = 0; i < errs.len; i++) {
		const ksr_err *e = &errs.items[i];
		fprintf(stderr, "%s:%d:%d: %s\n", path, e->line, e->col, e->msg);
		if (json_errors) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "file", path);
			cJSON_AddNumberToObject(o, "line", e->line);
			cJSON_AddNumberToObject(o, "col", e->col);
			cJSON_AddStringToObject(o, "message", e->msg);
			cJSON_AddItemToArray(json_errors, o);
		}
	}
	int ok = s != NULL;
	if (ok)
		fprintf(stderr, "%s: ok\n", path);
	ksr_scenario_free(s);
	ksr_errlist_free(&errs);
	return ok;
}

static int validate_exec(int argc, char **argv)
{
	int json = 0, first = 1;
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (strcmp(argv[first], "--json") == 0)
			json = 1;
		else if (strcmp(argv[first], "--") == 0) {
			first++;
			break;
		} else
			return cli_usage_error(&cli_cmd_validate, "unknown option '%s'",
			                       argv[first]);
	}
	if (first >= argc)
		return cli_usage_error(&cli_cmd_validate, "needs at least one SCENARIO.yaml");
	cJSON *errors = json ? cJSON_CreateArray() : NULL;
	int all_ok = 1;
	for (int i = first; i < argc; i++)
		all_ok &= validate_one(argv[i], errors);
	if (json) {
		char *text = cJSON_PrintUnformatted(errors);
		printf("%s\n", text);
		cJSON_free(text);
		cJSON_Delete(errors);
	}
	return all_ok ? 0 : 2;
}

const cli_command cli_cmd_validate = {
        .name = "validate",
        .summary = "check scenarios without running them",
        .usage = "usage: kasm-session-runtime validate [--json] SCENARIO.yaml...\n\n"
                 "Loads each scenario and reports every load-time error as\n"
                 "FILE:LINE:COL: MESSAGE on stderr. --json also prints the errors as a JSON\n"
                 "array on stdout. Exit 0 when every file is valid, 2 otherwise.\n",
        .exec = validate_exec,
};
