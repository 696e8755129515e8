/* ${VAR} and ${VAR:-default} from the environment, so one scenario can serve
 * several images (Chrome, Brave, Edge). `$$`, `$NAME` without braces and a `$`
 * at the end are left exactly as written: commands in shell: steps keep their
 * own shell variables, and `$$` is not an escape (the shell's PID stays $$). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/strbuf.h"
#include "scenario/scn_internal.h"

static bool name_char(char ch, bool first)
{
	return ch == '_' || isalpha((unsigned char)ch) || (!first && isdigit((unsigned char)ch));
}

/* The value of ${name} would take the expanded scenario past its cap: refused
 * here, before it is copied (a 128 KiB value used 5,000 times is 640 MiB). */
static bool fits(const ksr_strbuf *b, size_t add, size_t budget, const char *name, bool *over,
                 ksr_err *err)
{
	if (b->len + add <= budget)
		return true;
	ksr_err_set(err,
	            "expanding ${%s} (%zu bytes) makes the scenario larger than %d bytes after "
	            "${VAR} expansion (all values together)",
	            name, add, SCN_MAX_EXPANDED_BYTES);
	*over = true;
	return false;
}

/* in points just after "${"; returns the position after the closing brace, or NULL. */
static const char *expand_one(const char *in, ksr_strbuf *b, size_t budget, bool *over,
                              ksr_err *err)
{
	const char *end = strchr(in, '}');
	if (!end)
		return ksr_err_set(err, "unterminated ${ (missing '}')"), NULL;
	size_t n = 0;
	while (name_char(in[n], n == 0))
		n++;
	if (n == 0)
		return ksr_err_set(err, "'${' must be followed by a variable name"), NULL;
	char *name = ksr_xstrndup(in, n);
	const char *rest = in + n, *val = getenv(name);
	const char *result = NULL;
	if (rest == end) {
		if (!val)
			ksr_err_set(err,
			            "environment variable '%s' is not set (write ${%s:-default} "
			            "to give a default)",
			            name, name);
		else if (fits(b, strlen(val), budget, name, over, err))
			ksr_strbuf_addn(b, val, strlen(val)), result = end + 1;
	} else if (strncmp(rest, ":-", 2) == 0) {
		/* As in sh: the default also replaces an empty value. */
		const char *text = val && *val ? val : rest + 2;
		size_t n_text = val && *val ? strlen(val) : (size_t)(end - rest - 2);
		if (fits(b, n_text, budget, name, over, err))
			ksr_strbuf_addn(b, text, n_text), result = end + 1;
	} else {
		ksr_err_set(err, "unsupported form in ${%s...}: only ${%s} and ${%s:-default}",
		            name, name, name);
	}
	free(name);
	return result;
}

char *scn_expand_vars(const char *in, size_t *budget, bool *over, ksr_err *err)
{
	*over = false;
	ksr_strbuf b = {0};
	ksr_strbuf_addn(&b, "", 0);
	while (*in) {
		const char *d = strchr(in, '$');
		if (!d) {
			ksr_strbuf_addn(&b, in, strlen(in));
			break;
		}
		ksr_strbuf_addn(&b, in, (size_t)(d - in));
		if (d[1] == '$') { /* "$$" stays, and so does a following "{" */
			ksr_strbuf_addn(&b, d, 2);
			in = d + 2;
		} else if (d[1] == '{') {
			in = expand_one(d + 2, &b, *budget, over, err);
			if (!in) {
				free(b.p);
				return NULL;
			}
		} else {
			ksr_strbuf_addn(&b, d, 1);
			in = d + 1;
		}
	}
	if (b.len > *budget) { /* the text around the variables did it */
		ksr_err_set(err, "the scenario is larger than %d bytes after ${VAR} expansion",
		            SCN_MAX_EXPANDED_BYTES);
		*over = true;
		free(b.p);
		return NULL;
	}
	*budget -= b.len;
	return b.p;
}
