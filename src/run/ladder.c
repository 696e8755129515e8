/* The ladder: every step kind and every check kind, one row each. The loader
 * reads the name/shape/modifier columns; the run reads rung, backend,
 * needs_model and the executor. A NULL executor means the backend is not built
 * yet: such a step still loads, and at run time ends the run as test-error /
 * backend-unavailable naming its line. */
#include "ksr/ladder.h"

#include <string.h>

#include "run/exec.h"

#define CLICK_MODS (KSR_MOD_TARGET | KSR_MOD_COMMON)

static const ksr_step_info step_rows[] = {
        {.name = "key",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_CHORDS,
         /* target: sends the keys to another window (a dialog whose
          * toolkit drops keys sent to the window it blocks). */
         .modifiers = KSR_MOD_TARGET | KSR_MOD_COMMON,
         .exec = KSR_EXEC_KEY},
        {.name = "type",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_TEXT,
         /* target: sends the keys to another window (a dialog whose
          * toolkit drops keys sent to the window it blocks). */
         .modifiers = KSR_MOD_TARGET | KSR_MOD_COMMON,
         .exec = KSR_EXEC_TYPE},
        {.name = "click",
         .rung = KSR_RUNG_DECLARED,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_POINT,
         .modifiers = CLICK_MODS,
         .exec = KSR_EXEC_CLICK},
        {.name = "double_click",
         .rung = KSR_RUNG_DECLARED,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_POINT,
         .modifiers = CLICK_MODS,
         .exec = KSR_EXEC_CLICK},
        {.name = "right_click",
         .rung = KSR_RUNG_DECLARED,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_POINT,
         .modifiers = CLICK_MODS,
         .exec = KSR_EXEC_CLICK},
        {.name = "scroll",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_SCROLL,
         .modifiers = CLICK_MODS,
         .exec = KSR_EXEC_SCROLL},
        {.name = "click_element",
         .rung = KSR_RUNG_ELEMENT,
         .backend = KSR_BACKEND_ATSPI,
         .shape = KSR_SHAPE_NAME,
         .modifiers = KSR_MOD_ROLE | KSR_MOD_COMMON,
         .exec = KSR_EXEC_CLICK_ELEMENT},
        {.name = "click_grounded",
         .rung = KSR_RUNG_GROUNDED,
         .backend = KSR_BACKEND_XTEST,
         .needs_model = true,
         .shape = KSR_SHAPE_DESCRIPTION,
         .modifiers = CLICK_MODS,
         .exec = KSR_EXEC_CLICK_GROUNDED},
        {.name = "observe",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_VISION,
         .needs_model = true,
         .shape = KSR_SHAPE_DESCRIPTION,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_OBSERVE},
        {.name = "wait_window",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_X11,
         .shape = KSR_SHAPE_PATTERN,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_WAIT_WINDOW},
        {.name = "cdp_navigate",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_URL,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "cdp_click",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_SELECTOR,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "cdp_type",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_SELECTOR_TEXT,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "cdp_wait",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_SELECTOR,
         .modifiers = KSR_MOD_STATE | KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "cdp_fill",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_SELECTOR_TEXT,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "cdp_press",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_CHORDS,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "cdp_eval",
         .rung = KSR_RUNG_PAGE,
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_JS,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_CDP},
        {.name = "shell",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_SHELL,
         .shape = KSR_SHAPE_COMMAND,
         .modifiers = KSR_MOD_COMMON,
         .exec = KSR_EXEC_SHELL},
        {.name = "sleep",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_NONE,
         .shape = KSR_SHAPE_SECONDS,
         .modifiers = KSR_MOD_CHECKS,
         .exec = KSR_EXEC_SLEEP},
        {.name = "spawn",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_XTEST,
         .shape = KSR_SHAPE_SPAWN,
         .modifiers = KSR_MOD_COMMON,
         .desktop_only = true,
         .exec = KSR_EXEC_SPAWN},
        {.name = "kill",
         .rung = KSR_RUNG_NONE,
         .backend = KSR_BACKEND_NONE,
         .shape = KSR_SHAPE_IDENT,
         .modifiers = KSR_MOD_CHECKS | KSR_MOD_TIMEOUT,
         .desktop_only = true,
         .exec = KSR_EXEC_KILL},
};

static const ksr_check_info check_rows[] = {
        {.name = "window",
         .backend = KSR_BACKEND_X11,
         .shape = KSR_SHAPE_PATTERN,
         .eval = KSR_CHECK_WINDOW},
        {.name = "no_window",
         .backend = KSR_BACKEND_X11,
         .shape = KSR_SHAPE_PATTERN,
         .eval = KSR_CHECK_NO_WINDOW},
        {.name = "process",
         .backend = KSR_BACKEND_PROC,
         .shape = KSR_SHAPE_PATTERN,
         .eval = KSR_CHECK_PROCESS},
        {.name = "file",
         .backend = KSR_BACKEND_FILE,
         .shape = KSR_SHAPE_TEXT,
         .eval = KSR_CHECK_FILE},
        {.name = "shell",
         .backend = KSR_BACKEND_SHELL,
         .shape = KSR_SHAPE_COMMAND,
         .eval = KSR_CHECK_SHELL},
        {.name = "state",
         .backend = KSR_BACKEND_ATSPI,
         .shape = KSR_SHAPE_STATE,
         .eval = KSR_CHECK_STATE},
        {.name = "element",
         .backend = KSR_BACKEND_ATSPI,
         .shape = KSR_SHAPE_NAME,
         .eval = KSR_CHECK_ELEMENT},
        {.name = "page",
         .backend = KSR_BACKEND_CDP,
         .shape = KSR_SHAPE_PAGE,
         .eval = KSR_CHECK_PAGE},
        {.name = "screen",
         .backend = KSR_BACKEND_VISION,
         .needs_model = true,
         .shape = KSR_SHAPE_DESCRIPTION,
         .eval = KSR_CHECK_SCREEN},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const ksr_step_info *ksr_ladder_rows(size_t *n)
{
	*n = COUNT(step_rows);
	return step_rows;
}

const ksr_step_info *ksr_ladder_find(const char *name)
{
	for (size_t i = 0; name && i < COUNT(step_rows); i++)
		if (strcmp(step_rows[i].name, name) == 0)
			return &step_rows[i];
	return NULL;
}

const ksr_check_info *ksr_checks_rows(size_t *n)
{
	*n = COUNT(check_rows);
	return check_rows;
}

const ksr_check_info *ksr_checks_find(const char *name)
{
	for (size_t i = 0; name && i < COUNT(check_rows); i++)
		if (strcmp(check_rows[i].name, name) == 0)
			return &check_rows[i];
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
