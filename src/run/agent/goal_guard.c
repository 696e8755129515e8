/* The goal loop's guard: what the planner is offered and whether its answer
 * stays inside the offer. Pure (no run, no display), so the unit tests can
 * throw every shape of coordinate and selector at it. */
#include "run/agent/goal.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/keys.h"
#include "ksr/strbuf.h"

/* The fields an answer may carry; any other (x, y, point, selector...) is
 * refused rather than ignored, so a coordinate never slips through. */
static const char *const allowed_fields[] = {"tool",    "name",    "text",  "expect",
                                             "seconds", "outcome", "claim", "thought"};

static const char *tool_name(ksr_goal_tool t)
{
	size_t n;
	const ksr_goal_tool_info *rows = ksr_goal_tools(&n);
	return (unsigned)t < n ? rows[t].name : "unknown";
}

void ksr_goal_tool_names(const char **names, size_t *n)
{
	const ksr_goal_tool_info *rows = ksr_goal_tools(n);
	for (size_t i = 0; i < *n; i++)
		names[i] = rows[i].name;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void ksr_goal_offer_clear(ksr_goal_offer *o)
{
	if (!o)
		return;
	free_list(o->targets, o->n_targets);
	free_list(o->cdp_targets, o->n_cdp_targets);
	free_list(o->elements, o->n_elements);
	free_list(o->page_ids, o->n_page);
	free_list(o->page_labels, o->n_page);
	memset(o, 0, sizeof *o);
}

static bool in_list(char *const *l, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

void ksr_goal_offer_add(char ***list, size_t *n, const char *s)
{
	if (!s || !*s || in_list(*list, *n, s))
		return;
	*list = ksr_xrealloc(*list, (*n + 1) * sizeof **list);
	(*list)[(*n)++] = ksr_xasprintf("%s", s);
}

/* ---- shapes ---------------------------------------------------------------- */

static bool matches(const char *re_text, const char *s)
{
	regex_t re;
	if (regcomp(&re, re_text, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
		return false;
	bool m = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

#define NUM "-?[0-9]+(\\.[0-9]+)?"

bool ksr_goal_looks_like_coordinate(const char *s)
{
	static const char *const shapes[] = {
	        /* two numbers with a comma or semicolon between: 120,340 (0.5; 0.3) */
	        NUM "[[:space:]]*[,;][[:space:]]*" NUM,
	        /* the whole text is two numbers: "0.5 0.3", "640x360", "[12 40]" */
	        "^[[:space:]([{]*" NUM "(px)?[[:space:]]*([x*][[:space:]]*|[[:space:]]+)" NUM
	        "(px)?[]})[:space:]]*$",
	        /* named axes: x=120, y: 40, "left": 12 */
	        "(^|[^[:alnum:]_])(x|y|left|top)[\"']?[[:space:]]*[=:][[:space:]]*" NUM,
	        /* a lone number is a pixel too */
	        "^[[:space:]]*" NUM "(px)?[[:space:]]*$",
	};
	for (size_t i = 0; s && i < sizeof shapes / sizeof shapes[0]; i++)
		if (matches(shapes[i], s))
			return true;
	return false;
}

bool ksr_goal_looks_like_selector(const char *s)
{
	static const char *const shapes[] = {
	        "^[[:space:]]*[#.][A-Za-z_][-A-Za-z0-9_]*",       /* #id, .class */
	        "^[[:space:]]*[a-z][a-z0-9]*[#.[][A-Za-z_]",      /* button#ok, a.link, input[ */
	        "\\[[A-Za-z_][-A-Za-z0-9_]*([~|^$*]?=[^]]*)?\\]", /* [name=q], [disabled] */
	        "[])[:alnum:]][[:space:]]*>[[:space:]]*[[:alnum:]#.[]", /* a > b */
	        ":(nth-|first-child|last-child|not\\(|has\\()",         /* pseudo-classes */
	        "^[[:space:]]*(//|xpath[:=]|css[:=])",                  /* XPath, prefixed forms */
	};
	for (size_t i = 0; s && i < sizeof shapes / sizeof shapes[0]; i++)
		if (matches(shapes[i], s))
			return true;
	return false;
}

/* ---- the answer -------------------------------------------------------------- */

static int reject(char *why, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int reject(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *str(const cJSON *a, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(a, key));
	return s && *s ? s : NULL;
}

static int check_fields(const cJSON *answer, char *why, size_t len)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, answer)
	{
		bool ok = false;
		for (size_t i = 0; i < sizeof allowed_fields / sizeof allowed_fields[0]; i++)
			ok = ok || !strcmp(f->string, allowed_fields[i]);
		if (!ok)
			return reject(
			        why, len,
			        "the field \"%.40s\" is not part of any tool: name an offered "
			        "target, element or key, never a coordinate or selector",
			        f->string);
		if (!cJSON_IsString(f) && strcmp(f->string, "seconds"))
			return reject(why, len, "the field \"%.40s\" must be a string", f->string);
	}
	return 0;
}

static int tool_of(const char *name)
{
	const ksr_goal_tool_info *row = ksr_goal_tool_find(name);
	return row ? (int)row->tool : -1;
}

/* A name for a list tool: not a coordinate or selector, and offered. */
static int check_name(const char *tool, const char *name, char *const *list, size_t n,
                      const char *what, char *why, size_t len)
{
	if (!name)
		return reject(why, len, "%s needs \"name\": one of the offered %s", tool, what);
	if (ksr_goal_looks_like_coordinate(name))
		return reject(why, len,
		              "%s: \"%.80s\" looks like a coordinate; coordinates are never "
		              "accepted, name one of the offered %s",
		              tool, name, what);
	if (!in_list(list, n, name))
		return reject(why, len,
		              "%s: \"%.80s\" is not one of the offered %s%s; use a name exactly "
		              "as listed",
		              tool, name, what,
		              ksr_goal_looks_like_selector(name) ? " (selectors are never accepted)"
		                                                 : "");
	return 0;
}

static int check_grounded(const ksr_goal_offer *o, ksr_goal_choice *c, char *why, size_t len)
{
	if (!o->grounded)
		return reject(why, len,
		              "click_grounded is not offered: no grounder model is "
		              "configured");
	if (!c->text || !c->expect)
		return reject(why, len,
		              "click_grounded needs \"text\" (the element described in "
		              "words) and \"expect\" (what the screen shows after)");
	if (ksr_goal_looks_like_coordinate(c->text) || ksr_goal_looks_like_coordinate(c->expect))
		return reject(why, len,
		              "click_grounded: the description holds a coordinate; "
		              "describe the element in words only");
	if (ksr_goal_looks_like_selector(c->text))
		return reject(why, len,
		              "click_grounded: the description looks like a selector; "
		              "describe the element in words only");
	return 0;
}

static int check_key(ksr_goal_choice *c, char *why, size_t len)
{
	ksr_chord *chords = NULL;
	size_t n = 0;
	ksr_err err = {0};
	if (!c->text)
		return reject(why, len, "key needs \"text\": chords such as ctrl+s or Return");
	if (ksr_goal_looks_like_coordinate(c->text))
		return reject(why, len, "key: \"%.60s\" looks like a coordinate", c->text);
	if (ksr_keys_parse(c->text, &chords, &n, &err) < 0)
		return reject(why, len, "key: %.200s", err.msg);
	ksr_keys_free(chords);
	return 0;
}

static int check_done(const cJSON *a, ksr_goal_choice *c, char *why, size_t len)
{
	const char *outcome = str(a, "outcome");
	if (!outcome || (strcmp(outcome, "success") && strcmp(outcome, "failure")))
		return reject(why, len, "done needs \"outcome\": \"success\" or \"failure\"");
	c->success = !strcmp(outcome, "success");
	c->claim = str(a, "claim") ? str(a, "claim") : "";
	return 0;
}

static int check_wait(const cJSON *a, ksr_goal_choice *c, char *why, size_t len)
{
	const cJSON *s = cJSON_GetObjectItem(a, "seconds");
	c->seconds = cJSON_IsNumber(s) ? s->valuedouble : 1;
	if (!(c->seconds > 0 && c->seconds <= KSR_GOAL_WAIT_MAX_S))
		return reject(why, len, "wait: \"seconds\" must be more than 0 and at most %g",
		              KSR_GOAL_WAIT_MAX_S);
	return 0;
}

static int check_tool(const ksr_goal_offer *o, const cJSON *a, ksr_goal_choice *c, char *why,
                      size_t len)
{
	switch (c->tool) {
	case KSR_GOAL_CLICK_TARGET:
		return check_name(tool_name(c->tool), c->name, o->targets, o->n_targets,
		                  "declared targets", why, len);
	case KSR_GOAL_PAGE_CLICK:
		return check_name(tool_name(c->tool), c->name, o->cdp_targets, o->n_cdp_targets,
		                  "cdp_targets names", why, len);
	case KSR_GOAL_CLICK_ELEMENT:
		return check_name(tool_name(c->tool), c->name, o->elements, o->n_elements,
		                  "accessibility names", why, len);
	case KSR_GOAL_PAGE_ELEMENT:
		return check_name(tool_name(c->tool), c->name, o->page_ids, o->n_page,
		                  "page element ids", why, len);
	case KSR_GOAL_KEY:
		return check_key(c, why, len);
	case KSR_GOAL_TYPE:
		return c->text ? 0 : reject(why, len, "type needs \"text\"");
	case KSR_GOAL_CLICK_GROUNDED:
		return check_grounded(o, c, why, len);
	case KSR_GOAL_WAIT:
		return check_wait(a, c, why, len);
	default:
		return check_done(a, c, why, len);
	}
}

int ksr_goal_validate(const ksr_goal_offer *o, const cJSON *a, ksr_goal_choice *c, char *why,
                      size_t len)
{
	memset(c, 0, sizeof *c);
	if (!cJSON_IsObject(a))
		return reject(why, len, "the answer is not a JSON object");
	if (check_fields(a, why, len) < 0)
		return -1;
	const char *tool = str(a, "tool");
	int t = tool_of(tool);
	if (t < 0)
		return reject(why, len,
		              "there is no tool \"%.40s\" (there is no shell tool either)",
		              tool ? tool : "");
	c->tool = (ksr_goal_tool)t;
	c->name = str(a, "name");
	c->text = cJSON_GetStringValue(cJSON_GetObjectItem(a, "text"));
	c->expect = str(a, "expect");
	if (c->text && !*c->text)
		c->text = NULL;
	return check_tool(o, a, c, why, len);
}

/* ---- the offer as text ---------------------------------------------------------- */

static void list_into(ksr_strbuf *out, const char *title, char *const *l, size_t n)
{
	if (!n)
		return;
	ksr_strbuf_addf(out, "%s:", title);
	for (size_t i = 0; i < n; i++)
		ksr_strbuf_addf(out, "%s \"%s\"", i ? "," : "", l[i]);
	ksr_strbuf_add(out, "\n");
}

char *ksr_goal_offer_text(const ksr_goal_offer *o)
{
	ksr_strbuf out = {0};
	list_into(&out, "- click_target {name}: declared targets", o->targets, o->n_targets);
	list_into(&out, "- page_click {name}: page targets", o->cdp_targets, o->n_cdp_targets);
	list_into(&out, "- click_element {name}: accessibility names", o->elements, o->n_elements);
	if (o->n_page) {
		char **both = ksr_xmalloc(o->n_page * sizeof *both);
		for (size_t i = 0; i < o->n_page; i++)
			both[i] = ksr_xasprintf("%s (%s)", o->page_ids[i], o->page_labels[i]);
		list_into(&out, "- page_element {name: the id before the brackets}: page elements",
		          both, o->n_page);
		free_list(both, o->n_page);
	}
	ksr_strbuf_addf(
	        &out,
	        "- key {text}: key chords, e.g. \"ctrl+s\", \"Return\", \"alt+F4\"\n"
	        "- type {text}: text typed into the focused control\n"
	        "%s"
	        "- wait {seconds}: up to %g seconds\n"
	        "- done {outcome: \"success\" or \"failure\", claim}: the goal is reached, or "
	        "cannot be\n",
	        o->grounded ? "- click_grounded {text, expect}: an element described in words, "
	                      "and what the screen shows after the click\n"
	                    : "",
	        KSR_GOAL_WAIT_MAX_S);
	return ksr_strbuf_take(&out);
}
