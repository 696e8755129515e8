/* The one libcurl body sink (CURLOPT_WRITEFUNCTION) of the backends: a reply
 * body appended into a ksr_strbuf, refused past a byte cap. */
#ifndef KSR_BACKEND_CURL_PRIV_H
#define KSR_BACKEND_CURL_PRIV_H

#include <stddef.h>

#include "ksr/strbuf.h"

typedef struct ksr_curl_body {
	ksr_strbuf buf; /* the body so far, NUL-terminated; buf.p is NULL until bytes come */
	size_t max;     /* a body longer than this many bytes fails the transfer */
} ksr_curl_body;

/* CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA a ksr_curl_body *. A chunk that
 * would take the body past max is refused (returns 0), so curl_easy_perform
 * fails with CURLE_WRITE_ERROR; the body keeps what came before it. */
size_t ksr_curl_body_cb(char *data, size_t size, size_t nmemb, void *ud);

#endif
