/* The goal loop's guard (goal_guard.c), plan.yaml rendering (plan.c) and the
 * grounding cache's fingerprint (grounding_cache.c): pure parts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/run/agent/goal.h"
#include "../../src/run/vision/grounding_cache.h"
#include "../../src/run/agent/plan.h"
#include "tap.h"

static ksr_goal_offer offer(bool grounded)
{
	ksr_goal_offer o = {0};
	ksr_goal_offer_add(&o.targets, &o.n_targets, "press");
	ksr_goal_offer_add(&o.elements, &o.n_elements, "Enable feature");
	ksr_goal_offer_add(&o.elements, &o.n_elements, "Enable feature"); /* no duplicate */
	o.grounded = grounded;
	return o;
}

static int validate(const ksr_goal_offer *o, const char *json, char *why, size_t len)
{
	cJSON *a = cJSON_Parse(json);
	ksr_goal_choice c;
	int rc = ksr_goal_validate(o, a, &c, why, len);
	cJSON_Delete(a);
	return rc;
}

static void coordinates(void)
{
	const char *yes[] = {"120,340",
	                     "(120, 340)",
	                     "[0.5, 0.3]",
	                     "0.5 0.3",
	                     "640x360",
	                     "x=120",
	                     "the button at (12, 40)",
	                     "\"x\": 5",
	                     "  300  ",
	                     "top: 40"};
	const char *no[] = {"press",       "Enable feature", "Save As", "the blue OK button",
	                    "Page 2 of 3", "ctrl+s"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ok(ksr_goal_looks_like_coordinate(yes[i]), "coordinate: %s", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		ok(!ksr_goal_looks_like_coordinate(no[i]), "not a coordinate: %s", no[i]);
}

static void selectors(void)
{
	const char *yes[] = {"#q",           ".btn-primary",    "button#ok",        "[name=q]",
	                     "form > input", "li:nth-child(2)", "//button[@id='x']"};
	const char *no[] = {"press", "Enable feature", "the Save button", "OK"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ok(ksr_goal_looks_like_selector(yes[i]), "selector: %s", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		ok(!ksr_goal_looks_like_selector(no[i]), "not a selector: %s", no[i]);
}

static void answers(void)
{
	ksr_goal_offer o = offer(false);
	char why[300];
	ok(o.n_elements == 1, "an offered name is listed once");
	ok(validate(&o, "{\"tool\":\"click_target\",\"name\":\"press\"}", why, sizeof why) == 0,
	   "an offered target is accepted");
	ok(validate(&o, "{\"tool\":\"click_element\",\"name\":\"Enable feature\"}", why,
	            sizeof why) == 0,
	   "an offered accessibility name is accepted");
	ok(validate(&o, "{\"tool\":\"click_target\",\"name\":\"submit\"}", why, sizeof why) < 0 &&
	           strstr(why, "not one of the offered"),
	   "an unknown target is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"click_target\",\"name\":\"100, 200\"}", why, sizeof why) < 0 &&
	           strstr(why, "coordinate"),
	   "a coordinate as a name is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"click_target\",\"name\":\"press\",\"x\":3}", why, sizeof why) <
	           0,
	   "an extra x field is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"click_element\",\"name\":\"#ok\"}", why, sizeof why) < 0 &&
	           strstr(why, "selector"),
	   "a selector as an element is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"shell\",\"text\":\"rm -rf /\"}", why, sizeof why) < 0,
	   "there is no shell tool: %s", why);
	ok(validate(&o, "{\"tool\":\"cdp_click\",\"name\":\"search\"}", why, sizeof why) < 0,
	   "cdp_click with no CDP names offered is rejected");
	ok(validate(&o, "{\"tool\":\"click_grounded\",\"text\":\"the OK button\",\"expect\":\"x\"}",
	            why, sizeof why) < 0 &&
	           strstr(why, "not offered"),
	   "click_grounded without a grounder is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"key\",\"text\":\"ctrl+s\"}", why, sizeof why) == 0,
	   "a key chord is accepted");
	ok(validate(&o, "{\"tool\":\"key\",\"text\":\"ctrl+nosuchkey\"}", why, sizeof why) < 0,
	   "a bad chord is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"wait\",\"seconds\":500}", why, sizeof why) < 0,
	   "a long wait is rejected");
	ok(validate(&o, "{\"tool\":\"done\",\"outcome\":\"maybe\"}", why, sizeof why) < 0,
	   "done needs success or failure");
	ok(validate(&o, "{\"tool\":\"done\",\"outcome\":\"failure\",\"claim\":\"no\"}", why,
	            sizeof why) == 0,
	   "done failure is accepted");
	ksr_goal_offer_clear(&o);
	o = offer(true);
	ok(validate(&o,
	            "{\"tool\":\"click_grounded\",\"text\":\"the button at 10,20\","
	            "\"expect\":\"pressed\"}",
	            why, sizeof why) < 0,
	   "a coordinate inside a description is rejected: %s", why);
	ok(validate(&o, "{\"tool\":\"click_grounded\",\"text\":\"the OK button\"}", why,
	            sizeof why) < 0,
	   "click_grounded needs expect");
	ok(validate(&o,
	            "{\"tool\":\"click_grounded\",\"text\":\"the OK button\",\"expect\":"
	            "\"the dialog closed\"}",
	            why, sizeof why) == 0,
	   "a described element with expect is accepted");
	char *text = ksr_goal_offer_text(&o);
	ok(strstr(text, "\"press\"") && strstr(text, "click_grounded"), "the offer lists names");
	free(text);
	ksr_goal_offer_clear(&o);
	ksr_goal_offer_clear(NULL);
}

/* The page tool is page_click (both protocols); a model that still says
 * cdp_click gets the same tool. */
static void page_click_name(void)
{
	ksr_goal_offer o = offer(false);
	ksr_goal_offer_add(&o.cdp_targets, &o.n_cdp_targets, "search");
	char why[300] = "";
	const char *names[KSR_GOAL_TOOL_COUNT];
	size_t n = 0;
	ksr_goal_tool_names(names, &n);
	bool page = false, cdp = false;
	for (size_t i = 0; i < n; i++)
		page |= !strcmp(names[i], "page_click"), cdp |= !strcmp(names[i], "cdp_click");
	ok(page && !cdp, "the planner is offered page_click, not cdp_click");
	char *text = ksr_goal_offer_text(&o);
	ok(text && strstr(text, "- page_click {name}: page targets: \"search\"") &&
	           !strstr(text, "cdp_click"),
	   "the offer names page_click: %s", text ? text : "");
	free(text);
	static const char *const said[] = {"page_click", "cdp_click"};
	for (size_t i = 0; i < 2; i++) {
		char json[128];
		snprintf(json, sizeof json, "{\"tool\":\"%s\",\"name\":\"search\"}", said[i]);
		cJSON *a = cJSON_Parse(json);
		ksr_goal_choice c;
		ok(ksr_goal_validate(&o, a, &c, why, sizeof why) == 0 &&
		           c.tool == KSR_GOAL_PAGE_CLICK && !strcmp(c.name, "search"),
		   "%s is accepted as the page tool (%s)", said[i], why);
		cJSON_Delete(a);
	}
	ok(validate(&o, "{\"tool\":\"cdp_click\",\"name\":\"#q\"}", why, sizeof why) < 0 &&
	           strstr(why, "page_click: \"#q\" is not one of the offered"),
	   "the older name is held to the same offer: %s", why);
	ksr_goal_offer_clear(&o);
}

static void plan_yaml(void)
{
	ksr_plan_out *p = ksr_plan_out_new();
	const char *a1[] = {"click: \"press\""}, *p1[] = {"shell: \"grep -q pressed /tmp/r\""};
	ksr_plan_out_step(p, a1, 1, p1, 1);
	char *q = ksr_plan_quote("say \"hi\"\n");
	ok(!strcmp(q, "\"say \\\"hi\\\"\\n\""), "quoted as a YAML double-quoted scalar: %s", q);
	free(q);
	char *y = ksr_plan_out_render(p, "press it\nonce", false);
	ok(strstr(y, "plan:\n  - click: \"press\"\n    post:\n      - shell: ") != NULL,
	   "rendered as a plan: list");
	ok(strstr(y, "# goal: press it once") && strstr(y, "needs no model"), "the header says so");
	free(y);
	ksr_plan_out_free(p);
	ksr_plan_out_free(NULL);
}

static void fingerprint(void)
{
	ksr_image *a = ksr_image_new(100, 100), *b = ksr_image_new(100, 100);
	uint8_t fa[KSR_GCACHE_FP_CELLS], fb[KSR_GCACHE_FP_CELLS];
	for (int i = 0; i < 100 * 100 * 3; i++)
		a->rgb[i] = b->rgb[i] = (uint8_t)(i % 7 * 30);
	ksr_gcache_fingerprint(a, 50, 50, KSR_GCACHE_RADIUS, fa);
	ksr_gcache_fingerprint(b, 50, 50, KSR_GCACHE_RADIUS, fb);
	ok(ksr_gcache_fp_distance(fa, fb) == 0, "the same screen: distance 0");
	memset(b->rgb, 255, 100 * 100 * 3);
	ksr_gcache_fingerprint(b, 50, 50, KSR_GCACHE_RADIUS, fb);
	ok(ksr_gcache_fp_distance(fa, fb) > 50, "another screen: far");
	ksr_gcache_fingerprint(a, 0, 0, KSR_GCACHE_RADIUS, fa); /* clipped at the corner */
	ok(1, "a point at the corner is clipped, not read out of bounds");
	ksr_image_free(a);
	ksr_image_free(b);
}

int main(void)
{
	coordinates();
	selectors();
	answers();
	page_click_name();
	plan_yaml();
	fingerprint();
	return tap_done();
}
