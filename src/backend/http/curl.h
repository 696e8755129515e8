/* The one libcurl body sink (CURLOPT_WRITEFUNCTION) of the backends: a reply
 * body appended into a ksr_strbuf, refused past a byte cap. */
#ifndef KSR_BACKEND_CURL_PRIV_H
#define KSR_BACKEND_CURL_PRIV_H

#include <curl/curl.h>
#include <stddef.h>

#include "ksr/error.h"
#include "ksr/strbuf.h"

/* libcurl is loaded (dlopen) the first time a transfer is made, not linked:
 * linked, it and the libraries it pulls in (GnuTLS, LDAP, Kerberos, RTMP,
 * SSH...: 25 shared objects, 3.7 MiB resident) were mapped by every run,
 * though only CDP discovery and the model client use it. The members are
 * named without the curl_ prefix so that curl's type-checking macros for
 * curl_easy_setopt/getinfo do not apply to them (they check a direct call). */
#define KSR_CURL_FUNCS(X)                                                                          \
	X(easy_init, curl_easy_init)                                                               \
	X(easy_setopt, curl_easy_setopt)                                                           \
	X(easy_perform, curl_easy_perform)                                                         \
	X(easy_getinfo, curl_easy_getinfo)                                                         \
	X(easy_cleanup, curl_easy_cleanup)                                                         \
	X(easy_strerror, curl_easy_strerror)                                                       \
	X(slist_append, curl_slist_append)                                                         \
	X(slist_free_all, curl_slist_free_all)

typedef struct ksr_curl_api {
#define KSR_CURL_MEMBER(name, fn) __typeof__(&fn) name;
	KSR_CURL_FUNCS(KSR_CURL_MEMBER)
#undef KSR_CURL_MEMBER
} ksr_curl_api;

/* libcurl's functions, loaded on the first call (thread-safe); NULL with the
 * reason in err when libcurl.so.4 cannot be loaded (the setup's fault). */
const ksr_curl_api *ksr_curl(ksr_err *err);

typedef struct ksr_curl_body {
	ksr_strbuf buf; /* the body so far, NUL-terminated; buf.p is NULL until bytes come */
	size_t max;     /* a body longer than this many bytes fails the transfer */
} ksr_curl_body;

/* CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA a ksr_curl_body *. A chunk that
 * would take the body past max is refused (returns 0), so curl_easy_perform
 * fails with CURLE_WRITE_ERROR; the body keeps what came before it. */
size_t ksr_curl_body_cb(char *data, size_t size, size_t nmemb, void *ud);

#endif
