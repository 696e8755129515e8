/* Progress on stderr: one line per stage, step, concern and failure; on a TTY
 * a live status line shows the stage in progress. */
#include "progress.h"

#include "cli.h"
#include "ksr/redact.h"
#include "ksr/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void clear_live(progress *p)
{
	if (p->live_shown) {
		fputs("\r\033[K", stderr);
		p->live_shown = false;
	}
}

/* A line cut at the buffer's end ends on a whole UTF-8 character. */
static void cut_at_char(char *buf)
{
	size_t n = strlen(buf);
	while (n > 0 && ((unsigned char)buf[n - 1] & 0xC0) == 0x80)
		n--;
	if (n > 0 && (unsigned char)buf[n - 1] >= 0xC0)
		n--;
	buf[n] = '\0';
}

static void line(progress *p, double t_ms, const char *fmt, const char *a, const char *b,
                 const char *c)
{
	clear_live(p);
	/* Each field may hold a window's title or an app's words: its controls are
	 * written out (ksr_utf8_escape_controls), so no field can retitle the
	 * terminal, clear it or start a line of its own. */
	char *ea = ksr_utf8_escape_controls(a), *eb = ksr_utf8_escape_controls(b),
	     *ec = ksr_utf8_escape_controls(c);
	/* Events come redacted (ksr_events_emit); the line is redacted again as a
	 * whole, for a secret split across the fields it joins. */
	char buf[4096];
	if (snprintf(buf, sizeof buf, fmt, ea, eb, ec) >= (int)sizeof buf)
		cut_at_char(buf);
	free(ea), free(eb), free(ec);
	char *r = ksr_redact(buf);
	fprintf(stderr, "ksr [%6.1fs] %s\n", t_ms / 1000.0, r ? r : buf);
	free(r);
}

void progress_init(progress *p)
{
	memset(p, 0, sizeof *p);
	p->tty = isatty(STDERR_FILENO);
}

void progress_event(void *ud, const cJSON *e)
{
	progress *p = ud;
	const char *ev = str(e, "event");
	double t = num(e, "t_ms");
	char step[32];
	snprintf(step, sizeof step, "%d", (int)num(e, "index"));
	if (strcmp(ev, "stage.start") == 0 && p->tty) {
		clear_live(p);
		char *name = ksr_utf8_escape_controls(str(e, "name"));
		fprintf(stderr, "ksr [%6.1fs] %s ...", t / 1000.0, name);
		free(name);
		p->live_shown = true;
	} else if (strcmp(ev, "stage.end") == 0) {
		line(p, t, "%-20s %-11s %s", str(e, "name"), str(e, "status"), str(e, "reason"));
	} else if (strcmp(ev, "step.end") == 0) {
		line(p, t, "  step %-3s %-14s %s", step, str(e, "kind"), str(e, "status"));
	} else if (strcmp(ev, "concern") == 0) {
		line(p, t, "concern %s: %s%s", str(e, "code"), str(e, "message"), "");
	} else if (strcmp(ev, "failure") == 0) {
		line(p, t, "failure %s: %s%s", str(e, "outcome"), str(e, "reason"), "");
	} else if (strcmp(ev, "verdict") == 0) {
		line(p, t, "verdict %s (%s): %s", str(e, "verdict"), str(e, "outcome"),
		     str(e, "reason"));
	}
	fflush(stderr);
}

void progress_message(void *ud, const char *msg)
{
	progress *p = ud;
	clear_live(p);
	cli_say("kasm-session-runtime: ", "%s", msg);
}
