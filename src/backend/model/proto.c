/* Model configuration from the environment and the three wire protocols'
 * request bodies. The API key goes into a header only (model.c), never into a
 * body, a URL or a message. */
#include "ksr/model.h"
#include "ksr/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/model/priv.h"

static const char *const role_names[] = {"judge", "grounder", "planner"};
static const char *const role_vars[] = {"JUDGE", "GROUNDER", "PLANNER"};
static const char *const api_names[] = {"openai", "anthropic", "ollama"};
static const char *const coords_names[] = {"pixel", "smart-resize", "norm1000", "norm1000-yx",
                                           "norm1"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *ksr_model_role_name(ksr_model_role r)
{
	return (unsigned)r < COUNT(role_names) ? role_names[r] : "unknown";
}

const char *ksr_model_api_name(ksr_model_api a)
{
	return (unsigned)a < COUNT(api_names) ? api_names[a] : "unknown";
}

const char *ksr_model_coords_name(ksr_model_coords c)
{
	return (unsigned)c < COUNT(coords_names) ? coords_names[c] : "unknown";
}

/* -1 if unknown */
static int ksr_model_coords_from_name(const char *name)
{
	for (size_t i = 0; name && i < COUNT(coords_names); i++)
		if (!strcmp(name, coords_names[i]))
			return (int)i;
	return -1;
}

static int api_from_name(const char *name)
{
	for (size_t i = 0; name && i < COUNT(api_names); i++)
		if (!strcmp(name, api_names[i]))
			return (int)i;
	return -1;
}

const char *ksr_model_answer_name(ksr_model_answer a)
{
	return a == KSR_MODEL_YES ? "yes" : a == KSR_MODEL_NO ? "no" : "inconclusive";
}

void ksr_model_redact(char *text, size_t cap, const char *key)
{
	static const char mark[] = "[redacted]";
	size_t klen = key ? strlen(key) : 0;
	if (!text || klen < 4)
		return; /* a 1-3 character "key" would redact ordinary words */
	char *p;
	while ((p = strstr(text, key)) != NULL) {
		size_t tail = strlen(p + klen);
		size_t used = (size_t)(p - text) + sizeof mark - 1;
		if (used + tail + 1 > cap)
			tail = used < cap ? cap - used - 1 : 0;
		memmove(p + sizeof mark - 1, p + klen, tail);
		memcpy(p, mark, sizeof mark - 1);
		p[sizeof mark - 1 + tail] = '\0';
	}
}

/* ---- configuration ----------------------------------------------------------- */

static const char *env_get(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

typedef struct lookup {
	ksr_model_getenv_fn get;
	void *ctx;
	const char *role;
} lookup;

/* The role's variable if set and not empty, else the shared one; *own says which. */
static const char *value(const lookup *l, const char *field, bool *own, char *name, size_t len)
{
	snprintf(name, len, "KASM_RUNTIME_%s_%s", l->role, field);
	const char *v = l->get(name, l->ctx);
	if (own)
		*own = v && *v;
	if (v && *v)
		return v;
	/* The shared names: KASM_RUNTIME_MODEL, KASM_RUNTIME_MODEL_URL... */
	if (!strcmp(field, "MODEL"))
		snprintf(name, len, "KASM_RUNTIME_MODEL");
	else
		snprintf(name, len, "KASM_RUNTIME_MODEL_%s", field);
	v = l->get(name, l->ctx);
	return v && *v ? v : NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* The endpoint posted to: a base URL gets the protocol's path appended. */
static void endpoint(ksr_model_config *cfg, const char *base)
{
	static const char *const dflt[] = {"https://api.openai.com/v1", "https://api.anthropic.com",
	                                   "http://127.0.0.1:11434"};
	char b[sizeof cfg->url];
	snprintf(b, sizeof b, "%s", base ? base : dflt[cfg->api]);
	size_t n = strlen(b);
	while (n && b[n - 1] == '/')
		b[--n] = '\0';
	const char *path = "";
	if (cfg->api == KSR_MODEL_API_OPENAI && !ends_with(b, "/chat/completions"))
		path = "/chat/completions";
	else if (cfg->api == KSR_MODEL_API_ANTHROPIC && !ends_with(b, "/messages"))
		path = ends_with(b, "/v1") ? "/messages" : "/v1/messages";
	else if (cfg->api == KSR_MODEL_API_OLLAMA && !ends_with(b, "/api/chat"))
		path = "/api/chat";
	snprintf(cfg->url, sizeof cfg->url, "%s%s", b, path);
}

static int fill(const lookup *l, ksr_model_config *cfg, ksr_err *err)
{
	char name[96];
	const char *v = value(l, "API", NULL, name, sizeof name);
	int api = v ? api_from_name(v) : KSR_MODEL_API_OPENAI;
	if (api < 0)
		return ksr_err_set(err, "%s=%s: expected openai, anthropic or ollama", name, v);
	cfg->api = (ksr_model_api)api;
	v = value(l, "COORDS", NULL, name, sizeof name);
	int c = v ? ksr_model_coords_from_name(v) : KSR_COORDS_PIXEL;
	if (c < 0)
		return ksr_err_set(err,
		                   "%s=%s: expected pixel, smart-resize, norm1000, norm1000-yx or "
		                   "norm1",
		                   name, v);
	cfg->coords = (ksr_model_coords)c;
	bool own_url = false, own_key = false;
	const char *url = value(l, "URL", &own_url, name, sizeof name);
	if (url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return ksr_err_set(err, "%s: expected an http:// or https:// URL", name);
	endpoint(cfg, url);
	const char *key = value(l, "API_KEY", &own_key, name, sizeof name);
	/* The shared key belongs to the shared URL: a role pointed elsewhere
	 * (a local grounder) must not receive it. */
	if (key && (own_key || !own_url))
		snprintf(cfg->api_key, sizeof cfg->api_key, "%s", key);
	return 1;
}

int ksr_model_config_load(ksr_model_role role, ksr_model_getenv_fn get, void *ctx,
                          ksr_model_config *cfg, ksr_err *err)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->role = role;
	if ((unsigned)role >= COUNT(role_vars))
		return ksr_err_set(err, "unknown model role");
	lookup l = {.get = get ? get : env_get, .ctx = ctx, .role = role_vars[role]};
	char name[96];
	const char *model = value(&l, "MODEL", NULL, name, sizeof name);
	if (!model)
		return 0;
	snprintf(cfg->model, sizeof cfg->model, "%s", model);
	return fill(&l, cfg, err);
}

/* ---- request bodies ------------------------------------------------------------ */

static cJSON *openai_body(const ksr_model_config *cfg, const char *b64, const char *prompt,
                          const cJSON *schema)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", cfg->model);
	cJSON_AddNumberToObject(root, "temperature", 0);
	cJSON_AddNumberToObject(root, "max_tokens", 1024);
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON *content = cJSON_AddArrayToObject(msg, "content");
	cJSON *text = cJSON_CreateObject();
	cJSON_AddStringToObject(text, "type", "text");
	cJSON_AddStringToObject(text, "text", prompt);
	cJSON_AddItemToArray(content, text);
	if (b64) {
		char *url = ksr_xasprintf("data:image/png;base64,%s", b64);
		cJSON *img = cJSON_CreateObject();
		cJSON_AddStringToObject(img, "type", "image_url");
		cJSON_AddStringToObject(cJSON_AddObjectToObject(img, "image_url"), "url", url);
		cJSON_AddItemToArray(content, img);
		free(url);
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "messages"), msg);
	cJSON *rf = cJSON_AddObjectToObject(root, "response_format");
	cJSON_AddStringToObject(rf, "type", "json_schema");
	cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
	cJSON_AddStringToObject(js, "name", "answer");
	cJSON_AddItemToObject(js, "schema", cJSON_Duplicate(schema, true));
	return root;
}

static cJSON *anthropic_body(const ksr_model_config *cfg, const char *b64, const char *prompt,
                             const cJSON *schema)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", cfg->model);
	cJSON_AddNumberToObject(root, "max_tokens", 1024);
	cJSON_AddNumberToObject(root, "temperature", 0);
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON *content = cJSON_AddArrayToObject(msg, "content");
	if (b64) {
		cJSON *img = cJSON_CreateObject();
		cJSON_AddStringToObject(img, "type", "image");
		cJSON *src = cJSON_AddObjectToObject(img, "source");
		cJSON_AddStringToObject(src, "type", "base64");
		cJSON_AddStringToObject(src, "media_type", "image/png");
		cJSON_AddStringToObject(src, "data", b64);
		cJSON_AddItemToArray(content, img);
	}
	cJSON *text = cJSON_CreateObject();
	cJSON_AddStringToObject(text, "type", "text");
	cJSON_AddStringToObject(text, "text", prompt);
	cJSON_AddItemToArray(content, text);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "messages"), msg);
	/* Structure by forced tool use: the answer is the tool's input. */
	cJSON *tool = cJSON_CreateObject();
	cJSON_AddStringToObject(tool, "name", "answer");
	cJSON_AddStringToObject(tool, "description", "Give the answer.");
	cJSON_AddItemToObject(tool, "input_schema", cJSON_Duplicate(schema, true));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "tools"), tool);
	cJSON *choice = cJSON_AddObjectToObject(root, "tool_choice");
	cJSON_AddStringToObject(choice, "type", "tool");
	cJSON_AddStringToObject(choice, "name", "answer");
	return root;
}

static cJSON *ollama_body(const ksr_model_config *cfg, const char *b64, const char *prompt,
                          const cJSON *schema)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", cfg->model);
	cJSON_AddFalseToObject(root, "stream");
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON_AddStringToObject(msg, "content", prompt);
	if (b64)
		cJSON_AddItemToArray(cJSON_AddArrayToObject(msg, "images"),
		                     cJSON_CreateString(b64));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "messages"), msg);
	cJSON_AddItemToObject(root, "format", cJSON_Duplicate(schema, true));
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(root, "options"), "temperature", 0);
	return root;
}

char *ksr_model_request_body(const ksr_model_config *cfg, const char *b64, const char *prompt,
                             const cJSON *schema)
{
	cJSON *root = cfg->api == KSR_MODEL_API_ANTHROPIC ? anthropic_body(cfg, b64, prompt, schema)
	              : cfg->api == KSR_MODEL_API_OLLAMA  ? ollama_body(cfg, b64, prompt, schema)
	                                                  : openai_body(cfg, b64, prompt, schema);
	char *s = ksr_json_print(root, false);
	cJSON_Delete(root);
	return s;
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ksr_model_base64(const unsigned char *data, size_t len)
{
	char *out = ksr_xmalloc((len + 2) / 3 * 4 + 1), *o = out;
	size_t i = 0;
	for (; i + 2 < len; i += 3) {
		unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];
		*o++ = b64chars[v >> 18 & 63], *o++ = b64chars[v >> 12 & 63];
		*o++ = b64chars[v >> 6 & 63], *o++ = b64chars[v & 63];
	}
	if (i < len) {
		unsigned v =
		        (unsigned)data[i] << 16 | (i + 1 < len ? (unsigned)data[i + 1] << 8 : 0);
		*o++ = b64chars[v >> 18 & 63], *o++ = b64chars[v >> 12 & 63];
		*o++ = i + 1 < len ? b64chars[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}
