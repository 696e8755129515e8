/* Secrets replaced by "[secret NAME]" (include/ksr/redact.h). */
#include "ksr/redact.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"
#include "ksr/strbuf.h"

extern char **environ;

#define MAX_SECRETS        64
#define CREDENTIAL_MIN_LEN 8

typedef struct secret {
	char *name, *value;
	size_t len;
} secret;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static secret table[MAX_SECRETS];
static size_t n_secrets;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

bool ksr_redact_add(const char *name, const char *value)
{
	if (!value || !*value)
		return true;
	size_t len = strlen(value);
	if (len < KSR_SECRET_MIN_LEN)
		return false;
	pthread_mutex_lock(&lock);
	bool known = false;
	for (size_t i = 0; i < n_secrets && !known; i++)
		known = !strcmp(table[i].value, value);
	if (!known && n_secrets < MAX_SECRETS) {
		/* Longest first: a secret that contains another is replaced whole. */
		size_t at = n_secrets;
		while (at > 0 && table[at - 1].len < len) {
			table[at] = table[at - 1];
			at--;
		}
		table[at] = (secret){ksr_xstrdup(name ? name : "?"), ksr_xstrdup(value), len};
		n_secrets++;
	}
	pthread_mutex_unlock(&lock);
	return true;
}

bool ksr_redact_is_credential(const char *entry, size_t n)
{
	static const char suffix[] = "_API_KEY";
	size_t k = sizeof suffix - 1;
	if (n > 13 + k && !strncmp(entry, "KASM_RUNTIME_", 13) &&
	    !strncmp(entry + n - k, suffix, k))
		return true;
	return n == 22 && !strncmp(entry, "KASM_RUNTIME_MCP_TOKEN", 22);
}

static void add_named(const char *list)
{
	char *copy = ksr_xstrdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		ksr_redact_add(t, getenv(t));
	free(copy);
}

static void from_env(void)
{
	for (char **e = environ; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (!(*e)[n] || !ksr_redact_is_credential(*e, n))
			continue;
		char *name = ksr_xstrndup(*e, n);
		/* A credential is redacted from 8 characters on: a placeholder such
		 * as "none" or "test" (a local model needs no key) would otherwise
		 * replace ordinary words, verdicts among them. */
		if (strlen(*e + n + 1) >= CREDENTIAL_MIN_LEN)
			ksr_redact_add(name, *e + n + 1);
		free(name);
	}
	const char *list = getenv("KASM_RUNTIME_SECRETS");
	if (list)
		add_named(list);
}

void ksr_redact_from_env(void)
{
	pthread_once(&env_once, from_env);
}

/* The first place at or after p where a secret starts, and which one (the
 * table is longest first: at one place the longest secret wins). */
static const char *next_secret(const char *p, size_t *which)
{
	const char *first = NULL;
	for (size_t i = 0; i < n_secrets; i++) {
		const char *q = strstr(p, table[i].value);
		if (q && (!first || q < first)) {
			first = q;
			*which = i;
		}
	}
	return first;
}

char *ksr_redact(const char *s)
{
	if (!s)
		return NULL;
	pthread_mutex_lock(&lock);
	/* Every string of every event comes here: without a secret in it (the
	 * usual case, and always without secrets), nothing is copied. */
	size_t i = 0;
	const char *q = n_secrets ? next_secret(s, &i) : NULL;
	if (!q) {
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	ksr_strbuf b = {0};
	const char *p = s;
	for (; q; q = next_secret(p, &i)) {
		ksr_strbuf_addn(&b, p, (size_t)(q - p));
		ksr_strbuf_addf(&b, "[secret %s]", table[i].name);
		p = q + table[i].len;
	}
	ksr_strbuf_add(&b, p);
	pthread_mutex_unlock(&lock);
	return ksr_strbuf_take(&b);
}

/* Fields whose values are the runtime's own words (an event's kind, a verdict,
 * an outcome), never outside text: a secret that happens to be one of those
 * words must not break what reads them. */
static bool vocabulary_field(const char *key)
{
	static const char *const keys[] = {"event", "verdict", "outcome",
	                                   "stage", "status",  "kind"};
	for (size_t i = 0; key && i < sizeof keys / sizeof keys[0]; i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

void ksr_redact_json(cJSON *o)
{
	for (; o; o = o->next) {
		bool skip = !cJSON_IsString(o) || vocabulary_field(o->string);
		char *r = skip ? NULL : ksr_redact(o->valuestring);
		if (r) {
			cJSON_free(o->valuestring);
			o->valuestring = cJSON_malloc(strlen(r) + 1);
			strcpy(o->valuestring, r);
			free(r);
		}
		ksr_redact_json(o->child);
	}
}

void ksr_redact_clear(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_secrets; i++) {
		free(table[i].name);
		free(table[i].value);
	}
	n_secrets = 0;
	pthread_mutex_unlock(&lock);
}
