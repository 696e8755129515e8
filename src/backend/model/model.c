/* The model client: one HTTP POST per attempt (libcurl), retries with
 * back-off, and the four questions the runtime asks (judge, ground, first
 * look, describe). Every attempt is bounded by the caller's deadline (connect
 * and total timeouts) and aborted on SIGTERM through the progress callback.
 * Error text is redacted: a server may echo the key back in its error body. */
#include "ksr/model.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend/http/curl.h"
#include "backend/model/priv.h"

#define MAX_ATTEMPTS    4
#define MAX_PARSE_RETRY 1
#define BACKOFF_MS      500   /* doubled each retry when no retry-after is given */
#define CONNECT_MAX_MS  10000 /* a server that does not accept within this is down */
#define BODY_MAX        (4 << 20)
#define SNIPPET         160

typedef struct reply {
	ksr_curl_body body; /* body.buf.p: the reply body, NULL when none came */
	long status;
	int64_t retry_after_ms; /* -1: none */
	CURLcode rc;
	char curl_err[CURL_ERROR_SIZE];
} reply;

/* retry-after: delay-seconds or an HTTP-date. */
static int64_t parse_retry_after(const char *v)
{
	char *end;
	double s = strtod(v, &end);
	if (end != v && s >= 0)
		return (int64_t)(s * 1000);
	struct tm tm = {0};
	if (!strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm))
		return -1;
	int64_t diff = (int64_t)(timegm(&tm) - time(NULL)) * 1000;
	return diff > 0 ? diff : 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
	reply *r = ud;
	size_t n = size * nmemb;
	if (n > 12 && !strncasecmp(data, "retry-after:", 12)) {
		char v[128];
		snprintf(v, sizeof v, "%.*s", (int)(n - 12 < 127 ? n - 12 : 127), data + 12);
		r->retry_after_ms = parse_retry_after(v + strspn(v, " \t"));
	}
	return n;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)ud, (void)a, (void)b, (void)c, (void)d;
	return ksr_cancelled(); /* non-zero aborts the transfer */
}

static struct curl_slist *headers(const ksr_curl_api *cu, const ksr_model_config *cfg)
{
	struct curl_slist *h = cu->slist_append(NULL, "Content-Type: application/json");
	char line[sizeof cfg->api_key + 40];
	if (cfg->api == KSR_MODEL_API_ANTHROPIC) {
		h = cu->slist_append(h, "anthropic-version: 2023-06-01");
		if (cfg->api_key[0]) {
			snprintf(line, sizeof line, "x-api-key: %s", cfg->api_key);
			h = cu->slist_append(h, line);
		}
	} else if (cfg->api_key[0]) {
		snprintf(line, sizeof line, "Authorization: Bearer %s", cfg->api_key);
		h = cu->slist_append(h, line);
	}
	explicit_bzero(line, sizeof line);
	return h;
}

static void post(const ksr_model_config *cfg, const char *body, ksr_deadline d, reply *r)
{
	long ms = (long)ksr_deadline_remaining_ms(d);
	ms = ms > 0 ? ms : 1;
	ksr_err load = {0};
	const ksr_curl_api *cu = ksr_curl(&load);
	if (!cu) {
		r->rc = CURLE_FAILED_INIT;
		snprintf(r->curl_err, sizeof r->curl_err, "%s", load.msg);
		return;
	}
	CURL *h = cu->easy_init();
	if (!h) {
		r->rc = CURLE_FAILED_INIT;
		return;
	}
	struct curl_slist *hdr = headers(cu, cfg);
	cu->easy_setopt(h, CURLOPT_URL, cfg->url);
	cu->easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	cu->easy_setopt(h, CURLOPT_POSTFIELDS, body);
	cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
	cu->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms < CONNECT_MAX_MS ? ms : CONNECT_MAX_MS);
	cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, ksr_curl_body_cb);
	cu->easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
	cu->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	cu->easy_setopt(h, CURLOPT_HEADERDATA, r);
	cu->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	cu->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	cu->easy_setopt(h, CURLOPT_ERRORBUFFER, r->curl_err);
	cu->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	r->rc = cu->easy_perform(h);
	cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	cu->easy_cleanup(h);
	cu->slist_free_all(hdr);
}

static bool retryable_status(long s)
{
	return s == 429 || s >= 500;
}

/* One sentence about a failed attempt: the transport error or the status
 * with the start of the body (servers say why there). */
static void describe_failure(const ksr_model_config *cfg, const reply *r, ksr_model_usage *u)
{
	const ksr_curl_api *cu = r->curl_err[0] ? NULL : ksr_curl(NULL);
	if (r->rc != CURLE_OK)
		snprintf(u->error, sizeof u->error, "%s",
		         r->curl_err[0] ? r->curl_err
		         : cu           ? cu->easy_strerror(r->rc)
		                        : "libcurl failed");
	else
		snprintf(u->error, sizeof u->error, "HTTP %ld: %.*s", r->status, SNIPPET,
		         r->body.buf.p ? r->body.buf.p : "");
	for (char *p = u->error; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	ksr_model_redact(u->error, sizeof u->error, cfg->api_key);
}

/* Sleep before the next attempt; false when there is no time for it. */
static bool back_off(const reply *r, int attempt, ksr_deadline d, ksr_model_usage *u)
{
	int64_t wait = (int64_t)BACKOFF_MS << (attempt - 1);
	if (r->retry_after_ms >= 0)
		wait = r->retry_after_ms;
	if (wait >= ksr_deadline_remaining_ms(d)) {
		size_t n = strlen(u->error);
		snprintf(u->error + n, sizeof u->error - n, " (no time left to retry after %.1f s)",
		         (double)wait / 1000);
		return false;
	}
	return ksr_sleep_ms(wait) == KSR_WAIT_TIMEOUT;
}

typedef enum verdict { DONE, RETRY, GIVE_UP } verdict;

static verdict judge_reply(const ksr_model_config *cfg, reply *r, int *parse_fails, cJSON **out,
                           ksr_model_usage *u)
{
	u->http_status = (int)r->status;
	if (ksr_cancelled()) {
		snprintf(u->error, sizeof u->error, "cancelled");
		return GIVE_UP;
	}
	if (r->rc != CURLE_OK || r->status < 200 || r->status > 299) {
		describe_failure(cfg, r, u);
		return r->rc != CURLE_OK || retryable_status(r->status) ? RETRY : GIVE_UP;
	}
	ksr_err err = {0};
	*out = ksr_model_parse_response(cfg->api, r->body.buf.p, &err);
	if (*out)
		return DONE;
	snprintf(u->error, sizeof u->error, "unusable answer: %.250s", err.msg);
	ksr_model_redact(u->error, sizeof u->error, cfg->api_key);
	return ++*parse_fails <= MAX_PARSE_RETRY ? RETRY : GIVE_UP;
}

/* Ask a question about an image; the answer must be a JSON object matching
 * schema (used for structured output where the API offers it). Retries on
 * 429/5xx/transport errors with back-off honouring retry-after, never on
 * 400/401/403/404; one retry for an unparsable answer; everything bounded by
 * d and cancellable. NULL with u->error on failure. */
static cJSON *ksr_model_ask(const ksr_model_config *cfg, const ksr_model_image *img,
                            const char *prompt, const cJSON *schema, ksr_deadline d,
                            ksr_model_usage *u)
{
	memset(u, 0, sizeof *u);
	int64_t t0 = ksr_now_ms();
	char *b64 = img && img->png ? ksr_model_base64(img->png, img->len) : NULL;
	char *body = ksr_model_request_body(cfg, b64, prompt, schema);
	free(b64);
	cJSON *out = NULL;
	int parse_fails = 0;
	for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
		if (ksr_deadline_passed(d)) {
			snprintf(u->error + strlen(u->error), sizeof u->error - strlen(u->error),
			         "%sno time left for the call", u->error[0] ? "; " : "");
			break;
		}
		reply r = {.body = {.max = BODY_MAX}, .retry_after_ms = -1};
		post(cfg, body, d, &r);
		u->attempts = attempt;
		verdict v = judge_reply(cfg, &r, &parse_fails, &out, u);
		bool again = v == RETRY && attempt < MAX_ATTEMPTS && back_off(&r, attempt, d, u);
		ksr_strbuf_free(&r.body.buf);
		if (!again)
			break;
	}
	free(body);
	u->ok = out != NULL;
	if (u->ok)
		u->error[0] = '\0';
	u->ms = ksr_now_ms() - t0;
	return out;
}

/* ---- the image --------------------------------------------------------------- */

int ksr_model_image_prepare(const ksr_image *screen, int max_edge, ksr_model_image *out,
                            ksr_err *err)
{
	memset(out, 0, sizeof *out);
	ksr_image *small = ksr_image_downscale(screen, max_edge, err);
	if (!small)
		return -1;
	int rc = ksr_image_encode_png(small, &out->png, &out->len, err);
	out->screen_w = screen->w, out->screen_h = screen->h;
	out->w = small->w, out->h = small->h;
	ksr_image_free(small);
	return rc;
}

void ksr_model_image_clear(ksr_model_image *m)
{
	if (!m)
		return;
	free(m->png);
	memset(m, 0, sizeof *m);
}

/* ---- the questions ------------------------------------------------------------ */

static cJSON *schema_of(const char *text)
{
	return cJSON_Parse(text);
}

static void copy_reason(const cJSON *a, const char *key, char *buf, size_t len)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(a, key));
	if (buf && len)
		snprintf(buf, len, "%s", s ? s : "");
}

ksr_model_answer ksr_model_judge(const ksr_model_config *cfg, const ksr_model_image *img,
                                 const char *statement, ksr_deadline d, char *reason,
                                 size_t reason_len, ksr_model_usage *u)
{
	cJSON *schema = schema_of(
	        "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\",\"enum\":["
	        "\"yes\",\"no\"]},\"reason\":{\"type\":\"string\"}},\"required\":[\"answer\","
	        "\"reason\"],\"additionalProperties\":false}");
	char *prompt = ksr_xasprintf(
	        "This is a screenshot of a desktop application under test. Does this statement "
	        "hold for the screenshot?\n\nStatement: %s\n\nAnswer with a JSON object: "
	        "{\"answer\": \"yes\" or \"no\", \"reason\": one short sentence saying what you "
	        "see}.",
	        statement);
	cJSON *a = ksr_model_ask(cfg, img, prompt, schema, d, u);
	ksr_model_answer ans = ksr_model_parse_yes_no(cJSON_GetObjectItem(a, "answer"));
	copy_reason(a, "reason", reason, reason_len);
	if (a && ans == KSR_MODEL_INCONCLUSIVE) {
		u->ok = false;
		snprintf(u->error, sizeof u->error, "the answer is neither yes nor no");
	}
	cJSON_Delete(a);
	cJSON_Delete(schema);
	free(prompt);
	return ans;
}

static const char *convention_text(ksr_model_coords c)
{
	switch (c) {
	case KSR_COORDS_NORM1000:
	case KSR_COORDS_NORM1000_YX:
		return "x and y normalised to 0..1000 of the image width and height";
	case KSR_COORDS_NORM1:
		return "x and y as fractions 0..1 of the image width and height";
	default:
		return "x and y in pixels of the image, origin at the top left";
	}
}

ksr_model_answer ksr_model_ground(const ksr_model_config *cfg, const ksr_model_image *img,
                                  const char *description, ksr_deadline d, int *ix, int *iy,
                                  int *sx, int *sy, ksr_model_usage *u)
{
	cJSON *schema = schema_of(
	        "{\"type\":\"object\",\"properties\":{\"found\":{\"type\":\"boolean\"},\"x\":{"
	        "\"type\":\"number\"},\"y\":{\"type\":\"number\"}},\"required\":[\"found\",\"x\","
	        "\"y\"],\"additionalProperties\":false}");
	char *prompt = ksr_xasprintf(
	        "This is a %dx%d screenshot of a desktop application. Find this element: %s\n\n"
	        "Answer with a JSON object {\"found\": true or false, \"x\": number, \"y\": "
	        "number} giving the point to click at the centre of the element, with %s.",
	        img->w, img->h, description, convention_text(cfg->coords));
	cJSON *a = ksr_model_ask(cfg, img, prompt, schema, d, u);
	int r = a ? ksr_model_parse_location(a, cfg->coords, img->w, img->h, ix, iy) : -1;
	if (a && r < 0) {
		u->ok = false;
		snprintf(u->error, sizeof u->error,
		         "the answer holds no usable location for the %s convention",
		         ksr_model_coords_name(cfg->coords));
	}
	if (r > 0)
		ksr_model_to_screen(img, *ix, *iy, sx, sy);
	cJSON_Delete(a);
	cJSON_Delete(schema);
	free(prompt);
	return r > 0 ? KSR_MODEL_YES : r == 0 ? KSR_MODEL_NO : KSR_MODEL_INCONCLUSIVE;
}

void ksr_model_first_look(const ksr_model_config *cfg, const ksr_model_image *img, ksr_deadline d,
                          ksr_model_answer *rendered, ksr_model_answer *error_showing, char *reason,
                          size_t reason_len, ksr_model_usage *u)
{
	cJSON *schema = schema_of(
	        "{\"type\":\"object\",\"properties\":{\"rendered\":{\"type\":\"boolean\"},"
	        "\"error_showing\":{\"type\":\"boolean\"},\"reason\":{\"type\":\"string\"}},"
	        "\"required\":[\"rendered\",\"error_showing\",\"reason\"],"
	        "\"additionalProperties\":false}");
	const char *prompt =
	        "This is a screenshot of a desktop session just after an application was "
	        "started. Judge two things: rendered = the application's window shows its "
	        "normal user interface (not blank, not black, not a frozen splash screen); "
	        "error_showing = an error message, crash report or failure dialog is visible. "
	        "Answer with a JSON object {\"rendered\": true or false, \"error_showing\": true "
	        "or false, \"reason\": one short sentence}.";
	cJSON *a = ksr_model_ask(cfg, img, prompt, schema, d, u);
	*rendered = ksr_model_parse_yes_no(cJSON_GetObjectItem(a, "rendered"));
	*error_showing = ksr_model_parse_yes_no(cJSON_GetObjectItem(a, "error_showing"));
	if (*rendered == KSR_MODEL_INCONCLUSIVE || *error_showing == KSR_MODEL_INCONCLUSIVE) {
		*rendered = *error_showing = KSR_MODEL_INCONCLUSIVE;
		if (a) {
			u->ok = false;
			snprintf(u->error, sizeof u->error,
			         "the answer lacks rendered/error_showing as yes or no");
		}
	}
	copy_reason(a, "reason", reason, reason_len);
	cJSON_Delete(a);
	cJSON_Delete(schema);
}

static int describe_with(const ksr_model_config *cfg, const ksr_model_image *img,
                         const char *prompt, ksr_deadline d, char *text, size_t text_len,
                         ksr_model_usage *u)
{
	cJSON *schema = schema_of("{\"type\":\"object\",\"properties\":{\"description\":{\"type\":"
	                          "\"string\"}},\"required\":[\"description\"],"
	                          "\"additionalProperties\":false}");
	cJSON *a = ksr_model_ask(cfg, img, prompt, schema, d, u);
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(a, "description"));
	if (a && !s) {
		u->ok = false;
		snprintf(u->error, sizeof u->error, "the answer has no description");
	}
	snprintf(text, text_len, "%s", s ? s : "");
	cJSON_Delete(a);
	cJSON_Delete(schema);
	return s ? 0 : -1;
}

int ksr_model_describe(const ksr_model_config *cfg, const ksr_model_image *img, ksr_deadline d,
                       char *text, size_t text_len, ksr_model_usage *u)
{
	return describe_with(
	        cfg, img,
	        "A test of a desktop application failed and this is the screen at that moment. "
	        "Describe in two or three sentences what the screen shows, naming any error "
	        "message, dialog or sign of failure word for word. Answer with a JSON object "
	        "{\"description\": \"...\"}.",
	        d, text, text_len, u);
}

int ksr_model_describe_screen(const ksr_model_config *cfg, const ksr_model_image *img,
                              ksr_deadline d, char *text, size_t text_len, ksr_model_usage *u)
{
	return describe_with(
	        cfg, img,
	        "This is a screenshot of a desktop application under test. Describe what the "
	        "screen shows in at most five sentences for someone who cannot see it: the "
	        "windows and dialogs, their titles, the visible controls with their labels and "
	        "states (checked, disabled...), text in fields and any message, word for word. "
	        "Answer with a JSON object {\"description\": \"...\"}.",
	        d, text, text_len, u);
}

/* The planner's answer: one tool a turn (the caller names the tools). Names
 * and text only; nothing here can carry a coordinate (the loop also rejects
 * one written into a string). */
static const char plan_schema[] =
        "{\"type\":\"object\",\"properties\":{"
        "\"tool\":{\"type\":\"string\",\"enum\":[]},"
        "\"name\":{\"type\":\"string\"},\"text\":{\"type\":\"string\"},"
        "\"expect\":{\"type\":\"string\"},\"seconds\":{\"type\":\"number\"},"
        "\"outcome\":{\"type\":\"string\",\"enum\":[\"success\",\"failure\"]},"
        "\"claim\":{\"type\":\"string\"},\"thought\":{\"type\":\"string\"}},"
        "\"required\":[\"tool\"],\"additionalProperties\":false}";

cJSON *ksr_model_plan_turn(const ksr_model_config *cfg, const char *prompt,
                           const char *const *tools, size_t n_tools, ksr_deadline d,
                           ksr_model_usage *u)
{
	cJSON *schema = schema_of(plan_schema);
	cJSON *names = cJSON_GetObjectItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(schema, "properties"), "tool"), "enum");
	for (size_t i = 0; i < n_tools; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(tools[i]));
	cJSON *a = ksr_model_ask(cfg, NULL, prompt, schema, d, u);
	if (a && !cJSON_IsString(cJSON_GetObjectItem(a, "tool"))) {
		u->ok = false;
		snprintf(u->error, sizeof u->error, "the answer names no tool");
		cJSON_Delete(a);
		a = NULL;
	}
	cJSON_Delete(schema);
	return a;
}
