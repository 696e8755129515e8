/* The vocabulary's tables, expanded from ksr/vocabulary.def without its
 * executor column: the loader, the goal loop's guard and the docs test read
 * them; nothing here links an executor or a backend. */
#include "ksr/vocabulary.h"

#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define STEP_ROW(nm, als, KIND, rng, be, model, shp, mods, tgt, aft, desk)                         \
	{.name = nm,                                                                               \
	 .alias = als,                                                                             \
	 .kind = KSR_KIND_##KIND,                                                                  \
	 .rung = KSR_RUNG_##rng,                                                                   \
	 .backend = KSR_BACKEND_##be,                                                              \
	 .needs_model = model,                                                                     \
	 .shape = KSR_SHAPE_##shp,                                                                 \
	 .modifiers = (mods),                                                                      \
	 .target = KSR_TARGET_##tgt,                                                               \
	 .after = KSR_AFTER_##aft,                                                                 \
	 .desktop_only = desk},

static const ksr_step_info step_rows[] = {
#define KSR_STEP(nm, KIND, rng, be, model, shp, mods, tgt, aft, desk, exec, ...)                   \
	STEP_ROW(#nm, "" #__VA_ARGS__, KIND, rng, be, model, shp, mods, tgt, aft, desk)
#include "ksr/vocabulary.def"
};

/* The same rows under their alias (name "" where a row has none): a step
 * written with the older name keeps it (in errors, reports, the writer)
 * while its kind, and so its executor, is the row's. */
static const ksr_step_info alias_rows[] = {
#define KSR_STEP(nm, KIND, rng, be, model, shp, mods, tgt, aft, desk, exec, ...)                   \
	STEP_ROW("" #__VA_ARGS__, #nm, KIND, rng, be, model, shp, mods, tgt, aft, desk)
#include "ksr/vocabulary.def"
};

static const ksr_check_info check_rows[] = {
#define KSR_CHECK(nm, KIND, be, model, shp, eval)                                                  \
	{.name = #nm,                                                                              \
	 .kind = KSR_CHECK_KIND_##KIND,                                                            \
	 .backend = KSR_BACKEND_##be,                                                              \
	 .needs_model = model,                                                                     \
	 .shape = KSR_SHAPE_##shp},
#include "ksr/vocabulary.def"
};

static const ksr_goal_tool_info goal_rows[] = {
#define KSR_GOAL_TOOL(nm, TOOL, kind, ...)                                                         \
	{.name = #nm, .alias = "" #__VA_ARGS__, .tool = KSR_GOAL_##TOOL, .step = KSR_KIND_##kind},
#include "ksr/vocabulary.def"
};

_Static_assert(COUNT(step_rows) == KSR_KIND_COUNT, "one row per step kind");
_Static_assert(COUNT(check_rows) == KSR_CHECK_KIND_COUNT, "one row per check kind");
_Static_assert(COUNT(goal_rows) == KSR_GOAL_TOOL_COUNT, "one row per goal tool");

const ksr_step_info *ksr_step_kinds(size_t *n)
{
	*n = COUNT(step_rows);
	return step_rows;
}

const ksr_step_info *ksr_step_kind_find(const char *name)
{
	for (size_t i = 0; name && i < COUNT(step_rows); i++)
		if (!strcmp(step_rows[i].name, name))
			return &step_rows[i];
	for (size_t i = 0; name && i < COUNT(alias_rows); i++)
		if (alias_rows[i].name[0] && !strcmp(alias_rows[i].name, name))
			return &alias_rows[i];
	return NULL;
}

const ksr_step_info *ksr_step_kind_info(ksr_step_kind kind)
{
	return (unsigned)kind < COUNT(step_rows) ? &step_rows[kind] : NULL;
}

const ksr_check_info *ksr_check_kinds(size_t *n)
{
	*n = COUNT(check_rows);
	return check_rows;
}

const ksr_check_info *ksr_check_kind_find(const char *name)
{
	for (size_t i = 0; name && i < COUNT(check_rows); i++)
		if (strcmp(check_rows[i].name, name) == 0)
			return &check_rows[i];
	return NULL;
}

const ksr_check_info *ksr_check_kind_info(ksr_check_kind kind)
{
	return (unsigned)kind < COUNT(check_rows) ? &check_rows[kind] : NULL;
}

const ksr_goal_tool_info *ksr_goal_tools(size_t *n)
{
	*n = COUNT(goal_rows);
	return goal_rows;
}

const ksr_goal_tool_info *ksr_goal_tool_find(const char *name)
{
	for (size_t i = 0; name && i < COUNT(goal_rows); i++)
		if (!strcmp(goal_rows[i].name, name) ||
		    (goal_rows[i].alias[0] && !strcmp(goal_rows[i].alias, name)))
			return &goal_rows[i];
	return NULL;
}

const char *ksr_backend_name(ksr_backend b)
{
	static const char *const names[] = {
	        [KSR_BACKEND_NONE] = "none",     [KSR_BACKEND_XTEST] = "xtest",
	        [KSR_BACKEND_ATSPI] = "atspi",   [KSR_BACKEND_CDP] = "cdp",
	        [KSR_BACKEND_VISION] = "vision", [KSR_BACKEND_SHELL] = "shell",
	        [KSR_BACKEND_X11] = "x11",       [KSR_BACKEND_PROC] = "proc",
	        [KSR_BACKEND_FILE] = "file",
	};
	return (unsigned)b < COUNT(names) ? names[b] : "none";
}
