/* The model client's pure parts: the JSON inside a model's text, the three
 * protocols' envelopes, yes/no, locations in the five coordinate conventions
 * (boxes at their centre) mapped back to screen pixels, configuration from the
 * environment with per-role overrides, key redaction, and downscaling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/model.h"
#include "tap.h"

static const char *json_str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

static void extracted(const char *text, const char *key, const char *want, const char *what)
{
	cJSON *j = ksr_model_extract_json(text);
	is_str(j ? json_str(j, key) : NULL, want, what);
	cJSON_Delete(j);
}

static void test_extract(void)
{
	extracted("{\"a\":\"plain\"}", "a", "plain", "plain object");
	extracted("```json\n{\"a\": \"fenced\"}\n```", "a", "fenced", "code fence");
	extracted("Sure! Here you go: {\"a\": \"prose\"} Hope it helps {\"a\": \"later\"}", "a",
	          "prose", "prose around: the first object");
	extracted("<think>maybe {\"a\": \"thought\"}</think>{\"a\": \"answer\"}", "a", "answer",
	          "think block dropped");
	extracted("half a thought {\"a\": \"x\"}</think> {\"a\": \"after\"}", "a", "after",
	          "lone </think>: what came before it is dropped");
	extracted("{\"a\": \"with } and { in a string \\\" quoted\"}", "a",
	          "with } and { in a string \" quoted", "braces inside strings");
	extracted("{not json} then {\"a\": \"second\"}", "a", "second",
	          "an unparsable first object is skipped");
	extracted("{\"o\": {\"a\": \"inner\"}, \"a\": \"outer\"}", "a", "outer",
	          "nested: the outer");
	cJSON *j = ksr_model_extract_json("no object here [1, 2]");
	ok(j == NULL, "no object -> NULL");
	j = ksr_model_extract_json("<think>{\"a\": 1} never closed");
	ok(j == NULL, "an unclosed think block hides what follows");
	ok(ksr_model_extract_json(NULL) == NULL, "NULL text");
	j = ksr_model_extract_json("{\"a\": 1");
	ok(j == NULL, "unbalanced -> NULL");
}

static void envelope(ksr_model_api api, const char *body, const char *want, const char *what)
{
	ksr_err err = {0};
	cJSON *a = ksr_model_parse_response(api, body, &err);
	is_str(a ? json_str(a, "answer") : NULL, want, what);
	cJSON_Delete(a);
}

static void test_envelopes(void)
{
	envelope(KSR_MODEL_API_OPENAI,
	         "{\"choices\":[{\"message\":{\"content\":\"{\\\"answer\\\":\\\"yes\\\"}\"}}]}",
	         "yes", "openai: string content");
	envelope(KSR_MODEL_API_OPENAI,
	         "{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok: "
	         "{\\\"answer\\\":\\\"no\\\"}\"}]}}]}",
	         "no", "openai: content parts");
	envelope(KSR_MODEL_API_ANTHROPIC,
	         "{\"content\":[{\"type\":\"text\",\"text\":\"calling\"},{\"type\":\"tool_use\","
	         "\"name\":\"answer\",\"input\":{\"answer\":\"yes\"}}]}",
	         "yes", "anthropic: the forced tool's input");
	envelope(KSR_MODEL_API_ANTHROPIC,
	         "{\"content\":[{\"type\":\"text\",\"text\":\"```{\\\"answer\\\":\\\"no\\\"}```\"}]"
	         "}",
	         "no", "anthropic: a text block");
	envelope(KSR_MODEL_API_OLLAMA,
	         "{\"message\":{\"content\":\"{\\\"answer\\\":\\\"yes\\\"}\"}}", "yes",
	         "ollama: message.content");
	ksr_err err = {0};
	ok(!ksr_model_parse_response(KSR_MODEL_API_OPENAI, "<html>502</html>", &err) &&
	           strstr(err.msg, "not a JSON object"),
	   "a body that is not JSON: %s", err.msg);
	ok(!ksr_model_parse_response(KSR_MODEL_API_OPENAI,
	                             "{\"choices\":[{\"message\":{\"content\":\"I can't\"}}]}",
	                             &err) &&
	           strstr(err.msg, "no JSON object"),
	   "prose only: %s", err.msg);
	ok(!ksr_model_parse_response(KSR_MODEL_API_OLLAMA, "{}", &err), "an empty envelope");
}

static void test_yes_no(void)
{
	const char *in[] = {"true",     "false",     "\"yes\"", "\"No\"",
	                    "\"TRUE\"", "\"maybe\"", "1",       "null"};
	const ksr_model_answer want[] = {KSR_MODEL_YES,          KSR_MODEL_NO,
	                                 KSR_MODEL_YES,          KSR_MODEL_NO,
	                                 KSR_MODEL_YES,          KSR_MODEL_INCONCLUSIVE,
	                                 KSR_MODEL_INCONCLUSIVE, KSR_MODEL_INCONCLUSIVE};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		cJSON *v = cJSON_Parse(in[i]);
		is_str(ksr_model_answer_name(ksr_model_parse_yes_no(v)),
		       ksr_model_answer_name(want[i]), in[i]);
		cJSON_Delete(v);
	}
}

/* Parse a location on a 1280x720 image; -2 x when the result code is not 1. */
static int loc(const char *json, ksr_model_coords c, int *x, int *y)
{
	cJSON *a = cJSON_Parse(json);
	*x = *y = -2;
	int r = ksr_model_parse_location(a, c, 1280, 720, x, y);
	cJSON_Delete(a);
	return r;
}

static void is_loc(const char *json, ksr_model_coords c, int wx, int wy, const char *what)
{
	int x, y;
	int r = loc(json, c, &x, &y);
	ok(r == 1 && x == wx && y == wy, "%s: %s -> (%d, %d), want (%d, %d) [r=%d]", what, json, x,
	   y, wx, wy, r);
}

static void test_locations(void)
{
	is_loc("{\"found\":true,\"x\":100,\"y\":50}", KSR_COORDS_PIXEL, 100, 50, "pixel x/y");
	is_loc("{\"x\":100.7,\"y\":50.2}", KSR_COORDS_PIXEL, 100, 50, "pixel: fractions floor");
	is_loc("{\"point\":[10,20]}", KSR_COORDS_PIXEL, 10, 20, "pixel point array");
	is_loc("{\"bbox_2d\":[100,100,200,300]}", KSR_COORDS_PIXEL, 150, 200, "box -> centre");
	is_loc("{\"x\":1300,\"y\":-20}", KSR_COORDS_PIXEL, 1279, 0, "small overshoot clamped");
	is_loc("{\"x\":500,\"y\":500}", KSR_COORDS_NORM1000, 640, 360, "norm1000");
	is_loc("{\"x\":1000,\"y\":1000}", KSR_COORDS_NORM1000, 1279, 719, "norm1000 edge clamped");
	is_loc("{\"point\":[250,750]}", KSR_COORDS_NORM1000_YX, 960, 180,
	       "norm1000-yx: arrays y first");
	is_loc("{\"box_2d\":[100,200,300,400]}", KSR_COORDS_NORM1000_YX, 384, 144,
	       "norm1000-yx box [ymin,xmin,ymax,xmax] -> centre");
	is_loc("{\"x\":750,\"y\":250}", KSR_COORDS_NORM1000_YX, 960, 180,
	       "norm1000-yx: named fields taken as named");
	is_loc("{\"x\":0.25,\"y\":0.5}", KSR_COORDS_NORM1, 320, 360, "norm1");
	is_loc("{\"bbox\":[0.1,0.1,0.3,0.5]}", KSR_COORDS_NORM1, 256, 216, "norm1 box centre");
	/* smart-resize: the model saw 1288x728 (multiples of 28) */
	is_loc("{\"x\":644,\"y\":364}", KSR_COORDS_SMART_RESIZE, 640, 360, "smart-resize");
	int x, y;
	is_int(loc("{\"found\":false,\"x\":0,\"y\":0}", KSR_COORDS_PIXEL, &x, &y), 0,
	       "found false -> not there");
	is_int(loc("{\"found\":\"no\"}", KSR_COORDS_PIXEL, &x, &y), 0, "found \"no\"");
	is_int(loc("{\"x\":2600,\"y\":10}", KSR_COORDS_PIXEL, &x, &y), -1,
	       "far outside the image (a convention mismatch) -> invalid");
	is_int(loc("{\"x\":640,\"y\":360}", KSR_COORDS_NORM1, &x, &y), -1,
	       "pixels read as norm1 -> invalid, not clamped to a corner");
	is_int(loc("{\"x\":\"12\",\"y\":3}", KSR_COORDS_PIXEL, &x, &y), -1, "a string -> invalid");
	is_int(loc("{\"point\":[1,2,3]}", KSR_COORDS_PIXEL, &x, &y), -1, "3 numbers -> invalid");
	is_int(loc("{\"found\":true}", KSR_COORDS_PIXEL, &x, &y), -1, "no location -> invalid");
	is_int(ksr_model_parse_location(NULL, KSR_COORDS_PIXEL, 10, 10, &x, &y), -1, "NULL");

	int rw, rh;
	ksr_model_smart_resize(1280, 720, &rw, &rh);
	ok(rw == 1288 && rh == 728, "smart_resize 1280x720 -> %dx%d", rw, rh);
	ksr_model_smart_resize(10, 10, &rw, &rh);
	ok(rw == 56 && rh == 56, "smart_resize tiny -> %dx%d (min pixels)", rw, rh);
	ksr_model_smart_resize(8000, 6000, &rw, &rh);
	ok(rw % 28 == 0 && rh % 28 == 0 && (long)rw * rh <= 12845056,
	   "smart_resize huge -> %dx%d (max pixels)", rw, rh);
}

static void test_to_screen(void)
{
	ksr_model_image m = {.screen_w = 1600, .screen_h = 900, .w = 1280, .h = 720};
	int sx, sy;
	ksr_model_to_screen(&m, 640, 360, &sx, &sy);
	ok(sx == 800 && sy == 450, "centre maps to centre: (%d, %d)", sx, sy);
	ksr_model_to_screen(&m, 0, 0, &sx, &sy);
	ok(sx == 0 && sy == 0, "origin: (%d, %d)", sx, sy);
	ksr_model_to_screen(&m, 1279, 719, &sx, &sy);
	ok(sx == 1599 && sy == 899, "last pixel: (%d, %d)", sx, sy);
	ksr_model_image same = {.screen_w = 1280, .screen_h = 720, .w = 1280, .h = 720};
	ksr_model_to_screen(&same, 123, 456, &sx, &sy);
	ok(sx == 123 && sy == 456, "unscaled: identity");
}

/* ---- configuration ----------------------------------------------------------- */

static const char *const *env_table;

static const char *table_get(const char *name, void *ctx)
{
	(void)ctx;
	for (const char *const *p = env_table; p && *p; p += 2)
		if (!strcmp(p[0], name))
			return p[1];
	return NULL;
}

static int load(ksr_model_role role, const char *const *table, ksr_model_config *cfg, ksr_err *err)
{
	env_table = table;
	return ksr_model_config_load(role, table_get, NULL, cfg, err);
}

static void test_config(void)
{
	ksr_model_config c;
	ksr_err err = {0};
	const char *const none[] = {NULL};
	is_int(load(KSR_MODEL_JUDGE, none, &c, &err), 0, "no KASM_RUNTIME_MODEL: no model");

	const char *const shared[] = {"KASM_RUNTIME_MODEL",
	                              "qwen",
	                              "KASM_RUNTIME_MODEL_URL",
	                              "http://gpu:8000/v1/",
	                              "KASM_RUNTIME_MODEL_API_KEY",
	                              "sk-shared",
	                              "KASM_RUNTIME_GROUNDER_MODEL",
	                              "ui-tars",
	                              "KASM_RUNTIME_GROUNDER_COORDS",
	                              "smart-resize",
	                              NULL};
	is_int(load(KSR_MODEL_JUDGE, shared, &c, &err), 1, "shared config");
	is_str(c.model, "qwen", "judge: the shared model");
	is_str(c.url, "http://gpu:8000/v1/chat/completions", "openai: path appended");
	is_str(ksr_model_api_name(c.api), "openai", "default api");
	is_str(ksr_model_coords_name(c.coords), "pixel", "default coords");
	is_str(c.api_key, "sk-shared", "the shared key with the shared URL");
	is_int(load(KSR_MODEL_GROUNDER, shared, &c, &err), 1, "grounder");
	is_str(c.model, "ui-tars", "grounder: its own model");
	is_str(ksr_model_coords_name(c.coords), "smart-resize", "grounder: its own coords");
	is_str(c.api_key, "sk-shared", "same URL: the shared key");

	const char *const own_url[] = {"KASM_RUNTIME_MODEL",
	                               "m",
	                               "KASM_RUNTIME_MODEL_API_KEY",
	                               "sk-shared",
	                               "KASM_RUNTIME_GROUNDER_URL",
	                               "http://127.0.0.1:11434",
	                               "KASM_RUNTIME_GROUNDER_API",
	                               "ollama",
	                               NULL};
	is_int(load(KSR_MODEL_GROUNDER, own_url, &c, &err), 1, "grounder with its own URL");
	is_str(c.url, "http://127.0.0.1:11434/api/chat", "ollama: /api/chat");
	is_str(c.api_key, "", "another URL never gets the shared key");
	is_int(load(KSR_MODEL_JUDGE, own_url, &c, &err), 1, "judge beside it");
	is_str(c.url, "https://api.openai.com/v1/chat/completions", "default URL per API");

	const char *const anth[] = {"KASM_RUNTIME_JUDGE_MODEL",
	                            "claude",
	                            "KASM_RUNTIME_MODEL_API",
	                            "anthropic",
	                            "KASM_RUNTIME_JUDGE_API_KEY",
	                            "sk-ant",
	                            NULL};
	is_int(load(KSR_MODEL_JUDGE, anth, &c, &err), 1, "a role-only model");
	is_str(c.url, "https://api.anthropic.com/v1/messages", "anthropic default URL");
	is_str(c.api_key, "sk-ant", "the role's own key");
	is_int(load(KSR_MODEL_GROUNDER, anth, &c, &err), 0, "other roles: no model");

	const char *const bad_api[] = {"KASM_RUNTIME_MODEL", "m", "KASM_RUNTIME_PLANNER_API",
	                               "gemini", NULL};
	is_int(load(KSR_MODEL_PLANNER, bad_api, &c, &err), -1, "unknown API");
	ok(strstr(err.msg, "KASM_RUNTIME_PLANNER_API=gemini") != NULL, "names it: %s", err.msg);
	const char *const bad_coords[] = {"KASM_RUNTIME_MODEL", "m", "KASM_RUNTIME_MODEL_COORDS",
	                                  "percent", NULL};
	is_int(load(KSR_MODEL_GROUNDER, bad_coords, &c, &err), -1, "unknown coords");
	ok(strstr(err.msg, "KASM_RUNTIME_MODEL_COORDS") != NULL, "names it: %s", err.msg);
	const char *const bad_url[] = {"KASM_RUNTIME_MODEL", "m", "KASM_RUNTIME_MODEL_URL",
	                               "ftp://x", NULL};
	is_int(load(KSR_MODEL_JUDGE, bad_url, &c, &err), -1, "a URL that is not http(s)");
	const char *const full[] = {"KASM_RUNTIME_MODEL", "m", "KASM_RUNTIME_MODEL_URL",
	                            "http://h/v1/chat/completions", NULL};
	load(KSR_MODEL_JUDGE, full, &c, &err);
	is_str(c.url, "http://h/v1/chat/completions", "a full endpoint is kept");
	const char *const anth_v1[] = {"KASM_RUNTIME_MODEL",
	                               "m",
	                               "KASM_RUNTIME_MODEL_API",
	                               "anthropic",
	                               "KASM_RUNTIME_MODEL_URL",
	                               "http://h/v1",
	                               NULL};
	load(KSR_MODEL_JUDGE, anth_v1, &c, &err);
	is_str(c.url, "http://h/v1/messages", "anthropic base ending in /v1");
}

static void test_redact(void)
{
	char text[128] = "HTTP 401: Incorrect API key provided: sk-secret-123, sk-secret-123!";
	ksr_model_redact(text, sizeof text, "sk-secret-123");
	is_str(text, "HTTP 401: Incorrect API key provided: [redacted], [redacted]!",
	       "every occurrence");
	char small[24] = "key=abcdefghijklmnop";
	ksr_model_redact(small, sizeof small, "abcdefghijklmnop");
	is_str(small, "key=[redacted]", "shorter");
	char tight[16] = "ab k3y! tail";
	ksr_model_redact(tight, sizeof tight, "k3y!");
	ok(strlen(tight) < sizeof tight && !strstr(tight, "k3y!"), "longer than the key, cut: %s",
	   tight);
	char keep[32] = "the word abc stays";
	ksr_model_redact(keep, sizeof keep, "abc");
	is_str(keep, "the word abc stays", "a key under 4 characters is not a key");
	ksr_model_redact(keep, sizeof keep, NULL);
	is_str(keep, "the word abc stays", "no key");
}

/* ---- the image sent ------------------------------------------------------------ */

static void test_downscale(void)
{
	int w, h;
	ksr_image_fit_size(1600, 900, 1280, &w, &h);
	ok(w == 1280 && h == 720, "1600x900 -> %dx%d", w, h);
	ksr_image_fit_size(1280, 720, 1280, &w, &h);
	ok(w == 1280 && h == 720, "already small: unchanged");
	ksr_image_fit_size(100, 3000, 1280, &w, &h);
	ok(w == 43 && h == 1280, "tall: long edge is the height (%dx%d)", w, h);

	ksr_image *src = ksr_image_new(4, 2);
	for (int i = 0; i < 4 * 2; i++) /* left half black, right half white */
		memset(src->rgb + i * 3, (i % 4) >= 2 ? 255 : 0, 3);
	src->rgb[0] = 200; /* one red-ish pixel in the left block */
	ksr_err err = {0};
	ksr_image *d = ksr_image_downscale(src, 2, &err);
	ok(d && d->w == 2 && d->h == 1, "4x2 -> 2x1");
	ok(d && d->rgb[0] == 50 && d->rgb[1] == 0 && d->rgb[3] == 255,
	   "area average: (%d,%d) and %d", d ? d->rgb[0] : -1, d ? d->rgb[1] : -1,
	   d ? d->rgb[3] : -1);
	ksr_image_free(d);
	ok(!ksr_image_downscale(NULL, 10, &err), "NULL image: error");

	ksr_image *big = ksr_image_new(1600, 900);
	ksr_model_image m;
	ok(ksr_model_image_prepare(big, KSR_MODEL_MAX_EDGE, &m, &err) == 0, "prepare");
	ksr_image *back = ksr_image_decode_png(m.png, m.len, &err);
	ok(back && back->w == 1280 && back->h == 720 && m.w == 1280 && m.screen_w == 1600,
	   "the PNG sent is the downscaled size and remembers the screen's");
	ksr_image_free(back);
	ksr_model_image_clear(&m);
	ksr_model_image_clear(NULL);
	ksr_image_free(big);
	ksr_image_free(src);
}

int main(void)
{
	test_extract();
	test_envelopes();
	test_yes_no();
	test_locations();
	test_to_screen();
	test_config();
	test_redact();
	test_downscale();
	return tap_done();
}
