/* The loader, docs/scenario.schema.json and docs/scenario.md must agree on
 * every key: top-level keys, actions (the ladder rows), modifiers and which
 * action takes which, checks (the check rows) and the sub-mappings' keys.
 * A key added in one place and not the others fails here. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/vocabulary.h"
#include "ksr/scenario.h"
#include "tap.h"

static char *slurp(const char *rel)
{
	const char *root = getenv("KSR_SOURCE_DIR");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root && *root ? root : ".", rel);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* A set of names as a NULL-terminated array of owned strings. */
typedef struct names {
	char *v[128];
	size_t n;
} names;

static void add(names *s, const char *name, size_t len)
{
	if (s->n < 127)
		s->v[s->n++] = strndup(name, len);
}

static bool contains(const names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return true;
	return false;
}

static void clear(names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
}

/* Both ways: every expected name is in got, and got holds nothing else. */
static void same(const names *want, const names *got, const char *where)
{
	for (size_t i = 0; i < want->n; i++)
		ok(contains(got, want->v[i]), "%s has '%s'", where, want->v[i]);
	for (size_t i = 0; i < got->n; i++)
		ok(contains(want, got->v[i]), "%s: '%s' is known to the loader", where, got->v[i]);
	ok(want->n == got->n, "%s: %zu names, the loader has %zu", where, got->n, want->n);
}

static void from_list(names *s, const char *const *list, const char *skip)
{
	for (size_t i = 0; list[i]; i++)
		if (!skip || strcmp(list[i], skip))
			add(s, list[i], strlen(list[i]));
}

static void from_props(names *s, const cJSON *obj, const names *skip)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(obj, "properties");
	const cJSON *p;
	cJSON_ArrayForEach(p, props) if (!skip || !contains(skip, p->string))
	        add(s, p->string, strlen(p->string));
}

/* The first column (`name`) of the first table after the heading line. */
static void from_md(names *s, const char *md, const char *heading)
{
	const char *h = strstr(md, heading);
	ok(h != NULL, "docs/scenario.md has '%s'", heading + 1);
	if (!h)
		return;
	bool in_table = false;
	for (const char *line = strchr(h, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		const char *l = line + 1;
		if (*l == '|') {
			in_table = true;
			const char *tick = strncmp(l, "| `", 3) ? NULL : l + 3;
			const char *end = tick ? strchr(tick, '`') : NULL;
			if (end)
				add(s, tick, (size_t)(end - tick));
		} else if (in_table) {
			break;
		}
	}
}

static const cJSON *def(const cJSON *schema, const char *name)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(schema, "$defs"), name);
	ok(d != NULL, "schema has $defs/%s", name);
	return d;
}

static void top_level(const cJSON *schema, const char *md)
{
	names want = {0}, got = {0};
	from_list(&want, ksr_scenario_top_level_keys(), NULL);
	from_props(&got, schema, NULL);
	same(&want, &got, "schema properties");
	clear(&got);
	from_md(&got, md, "\n## Top-level keys");
	same(&want, &got, "md top-level table");
	clear(&got);
	clear(&want);
}

static void actions(const cJSON *schema, const char *md)
{
	names want = {0}, got = {0}, mods = {0};
	size_t n;
	const ksr_step_info *rows = ksr_step_kinds(&n);
	for (size_t i = 0; i < n; i++) {
		add(&want, rows[i].name, strlen(rows[i].name));
		if (rows[i].alias[0]) /* the older name is a key of its own to the schema and docs
		                       */
			add(&want, rows[i].alias, strlen(rows[i].alias));
	}
	from_list(&mods, ksr_scenario_modifier_keys(), NULL);
	from_props(&got, def(schema, "step_body"), &mods);
	same(&want, &got, "schema step_body actions");
	clear(&got);
	from_md(&got, md, "\n### Actions");
	same(&want, &got, "md actions table");
	clear(&got);
	clear(&want);
	/* step_body's modifiers: all but post (plan_step adds it). */
	from_list(&want, ksr_scenario_modifier_keys(), "post");
	from_props(&got, def(schema, "step_body"), NULL);
	for (size_t i = 0; i < want.n; i++)
		ok(contains(&got, want.v[i]), "step_body has modifier '%s'", want.v[i]);
	ok(!contains(&got, "post"), "step_body has no post");
	clear(&got);
	from_props(&got, def(schema, "plan_step"), NULL);
	ok(contains(&got, "post"), "plan_step has post");
	clear(&got);
	clear(&want);
	clear(&mods);
}

static void modifiers(const cJSON *schema, const char *md)
{
	names want = {0}, got = {0};
	from_list(&want, ksr_scenario_modifier_keys(), NULL);
	from_props(&got, def(schema, "modifiers"), NULL);
	same(&want, &got, "schema modifiers");
	clear(&got);
	from_md(&got, md, "\n### Modifiers");
	same(&want, &got, "md modifiers table");
	clear(&got);
	clear(&want);
}

/* The bit of each modifier, to read a ladder row's .modifiers. */
static unsigned mod_bit(const char *m)
{
	static const struct {
		const char *name;
		unsigned bit;
	} bits[] = {
	        {"target", KSR_MOD_TARGET},        {"role", KSR_MOD_ROLE},
	        {"expect", KSR_MOD_EXPECT},        {"expect_state", KSR_MOD_EXPECT_STATE},
	        {"checks", KSR_MOD_CHECKS},        {"timeout_s", KSR_MOD_TIMEOUT},
	        {"state", KSR_MOD_STATE},          {"hidden_ok", KSR_MOD_HIDDEN_OK},
	        {"ready_quiet_ms", KSR_MOD_READY}, {"tool", KSR_MOD_TOOL},
	        {"expect_effect", KSR_MOD_EFFECT},
	};
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (!strcmp(bits[i].name, m))
			return bits[i].bit;
	return 0;
}

/* step_body.allOf holds {if: {required: [action]}, then: {properties: {mod: false}}}. */
static const cJSON *refused_by_schema(const cJSON *body, const char *action)
{
	const cJSON *rule;
	cJSON_ArrayForEach(rule, cJSON_GetObjectItemCaseSensitive(body, "allOf"))
	{
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(rule, "if"), "required");
		const cJSON *props = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(rule, "then"), "properties");
		if (cJSON_GetArraySize(req) == 1 && props &&
		    !strcmp(cJSON_GetArrayItem(req, 0)->valuestring, action))
			return props;
	}
	return NULL;
}

static void modifier_fit(const cJSON *schema)
{
	const cJSON *body = def(schema, "step_body");
	size_t n;
	const ksr_step_info *rows = ksr_step_kinds(&n);
	const char *const *mods = ksr_scenario_modifier_keys();
	for (size_t i = 0; i < n; i++) {
		for (int a = 0; a < 2; a++) {
			const char *name = a ? rows[i].alias : rows[i].name;
			if (!name[0])
				continue;
			const cJSON *refused = refused_by_schema(body, name);
			for (size_t m = 0; mods[m]; m++) {
				if (!strcmp(mods[m], "post"))
					continue;
				bool takes = rows[i].modifiers & mod_bit(mods[m]);
				bool schema_refuses = cJSON_IsFalse(
				        cJSON_GetObjectItemCaseSensitive(refused, mods[m]));
				ok(takes != schema_refuses, "schema: %s %s %s", name,
				   takes ? "takes" : "refuses", mods[m]);
			}
		}
	}
}

static void checks(const cJSON *schema, const char *md)
{
	names want = {0}, got = {0}, skip = {0};
	size_t n;
	const ksr_check_info *rows = ksr_check_kinds(&n);
	for (size_t i = 0; i < n; i++)
		add(&want, rows[i].name, strlen(rows[i].name));
	add(&skip, "timeout_s", 9);
	const cJSON *check = def(schema, "check");
	from_props(&got, check, &skip);
	same(&want, &got, "schema check kinds");
	clear(&got);
	ok(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(check, "properties"),
	                                    "timeout_s") != NULL,
	   "schema check has timeout_s");
	from_md(&got, md, "\n## Checks");
	same(&want, &got, "md checks table");
	clear(&got);
	clear(&want);
	clear(&skip);
}

static void sub_mappings(const cJSON *schema)
{
	static const char *const maps[] = {
	        "targets", "cdp",   "goal_budget", "spawn", "selector_text", "state", "page",
	        "target",  "hover", "text",        "drag",  "locator",       "in"};
	for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
		char name[64], where[96];
		snprintf(name, sizeof name, "map_%s", maps[i]);
		snprintf(where, sizeof where, "schema %s", name);
		names want = {0}, got = {0};
		const char *const *keys = ksr_scenario_mapping_keys(maps[i]);
		ok(keys != NULL, "loader has keys for %s", maps[i]);
		if (keys)
			from_list(&want, keys, NULL);
		from_props(&got, def(schema, name), NULL);
		same(&want, &got, where);
		clear(&want);
		clear(&got);
	}
}

int main(void)
{
	char *json = slurp("docs/scenario.schema.json"), *md = slurp("docs/scenario.md");
	ok(json && md, "docs/scenario.schema.json and docs/scenario.md are readable");
	cJSON *schema = json ? cJSON_Parse(json) : NULL;
	ok(schema != NULL, "the schema is valid JSON");
	if (schema && md) {
		top_level(schema, md);
		actions(schema, md);
		modifiers(schema, md);
		modifier_fit(schema);
		checks(schema, md);
		sub_mappings(schema);
	}
	cJSON_Delete(schema);
	free(json);
	free(md);
	return tap_done();
}
