/* Reading the end of a log as text fit for a person and for JSON: diagnosis's
 * log tails and crash signatures, and the last lines of an app that exited
 * (the app wait, inspect --launch, record --launch). */
#include "ksr/log_tail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksr/error.h"
#include "ksr/strbuf.h"

/* The last max bytes of a regular file (a FIFO or device named in logs: must
 * not block the run). */
char *ksr_log_read_tail(const char *path, size_t max, size_t *len, bool *whole, int *errnum)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*errnum = errno;
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*errnum = S_ISREG(st.st_mode) ? errno : EINVAL;
		close(fd);
		return NULL;
	}
	off_t start = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
	char *buf = ksr_xmalloc(max + 1);
	ssize_t n = pread(fd, buf, max, start);
	*errnum = errno;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	*whole = start == 0;
	return buf;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80             ? 1
	             : (s[0] & 0xe0) == 0xc0 ? 2
	             : (s[0] & 0xf0) == 0xe0 ? 3
	             : (s[0] & 0xf8) == 0xf0 ? 4
	                                     : 0;
	if (!len || len > n || (len == 2 && s[0] < 0xc2) || (len == 4 && s[0] > 0xf4))
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((len == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
	    (len == 3 && s[0] == 0xed && s[1] > 0x9f) ||
	    (len == 4 && s[0] == 0xf0 && s[1] < 0x90) || (len == 4 && s[0] == 0xf4 && s[1] > 0x8f))
		return 0; /* overlong or surrogate or beyond U+10FFFF */
	return len;
}

/* Text fit for JSON and a person: from a line start (unless the whole file was
 * read), control characters and invalid UTF-8 shown as '?'. In place. */
char *ksr_log_clean_text(char *buf, size_t len, bool whole)
{
	size_t i = 0, o = 0;
	if (!whole) {
		char *nl = memchr(buf, '\n', len);
		if (nl)
			i = (size_t)(nl - buf) + 1;
	}
	while (i < len) {
		unsigned char c = (unsigned char)buf[i];
		size_t k = utf8_seq((const unsigned char *)buf + i, len - i);
		if (k == 1 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t')
			k = 0;
		if (!k) {
			buf[o++] = '?';
			i++;
			continue;
		}
		memmove(buf + o, buf + i, k);
		o += k;
		i += k;
	}
	buf[o] = '\0';
	return buf;
}

#define LAST_LINES_READ 4096 /* read for the last lines; a reason shows far less */

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* From the end of text, the lines that fit in max bytes (at least one). */
static char *join_last_lines(const char *text, size_t max)
{
	const char *start = text + strlen(text), *cut = start;
	size_t used = 0, lines = 0;
	for (const char *end = start; end > text;) {
		const char *line = end;
		while (line > text && line[-1] != '\n')
			line--;
		size_t n = (size_t)(end - line);
		if (!blank(line, n)) {
			if (lines && used + n + 3 > max)
				break;
			used += n + (lines ? 3 : 0);
			lines++;
			cut = line;
		}
		end = line > text ? line - 1 : line;
	}
	ksr_strbuf b = {0};
	for (const char *line = cut; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		if (!blank(line, n)) {
			if (b.len)
				ksr_strbuf_add(&b, " | ");
			ksr_strbuf_addn(&b, line, n);
		}
		line += n + (end ? 1 : 0);
	}
	if (b.len)
		return ksr_strbuf_take(&b);
	ksr_strbuf_free(&b);
	return NULL;
}

char *ksr_log_last_lines(const char *path, size_t max)
{
	size_t len = 0;
	bool whole = false;
	int errnum = 0;
	char *buf = ksr_log_read_tail(path, LAST_LINES_READ, &len, &whole, &errnum);
	if (!buf)
		return NULL;
	char *lines = join_last_lines(ksr_log_clean_text(buf, len, whole), max);
	free(buf);
	return lines;
}
