/* ${VAR} and ${VAR:-default} from the environment, so one scenario can serve
 * several images (Chrome, Brave, Edge). `$$`, `$NAME` without braces and a `$`
 * at the end are left exactly as written: commands in shell: steps keep their
 * own shell variables, and `$$` is not an escape (the shell's PID stays $$). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scn_internal.h"

typedef struct sbuf {
	char *p;
	size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = ksr_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static bool name_char(char ch, bool first)
{
	return ch == '_' || isalpha((unsigned char)ch) || (!first && isdigit((unsigned char)ch));
}

/* in points just after "${"; returns the position after the closing brace, or NULL. */
static const char *expand_one(const char *in, sbuf *b, ksr_err *err)
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
		else
			sb_add(b, val, strlen(val)), result = end + 1;
	} else if (strncmp(rest, ":-", 2) == 0) {
		/* As in sh: the default also replaces an empty value. */
		if (val && *val)
			sb_add(b, val, strlen(val));
		else
			sb_add(b, rest + 2, (size_t)(end - rest - 2));
		result = end + 1;
	} else {
		ksr_err_set(err, "unsupported form in ${%s...}: only ${%s} and ${%s:-default}",
		            name, name, name);
	}
	free(name);
	return result;
}

char *scn_expand_vars(const char *in, ksr_err *err)
{
	sbuf b = {0};
	sb_add(&b, "", 0);
	while (*in) {
		const char *d = strchr(in, '$');
		if (!d) {
			sb_add(&b, in, strlen(in));
			break;
		}
		sb_add(&b, in, (size_t)(d - in));
		if (d[1] == '$') { /* "$$" stays, and so does a following "{" */
			sb_add(&b, d, 2);
			in = d + 2;
		} else if (d[1] == '{') {
			in = expand_one(d + 2, &b, err);
			if (!in) {
				free(b.p);
				return NULL;
			}
		} else {
			sb_add(&b, d, 1);
			in = d + 1;
		}
	}
	return b.p;
}
