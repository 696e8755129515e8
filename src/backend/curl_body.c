/* The one libcurl body sink (backend/curl_priv.h), used by CDP discovery and
 * the model client. */
#include "backend/curl_priv.h"

size_t ksr_curl_body_cb(char *data, size_t size, size_t nmemb, void *ud)
{
	ksr_curl_body *b = ud;
	size_t n = size * nmemb;
	if (b->buf.len + n > b->max)
		return 0;
	ksr_strbuf_addn(&b->buf, data, n);
	return n;
}
