/* libcurl for the backends (backend/http/curl.h): loaded on first use, and
 * the one body sink, used by CDP discovery and the model client. */
#include "backend/http/curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static ksr_curl_api api;
static char load_error[KSR_ERR_MSG_MAX];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(load_error, sizeof load_error, "cannot load libcurl.so.4: %s", dlerror());
		return;
	}
	void *sym;
#define KSR_CURL_LOAD(name, fn)                                                                    \
	if ((sym = dlsym(lib, #fn)) == NULL && !load_error[0])                                     \
		snprintf(load_error, sizeof load_error, "libcurl.so.4 has no " #fn);               \
	memcpy(&api.name, &sym, sizeof sym);
	KSR_CURL_FUNCS(KSR_CURL_LOAD)
#undef KSR_CURL_LOAD
}

const ksr_curl_api *ksr_curl(ksr_err *err)
{
	pthread_once(&load_once, load);
	if (load_error[0]) {
		ksr_err_set(err, "%s", load_error);
		return NULL;
	}
	return &api;
}

size_t ksr_curl_body_cb(char *data, size_t size, size_t nmemb, void *ud)
{
	ksr_curl_body *b = ud;
	size_t n = size * nmemb;
	if (b->buf.len + n > b->max)
		return 0;
	ksr_strbuf_addn(&b->buf, data, n);
	return n;
}
