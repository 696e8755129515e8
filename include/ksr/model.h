/* Vision models (docs/vision-models.md): one client, three wire protocols (OpenAI Chat
 * Completions, Anthropic Messages, Ollama /api/chat), configured from the
 * environment per role. The client knows nothing about stages or verdicts: it
 * asks one question about one image and says yes / no / inconclusive, where
 * something is, or what the screen shows. Errors are values; the API key never
 * appears in any message this module produces. */
#ifndef KSR_MODEL_H
#define KSR_MODEL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksr/deadline.h"
#include "ksr/error.h"
#include "ksr/image.h"

typedef enum ksr_model_role {
	KSR_MODEL_JUDGE,
	KSR_MODEL_GROUNDER,
	KSR_MODEL_PLANNER,
} ksr_model_role;

typedef enum ksr_model_api {
	KSR_MODEL_API_OPENAI,
	KSR_MODEL_API_ANTHROPIC,
	KSR_MODEL_API_OLLAMA,
} ksr_model_api;

/* How a grounder writes a location (docs/vision-models.md has the table). */
typedef enum ksr_model_coords {
	KSR_COORDS_PIXEL,        /* pixels of the image sent */
	KSR_COORDS_SMART_RESIZE, /* pixels of the image resized to multiples of 28 (Qwen2.5-VL) */
	KSR_COORDS_NORM1000,     /* 0..1000 of width and height */
	KSR_COORDS_NORM1000_YX,  /* 0..1000, arrays y first (Gemini) */
	KSR_COORDS_NORM1,        /* 0..1 */
} ksr_model_coords;

#define KSR_MODEL_MAX_EDGE 1280 /* long edge of a screenshot sent to a model */

typedef struct ksr_model_config {
	ksr_model_role role;
	ksr_model_api api;
	ksr_model_coords coords;
	char model[256];
	char url[1024];     /* the endpoint actually posted to */
	char api_key[1024]; /* "" = none; never printed */
} ksr_model_config;

/* Where configuration comes from: getenv, or a table in the unit tests. */
typedef const char *(*ksr_model_getenv_fn)(const char *name, void *ctx);

/* Read KASM_RUNTIME_MODEL{,_URL,_API,_API_KEY,_COORDS}, each overridden by
 * KASM_RUNTIME_<ROLE>_* (get NULL: getenv). A role's own URL never gets the
 * shared key (it may point to another server). 1 configured, 0 no model for
 * this role, -1 invalid (err names the variable). */
int ksr_model_config_load(ksr_model_role role, ksr_model_getenv_fn get, void *ctx,
                          ksr_model_config *cfg, ksr_err *err);

const char *ksr_model_role_name(ksr_model_role r); /* "judge", "grounder", "planner" */
const char *ksr_model_api_name(ksr_model_api a);
const char *ksr_model_coords_name(ksr_model_coords c);

/* Replace every occurrence of key (len >= 4) in text with "[redacted]", in place. */
void ksr_model_redact(char *text, size_t cap, const char *key);

/* ---- the image sent --------------------------------------------------------- */

/* A screenshot prepared once for a model: downscaled (long edge <= max_edge),
 * PNG-encoded once; the same bytes are sent and the same size maps answers
 * back to screen pixels. */
typedef struct ksr_model_image {
	int screen_w, screen_h; /* the captured image */
	int w, h;               /* the image sent */
	unsigned char *png;
	size_t len;
} ksr_model_image;

int ksr_model_image_prepare(const ksr_image *screen, int max_edge, ksr_model_image *out,
                            ksr_err *err);
void ksr_model_image_clear(ksr_model_image *m); /* NULL-safe */

/* ---- calls ------------------------------------------------------------------ */

typedef enum ksr_model_answer {
	KSR_MODEL_YES,
	KSR_MODEL_NO,
	KSR_MODEL_INCONCLUSIVE, /* unreachable, refused, unparsable: never a failure by itself */
} ksr_model_answer;

const char *ksr_model_answer_name(ksr_model_answer a); /* "yes", "no", "inconclusive" */

/* What one logical call cost (retries included), for the model_call event. */
typedef struct ksr_model_usage {
	bool ok;         /* a usable answer came back */
	int attempts;    /* HTTP requests made */
	int http_status; /* of the last response, 0 = none */
	int64_t ms;      /* wall time, retries and back-off included */
	char error[300]; /* why not ok (redacted) */
} ksr_model_usage;

/* Does the statement hold for the screen? reason gets the model's reason. */
ksr_model_answer ksr_model_judge(const ksr_model_config *cfg, const ksr_model_image *img,
                                 const char *statement, ksr_deadline d, char *reason,
                                 size_t reason_len, ksr_model_usage *usage);

/* Where is the described element? YES with *sx, *sy in screen pixels (and
 * *ix, *iy in pixels of the image sent); NO when the model says it is not
 * there; INCONCLUSIVE otherwise. */
ksr_model_answer ksr_model_ground(const ksr_model_config *cfg, const ksr_model_image *img,
                                  const char *description, ksr_deadline d, int *ix, int *iy,
                                  int *sx, int *sy, ksr_model_usage *usage);

/* First look: rendered? an error showing? Each answer YES/NO, or both
 * INCONCLUSIVE. */
void ksr_model_first_look(const ksr_model_config *cfg, const ksr_model_image *img, ksr_deadline d,
                          ksr_model_answer *rendered, ksr_model_answer *error_showing, char *reason,
                          size_t reason_len, ksr_model_usage *usage);

/* A short description of the screen (diagnosis). 0, or -1 (usage says why). */
int ksr_model_describe(const ksr_model_config *cfg, const ksr_model_image *img, ksr_deadline d,
                       char *text, size_t text_len, ksr_model_usage *usage);

/* A neutral description of the screen (the goal loop's planner reads it
 * instead of the screenshot). 0, or -1 (usage says why). */
int ksr_model_describe_screen(const ksr_model_config *cfg, const ksr_model_image *img,
                              ksr_deadline d, char *text, size_t text_len, ksr_model_usage *usage);

/* The planner's turn: a text-only call (no image) whose answer is one tool
 * choice as strict JSON {"tool", "name"?, "text"?, "expect"?, "seconds"?,
 * "outcome"?, "claim"?} (json_schema / forced tool use / format, as for the
 * other questions; the same retries, deadline and redaction); "tool" is one
 * of tools (the goal loop's, from the vocabulary). prompt holds the
 * goal, the screen description, the history and the offered tools. NULL with
 * usage->error when no usable object came back. */
cJSON *ksr_model_plan_turn(const ksr_model_config *cfg, const char *prompt,
                           const char *const *tools, size_t n_tools, ksr_deadline d,
                           ksr_model_usage *usage);

/* ---- parsing (model_parse.c; pure, unit-tested) ------------------------------ */

/* The first balanced JSON object in a model's text that parses, after dropping
 * <think>...</think> blocks (and anything before a lone </think>); code fences
 * and prose around it are ignored. NULL if none. */
cJSON *ksr_model_extract_json(const char *text);

/* The assistant's text or structured answer from a protocol's response body:
 * an object (tool input, already JSON) or the parsed first object of its text. */
cJSON *ksr_model_parse_response(ksr_model_api api, const char *body, ksr_err *err);

/* yes/no from "yes"/"no"/true/false/"true"/"false" (case-insensitive);
 * INCONCLUSIVE for anything else. */
ksr_model_answer ksr_model_parse_yes_no(const cJSON *v);

/* A location in a grounder's answer (x/y fields, point/coordinate arrays, or a
 * box: bbox/box/bbox_2d/box_2d, clicked at its centre) mapped from the
 * convention to pixels of the w x h image sent. 1 found, 0 the model said it
 * is not there (found: false), -1 missing, not numbers or out of range
 * (more than 10% outside; a smaller overshoot is clamped). */
int ksr_model_parse_location(const cJSON *answer, ksr_model_coords coords, int w, int h, int *px,
                             int *py);

/* The size Qwen2.5-VL's smart_resize gives an image (multiples of 28, pixels
 * between 56*56 and 12845056). */
void ksr_model_smart_resize(int w, int h, int *rw, int *rh);

/* A pixel of the image sent, mapped to the screen it was scaled from. */
void ksr_model_to_screen(const ksr_model_image *img, int ix, int iy, int *sx, int *sy);

#endif
