/* report.html: the report for a person in a browser, rendered from report.json
 * like report.md (docs/report.md#reporthtml). One self-contained file: inline
 * CSS and script, nothing fetched but the run's own files beside it (the
 * screenshots, the video). Every string that may come from a window, a page, a
 * log or a model goes through ksr_strbuf_add_html() (text and attribute values alike) or
 * ksr_strbuf_add_url() (relative link targets); a Content-Security-Policy with a fresh nonce
 * for the one script is the second fence: should text ever escape, no script
 * of its own runs and nothing outside the folder is fetched. */
#include "ksr/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ksr/json.h"
#include "ksr/strbuf.h"

typedef struct html_ctx {
	double total_ms;   /* the run's duration: the timeline's scale */
	double video_t0;   /* the video's start on the run's clock; <0: no video */
	int failing_index; /* the step that decided the verdict (0: none) */
	char nonce[33];
} html_ctx;

static const cJSON *jget(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A relative link target: bytes outside a safe set percent-encoded (a ':'
 * too, so no scheme such as javascript: can form), and never starting with
 * '/' (no path outside the folder). */
static void esc_str(ksr_strbuf *b, const cJSON *o, const char *key, const char *dflt)
{
	ksr_strbuf_add_html(b, ksr_json_str(o, key, dflt));
}

static void ms_text(ksr_strbuf *b, double ms)
{
	if (ms < 1000)
		ksr_strbuf_addf(b, "%.0f ms", ms);
	else
		ksr_strbuf_addf(b, "%.1f s", ms / 1000.0);
}

/* Any JSON value as text: strings as they are, arrays of scalars joined,
 * anything else printed compactly (then escaped by the caller's esc). */
static char *value_text(const cJSON *v)
{
	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	if (cJSON_IsArray(v)) {
		ksr_strbuf t = {0};
		const cJSON *it;
		bool scalars = true;
		cJSON_ArrayForEach(it, v) scalars &= cJSON_IsString(it) || cJSON_IsNumber(it);
		if (scalars) {
			ksr_strbuf_add(&t, "");
			cJSON_ArrayForEach(it, v)
			{
				ksr_strbuf_add(&t, t.len ? ", " : "");
				char *one = value_text(it);
				ksr_strbuf_add(&t, one);
				free(one);
			}
			return ksr_strbuf_take(&t);
		}
	}
	return ksr_json_print(v, false);
}

static void esc_value(ksr_strbuf *b, const cJSON *v)
{
	char *t = value_text(v);
	ksr_strbuf_add_html(b, t);
	free(t);
}

/* A word for a CSS class: only [a-z0-9-] survive, anything else becomes '-'. */
static void css_word(ksr_strbuf *b, const char *s)
{
	for (const char *c = s ? s : "none"; *c; c++) {
		char ch = (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : *c;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
		ksr_strbuf_addn(b, ok ? &ch : "-", 1);
	}
}

static const char STYLE[] =
        "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}"
        "main{max-width:1180px;margin:0 auto;padding:16px 20px 60px}"
        "h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 8px}"
        "header.verdict{padding:16px 20px;border-radius:8px;color:#fff;margin-bottom:14px}"
        ".v-pass{background:#1a7f37}.v-pass-with-concerns{background:#9a6700}"
        ".v-app-failed{background:#cf222e}.v-test-error{background:#6639ba}"
        "header .reason{font-size:16px;margin:4px 0 0}header .outcome{opacity:.9}"
        "dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}"
        "dl.kv dt{color:#57606a}dl.kv dd{margin:0;overflow-wrap:anywhere}"
        ".card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:10px 14px;"
        "margin:8px 0}"
        ".timeline{position:relative;height:34px;background:#eaeef2;border-radius:4px;"
        "margin:6px 0 2px;overflow:hidden}"
        ".timeline .seg{position:absolute;top:0;bottom:0;border-right:1px solid #fff;"
        "font-size:11px;color:#fff;overflow:hidden;white-space:nowrap;padding:2px 3px;"
        "box-sizing:border-box;cursor:pointer}"
        ".steps-line{position:relative;height:12px;margin-bottom:4px}"
        ".steps-line .tick{position:absolute;top:0;width:3px;height:12px;background:#57606a;"
        "cursor:pointer}"
        ".steps-line .tick.s-failed,.steps-line .tick.s-error{background:#cf222e}"
        ".seg.st-ok{background:#2da44e}.seg.st-failed{background:#cf222e}"
        ".seg.st-skipped{background:#8c959f}.seg.st-interrupted,.seg.st-timeout"
        "{background:#6639ba}.seg.st-running{background:#0969da}"
        ".axis{display:flex;justify-content:space-between;color:#57606a;font-size:11px}"
        "details.step{background:#fff;border:1px solid #d0d7de;border-radius:8px;margin:6px 0}"
        "details.step>summary{padding:8px 12px;cursor:pointer;display:flex;gap:10px;"
        "flex-wrap:wrap;align-items:baseline}"
        "details.step.s-failed,details.step.s-error{border-color:#cf222e}"
        "details.step.failing{box-shadow:0 0 0 3px #ffb3b8}"
        ".badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;"
        "background:#eaeef2}"
        ".badge.s-ok,.badge.c-held{background:#dafbe1}.badge.s-failed,.badge.s-error,"
        ".badge.c-failed,.badge.c-error{background:#ffebe9}"
        ".step .body{padding:0 12px 12px;display:grid;grid-template-columns:minmax(0,1fr) "
        "minmax(0,1fr);gap:12px}"
        "figure{margin:0}figure img{max-width:100%;border:1px solid #d0d7de;cursor:zoom-in}"
        "figcaption{font-size:12px;color:#57606a}"
        "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eaeef2;"
        "padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere}"
        "pre{background:#0d1117;color:#e6edf3;padding:10px;border-radius:6px;overflow:auto;"
        "max-height:420px;white-space:pre-wrap;overflow-wrap:anywhere}"
        "blockquote.model{margin:6px 0;padding:6px 10px;border-left:4px solid #0969da;"
        "background:#f0f6ff}"
        "table.checks td:nth-child(-n+3){white-space:nowrap}"
        "video{width:100%;max-height:540px;background:#000;border-radius:6px}"
        ".chapters{position:relative;height:16px;background:#eaeef2;border-radius:3px}"
        ".chapters button{position:absolute;top:0;width:4px;height:16px;padding:0;border:0;"
        "background:#0969da;cursor:pointer}.chapters button.stage{background:#8c959f}"
        "#lightbox{position:fixed;inset:0;background:rgba(0,0,0,.85);display:none;"
        "align-items:center;justify-content:center;z-index:9;cursor:zoom-out}"
        "#lightbox.on{display:flex}#lightbox img{max-width:96vw;max-height:96vh}"
        "ul.a11y{max-height:360px;overflow:auto;padding-left:18px}"
        ".muted{color:#57606a}.gallery{display:grid;grid-template-columns:repeat(auto-fill,"
        "minmax(260px,1fr));gap:10px}";

/* Enlarging a screenshot, seeking the video to a step or stage, filtering the
 * accessibility list, and bringing the failing step into view. */
static const char SCRIPT[] =
        "(function(){'use strict';"
        "var lb=document.getElementById('lightbox'),lbi=lb.querySelector('img');"
        "document.querySelectorAll('img.zoom').forEach(function(i){"
        "i.addEventListener('click',function(e){e.preventDefault();lbi.src=i.src;"
        "lbi.alt=i.alt;lb.classList.add('on');});});"
        "lb.addEventListener('click',function(){lb.classList.remove('on');});"
        "document.addEventListener('keydown',function(e){if(e.key==='Escape')"
        "lb.classList.remove('on');});"
        "var v=document.getElementById('video');"
        "document.querySelectorAll('[data-seek]').forEach(function(el){"
        "el.addEventListener('click',function(e){if(!v)return;var t=parseFloat("
        "el.getAttribute('data-seek'));if(!(t>=0))return;e.stopPropagation();"
        "v.currentTime=t;v.scrollIntoView({block:'nearest'});});});"
        "var q=document.getElementById('a11y-q');if(q){q.addEventListener('input',"
        "function(){var w=q.value.toLowerCase(),n=0;document.querySelectorAll("
        "'ul.a11y li').forEach(function(li){var s=li.textContent.toLowerCase()"
        ".indexOf(w)>=0;li.hidden=!s;if(s)n++;});document.getElementById('a11y-n')"
        ".textContent=n;});}"
        "var f=document.querySelector('details.failing');"
        "if(f){f.open=true;f.scrollIntoView({block:'start'});}"
        "})();";

static void make_nonce(html_ctx *c)
{
	unsigned char raw[16] = {0};
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
		/* No entropy: the nonce is still unguessable from the report's text,
		 * which never contains it before it is chosen. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		memcpy(raw, &ts, sizeof ts < sizeof raw ? sizeof ts : sizeof raw);
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(c->nonce + 2 * i, 3, "%02x", raw[i]);
}

static void page_head(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	ksr_strbuf_add(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	                  "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
	                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
	                  "'none'; img-src 'self' file:; media-src 'self' file:; style-src "
	                  "'unsafe-inline'; script-src 'nonce-");
	ksr_strbuf_addf(b, "%s'\"><title>", c->nonce);
	esc_str(b, r, "verdict", "unknown");
	ksr_strbuf_add(b, ": ");
	ksr_strbuf_add_html(b, ksr_json_str(jget(r, "scenario"), "name", "unnamed scenario"));
	ksr_strbuf_addf(b, "</title><style>%s</style></head><body><main>\n", STYLE);
}

static void section_verdict(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	ksr_strbuf_add(b, "<header class=\"verdict v-");
	css_word(b, ksr_json_str(r, "verdict", "unknown"));
	ksr_strbuf_add(b, "\"><h1 id=\"verdict\">");
	esc_str(b, r, "verdict", "unknown");
	ksr_strbuf_add(b, ": ");
	ksr_strbuf_add_html(b, ksr_json_str(jget(r, "scenario"), "name", "unnamed scenario"));
	ksr_strbuf_add(b, "</h1><div class=\"outcome\">outcome <b id=\"outcome\">");
	esc_str(b, r, "outcome", "unknown");
	ksr_strbuf_addf(b, "</b>, exit code %.0f</div><p class=\"reason\" id=\"reason\">",
	                ksr_json_num(r, "exit_code", 2));
	esc_str(b, r, "reason", "No reason was recorded.");
	if (cJSON_IsNumber(jget(r, "line")))
		ksr_strbuf_addf(b, " (scenario line %.0f)", ksr_json_num(r, "line", 0));
	ksr_strbuf_add(b, "</p>");
	if (c->failing_index > 0)
		ksr_strbuf_addf(b,
		                "<p><a href=\"#step-%d\" style=\"color:#fff\">the failing "
		                "step: #%d</a></p>",
		                c->failing_index, c->failing_index);
	ksr_strbuf_add(b, "</header>\n");
}

/* Desktop mode: each spawned tool (report.json's tools[]) as a row of the
 * summary, where an app run has its App and Window. */
static void tools_rows(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, jget(r, "tools"))
	{
		const cJSON *w = jget(t, "window");
		ksr_strbuf_add(b, "</dd><dt>Tool ");
		esc_str(b, t, "as", "");
		ksr_strbuf_add(b, "</dt><dd>");
		esc_str(b, w, "title", "–");
		if (cJSON_IsNumber(jget(t, "pid")))
			ksr_strbuf_addf(b, " (PID %.0f)", ksr_json_num(t, "pid", 0));
		ksr_strbuf_add(b, " <span class=\"muted\">");
		if (jget(t, "desktop_entry") && cJSON_IsString(jget(t, "desktop_entry")))
			esc_str(b, t, "desktop_entry", "");
		else
			esc_str(b, t, "command", "");
		ksr_strbuf_add(b, "; painted: ");
		esc_str(b, t, "paint", "–");
		ksr_strbuf_add(b, "; probe: ");
		esc_str(b, t, "probe", "–");
		ksr_strbuf_add(b, "</span>");
	}
}

static void section_summary(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	const cJSON *sc = jget(r, "scenario"), *rt = jget(r, "runtime"), *tm = jget(r, "timings");
	ksr_strbuf_add(b, "<div class=\"card\"><dl class=\"kv\"><dt>Scenario</dt><dd>");
	esc_str(b, sc, "path", "–");
	if (ksr_json_str(sc, "sha256", NULL)) {
		ksr_strbuf_add(b, " <span class=\"muted\">sha256 ");
		esc_str(b, sc, "sha256", "");
		ksr_strbuf_add(b, "</span>");
	}
	ksr_strbuf_add(b, "</dd><dt>Run</dt><dd>");
	esc_str(b, r, "run_id", "–");
	ksr_strbuf_add(b, ", started ");
	esc_str(b, tm, "started_at", "–");
	ksr_strbuf_add(b, ", took <span id=\"duration\">");
	ms_text(b, c->total_ms);
	ksr_strbuf_add(b, "</span>");
	if (cJSON_IsNumber(jget(tm, "deadline_s")))
		ksr_strbuf_addf(b, " of a %.0f s deadline", ksr_json_num(tm, "deadline_s", 0));
	ksr_strbuf_add(b, "</dd><dt>Runtime</dt><dd>kasm-session-runtime ");
	esc_str(b, rt, "version", "");
	if (cJSON_IsNumber(jget(rt, "pid")))
		ksr_strbuf_addf(b, ", PID %.0f", ksr_json_num(rt, "pid", 0));
	const cJSON *app = jget(r, "app"), *w = jget(app, "window");
	if (cJSON_IsObject(app)) {
		ksr_strbuf_add(b, "</dd><dt>App</dt><dd>");
		esc_str(b, app, "name", "–");
		if (cJSON_IsNumber(jget(app, "pid")))
			ksr_strbuf_addf(b, " (PID %.0f)", ksr_json_num(app, "pid", 0));
		ksr_strbuf_add(b, " <span class=\"muted\">");
		esc_str(b, app, "cmdline", "");
		ksr_strbuf_add(b, "</span>");
		if (cJSON_IsObject(w)) {
			ksr_strbuf_add(b, "</dd><dt>Window</dt><dd>");
			esc_str(b, w, "title", "–");
			ksr_strbuf_add(b, " <span class=\"muted\">class ");
			esc_str(b, w, "class", "–");
			ksr_strbuf_addf(b, ", %.0fx%.0f at %.0f,%.0f</span>",
			                ksr_json_num(w, "w", 0), ksr_json_num(w, "h", 0),
			                ksr_json_num(w, "x", 0), ksr_json_num(w, "y", 0));
		}
	}
	tools_rows(b, r);
	ksr_strbuf_add(b, "</dd><dt>Files</dt><dd><a href=\"report.md\">report.md</a>, "
	                  "<a href=\"report.json\">report.json</a>, "
	                  "<a href=\"trace.jsonl\">trace.jsonl</a></dd></dl></div>\n");
}

static void list_section(ksr_strbuf *b, const cJSON *r, const char *key, const char *title,
                         const char *code_key, const char *text_key)
{
	const cJSON *it, *list = jget(r, key);
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_addf(b, "<h2>%s</h2><div class=\"card\"><ul id=\"%s\">", title, key);
	cJSON_ArrayForEach(it, list)
	{
		ksr_strbuf_add(b, "<li><b>");
		esc_str(b, it, code_key, "");
		ksr_strbuf_add(b, "</b>");
		if (cJSON_IsNumber(jget(it, "line")))
			ksr_strbuf_addf(b, " (line %.0f)", ksr_json_num(it, "line", 0));
		ksr_strbuf_add(b, ": ");
		esc_str(b, it, text_key, "");
		ksr_strbuf_add(b, "</li>");
	}
	ksr_strbuf_add(b, "</ul></div>\n");
}

static void section_concerns(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	list_section(b, r, "concerns", "Concerns", "code", "message");
	if (cJSON_GetArraySize(jget(r, "failures")) > 1)
		list_section(b, r, "failures", "Failures, in order", "outcome", "reason");
}

/* A position on the run's time axis, as a percentage of the whole run. */
static double pct(const html_ctx *c, double ms)
{
	double p = c->total_ms > 0 ? 100.0 * ms / c->total_ms : 0;
	return p < 0 ? 0 : p > 100 ? 100 : p;
}

/* data-seek: the video time (s) of a run time, when the video covers it. */
static void seek_attr(ksr_strbuf *b, const html_ctx *c, double at_ms)
{
	if (c->video_t0 >= 0 && at_ms >= c->video_t0)
		ksr_strbuf_addf(b, " data-seek=\"%.3f\"", (at_ms - c->video_t0) / 1000.0);
}

static void section_timeline(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	const cJSON *s, *stages = jget(r, "stages"), *steps = jget(r, "steps");
	if (!cJSON_GetArraySize(stages))
		return;
	ksr_strbuf_add(b, "<h2>Timeline</h2><div class=\"card\"><div class=\"timeline\" "
	                  "id=\"timeline\">");
	cJSON_ArrayForEach(s, stages)
	{
		double t0 = ksr_json_num(s, "start_ms", 0), ms = ksr_json_num(s, "duration_ms", 0);
		ksr_strbuf_addf(b, "<div class=\"seg st-");
		css_word(b, ksr_json_str(s, "status", NULL));
		ksr_strbuf_addf(b, "\" style=\"left:%.3f%%;width:%.3f%%\"", pct(c, t0), pct(c, ms));
		seek_attr(b, c, t0);
		ksr_strbuf_add(b, " title=\"");
		esc_str(b, s, "name", "");
		ksr_strbuf_add(b, ": ");
		esc_str(b, s, "status", "");
		ksr_strbuf_add(b, ", ");
		ms_text(b, ms);
		if (ksr_json_str(s, "reason", NULL)) {
			ksr_strbuf_add(b, " – ");
			esc_str(b, s, "reason", "");
		}
		ksr_strbuf_add(b, "\">");
		esc_str(b, s, "name", "");
		ksr_strbuf_add(b, "</div>");
	}
	ksr_strbuf_add(b, "</div><div class=\"steps-line\">");
	cJSON_ArrayForEach(s, steps)
	{
		double t0 = ksr_json_num(s, "start_ms", 0);
		ksr_strbuf_addf(b, "<a class=\"tick s-");
		css_word(b, ksr_json_str(s, "status", NULL));
		ksr_strbuf_addf(
		        b, "\" href=\"#step-%.0f\" style=\"left:%.3f%%\" title=\"step %.0f: ",
		        ksr_json_num(s, "index", 0), pct(c, t0), ksr_json_num(s, "index", 0));
		esc_str(b, s, "kind", "");
		ksr_strbuf_add(b, "\"></a>");
	}
	ksr_strbuf_add(b, "</div><div class=\"axis\"><span>0 s</span><span>");
	ms_text(b, c->total_ms);
	ksr_strbuf_add(b, "</span></div></div>\n");
}

static void section_video(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	const cJSON *v = jget(r, "video");
	if (!cJSON_IsObject(v))
		return;
	ksr_strbuf_add(b, "<h2>Video</h2><div class=\"card\">");
	const char *name = ksr_json_str(v, "name", NULL);
	if (!name || ksr_json_num(v, "frames", 0) <= 0) {
		ksr_strbuf_add(b, "<p>No video was written: ");
		esc_str(b, v, "error", "no frame was captured");
		ksr_strbuf_add(b, "</p></div>\n");
		return;
	}
	ksr_strbuf_add(b, "<video id=\"video\" controls preload=\"metadata\" src=\"");
	ksr_strbuf_add_url(b, name, 0);
	ksr_strbuf_add(b, "\"></video><div class=\"chapters\" id=\"chapters\">");
	double dur = ksr_json_num(v, "duration_ms", 0);
	const cJSON *ch;
	cJSON_ArrayForEach(ch, jget(v, "chapters"))
	{
		double at = ksr_json_num(ch, "at_ms", 0);
		double p = dur > 0 ? 100.0 * at / dur : 0;
		bool step = ksr_json_num(ch, "step", 0) > 0;
		ksr_strbuf_addf(b,
		                "<button type=\"button\" class=\"%s\" style=\"left:%.3f%%\" "
		                "data-seek=\"%.3f\" title=\"",
		                step ? "step" : "stage", p > 100 ? 100 : p, at / 1000.0);
		esc_str(b, ch, "title", "");
		ksr_strbuf_add(b, "\"></button>");
	}
	ksr_strbuf_addf(b, "</div><p class=\"muted\">");
	ksr_strbuf_add_html(b, name);
	ksr_strbuf_addf(b,
	                ": %.0f frames (at most %.0f a second, when the screen changed), "
	                "%.0fx%.0f, ",
	                ksr_json_num(v, "frames", 0), ksr_json_num(v, "max_fps", 0),
	                ksr_json_num(v, "width", 0), ksr_json_num(v, "height", 0));
	esc_str(b, v, "codec", "");
	ksr_strbuf_add(b, ", ");
	ms_text(b, dur);
	ksr_strbuf_add(b, ". A step's time seeks the video to it.</p></div>\n");
	(void)c;
}

static void figure(ksr_strbuf *b, const char *file, const char *caption)
{
	ksr_strbuf_add(b, "<figure><a href=\"");
	ksr_strbuf_add_url(b, file, 0);
	ksr_strbuf_add(b, "\"><img class=\"zoom\" decoding=\"async\" src=\"");
	ksr_strbuf_add_url(b, file, 0);
	ksr_strbuf_add(b, "\" alt=\"");
	ksr_strbuf_add_html(b, caption);
	ksr_strbuf_add(b, "\"></a><figcaption>");
	ksr_strbuf_add_html(b, caption);
	ksr_strbuf_add(b, " (");
	ksr_strbuf_add_html(b, file);
	ksr_strbuf_add(b, ")</figcaption></figure>");
}

/* What an input step waited for: its ready and settled fields (docs/report.md). */
static void waited_for(ksr_strbuf *b, const cJSON *details)
{
	static const char *const phases[] = {"ready", "settled"};
	bool any = false;
	for (size_t i = 0; i < 2; i++) {
		const cJSON *ph = jget(details, phases[i]), *f;
		if (!cJSON_IsObject(ph))
			continue;
		ksr_strbuf_add(b, any ? "" : "<h4>What it waited for</h4><dl class=\"kv waited\">");
		any = true;
		ksr_strbuf_addf(b, "<dt>%s</dt><dd>", phases[i]);
		bool first = true;
		cJSON_ArrayForEach(f, ph)
		{
			ksr_strbuf_add(b, first ? "" : "; ");
			first = false;
			ksr_strbuf_add_html(b, f->string);
			ksr_strbuf_add(b, " ");
			esc_value(b, f);
		}
		ksr_strbuf_add(b, "</dd>");
	}
	ksr_strbuf_add(b, any ? "</dl>" : "");
}

static void checks_table(ksr_strbuf *b, const cJSON *checks)
{
	const cJSON *ch;
	if (!cJSON_GetArraySize(checks))
		return;
	ksr_strbuf_add(b, "<h4>Checks</h4><table class=\"checks\"><tr><th>check</th><th>line</th>"
	                  "<th>result</th><th>detail</th></tr>");
	cJSON_ArrayForEach(ch, checks)
	{
		ksr_strbuf_add(b, "<tr><td>");
		esc_str(b, ch, "kind", "");
		ksr_strbuf_add(b, "</td><td>");
		if (cJSON_IsNumber(jget(ch, "line")))
			ksr_strbuf_addf(b, "%.0f", ksr_json_num(ch, "line", 0));
		ksr_strbuf_add(b, "</td><td><span class=\"badge c-");
		css_word(b, ksr_json_str(ch, "status", NULL));
		ksr_strbuf_add(b, "\">");
		esc_str(b, ch, "status", "");
		ksr_strbuf_add(b, "</span></td><td>");
		esc_str(b, ch, "detail", "");
		ksr_strbuf_add(b, "</td></tr>");
	}
	ksr_strbuf_add(b, "</table>");
}

/* The model's words in this step: grounded clicks (what was asked, where it
 * landed) and the judge's sentences. */
static void model_words(ksr_strbuf *b, const cJSON *r, double index)
{
	const cJSON *g;
	cJSON_ArrayForEach(g, jget(r, "grounding"))
	{
		if (ksr_json_num(g, "step", -1) != index)
			continue;
		const cJSON *w = jget(g, "where");
		ksr_strbuf_add(b, "<blockquote class=\"model\">grounder asked: “");
		esc_str(b, g, "asked", "");
		ksr_strbuf_add(b, "”");
		if (cJSON_IsObject(w))
			ksr_strbuf_addf(b, ", put it at (%.0f, %.0f)", ksr_json_num(w, "x", 0),
			                ksr_json_num(w, "y", 0));
		ksr_strbuf_addf(b, ", %s</blockquote>",
		                cJSON_IsTrue(jget(g, "verified")) ? "confirmed" : "not confirmed");
	}
	cJSON_ArrayForEach(g, jget(r, "model_words"))
	{
		if (ksr_json_num(g, "step", -1) != index)
			continue;
		ksr_strbuf_add(b, "<blockquote class=\"model\"><b>");
		esc_str(b, g, "from", "");
		ksr_strbuf_add(b, ":</b> ");
		esc_str(b, g, "text", "");
		ksr_strbuf_add(b, "</blockquote>");
	}
}

/* The step's other recorded fields, ready and settled shown above. */
static void other_details(ksr_strbuf *b, const cJSON *details)
{
	const cJSON *f;
	bool any = false;
	cJSON_ArrayForEach(f, details)
	{
		if (!strcmp(f->string, "ready") || !strcmp(f->string, "settled"))
			continue;
		ksr_strbuf_add(b, any ? "" : "<h4>Details</h4><dl class=\"kv\">");
		any = true;
		ksr_strbuf_add(b, "<dt>");
		ksr_strbuf_add_html(b, f->string);
		ksr_strbuf_add(b, "</dt><dd>");
		esc_value(b, f);
		ksr_strbuf_add(b, "</dd>");
	}
	ksr_strbuf_add(b, any ? "</dl>" : "");
}

static void step_summary(ksr_strbuf *b, const cJSON *s, const html_ctx *c)
{
	double index = ksr_json_num(s, "index", 0);
	ksr_strbuf_addf(b, "<summary><b>#%.0f</b>", index);
	if (cJSON_IsNumber(jget(s, "line")))
		ksr_strbuf_addf(b, " <span>line %.0f</span>", ksr_json_num(s, "line", 0));
	ksr_strbuf_add(b, " <b>");
	esc_str(b, s, "kind", "?");
	ksr_strbuf_add(b, "</b> <span class=\"badge s-");
	css_word(b, ksr_json_str(s, "status", NULL));
	ksr_strbuf_add(b, "\">");
	esc_str(b, s, "status", "");
	ksr_strbuf_add(b, "</span> <span class=\"muted\">backend ");
	esc_str(b, s, "backend", "–");
	ksr_strbuf_add(b, ", rung ");
	esc_str(b, s, "rung", "–");
	ksr_strbuf_add(b, ", ");
	ms_text(b, ksr_json_num(s, "duration_ms", 0));
	ksr_strbuf_add(b, " at <a href=\"#step-");
	ksr_strbuf_addf(b, "%.0f\" class=\"at\"", index);
	seek_attr(b, c, ksr_json_num(s, "start_ms", 0));
	ksr_strbuf_add(b, ">");
	ms_text(b, ksr_json_num(s, "start_ms", 0));
	ksr_strbuf_add(b, "</a></span>");
	if (ksr_json_str(s, "reason", NULL)) {
		ksr_strbuf_add(b, " <span class=\"reason\">");
		esc_str(b, s, "reason", "");
		ksr_strbuf_add(b, "</span>");
	}
	ksr_strbuf_add(b, "</summary>");
}

/* The failure screenshot diagnosis took (99-failure.png), when it was written. */
static const char *failure_shot(const cJSON *r)
{
	const cJSON *a;
	cJSON_ArrayForEach(a, jget(r, "artifacts"))
	{
		const char *name = ksr_json_str(a, "name", "");
		if (!strcmp(name, "99-failure.png"))
			return name;
	}
	return NULL;
}

static void step_block(ksr_strbuf *b, const cJSON *r, const cJSON *s, const html_ctx *c)
{
	double index = ksr_json_num(s, "index", 0);
	bool failing = c->failing_index > 0 && index == c->failing_index;
	const char *status = ksr_json_str(s, "status", "");
	ksr_strbuf_add(b, "<details class=\"step s-");
	css_word(b, status);
	ksr_strbuf_addf(b, "%s\" id=\"step-%.0f\"%s>", failing ? " failing" : "", index,
	                failing ? " open" : "");
	step_summary(b, s, c);
	ksr_strbuf_add(b, "<div class=\"body\"><div class=\"shots\">");
	const char *shot = ksr_json_str(s, "screenshot", NULL);
	const char *ann = ksr_json_str(s, "annotated", NULL);
	if (ann)
		figure(b, ann, "where the click landed");
	if (shot)
		figure(b, shot, "the screen after the step");
	const char *failure = failing && !shot && !ann ? failure_shot(r) : NULL;
	if (failure)
		figure(b, failure, "the screen when the run failed");
	else if (!shot && !ann)
		ksr_strbuf_add(b, "<p class=\"muted\">no screenshot</p>");
	const cJSON *px = jget(s, "pixel"), *w = jget(s, "window");
	if (cJSON_IsObject(px))
		ksr_strbuf_addf(b, "<p>click at (%.0f, %.0f)", ksr_json_num(px, "x", 0),
		                ksr_json_num(px, "y", 0));
	if (cJSON_IsObject(w))
		ksr_strbuf_addf(b, "%s in the window %.0fx%.0f at %.0f,%.0f",
		                cJSON_IsObject(px) ? "" : "<p>", ksr_json_num(w, "w", 0),
		                ksr_json_num(w, "h", 0), ksr_json_num(w, "x", 0),
		                ksr_json_num(w, "y", 0));
	ksr_strbuf_add(b, cJSON_IsObject(px) || cJSON_IsObject(w) ? "</p>" : "");
	ksr_strbuf_add(b, "</div><div class=\"facts\">");
	waited_for(b, jget(s, "details"));
	checks_table(b, jget(s, "checks"));
	model_words(b, r, index);
	other_details(b, jget(s, "details"));
	ksr_strbuf_add(b, "</div></div></details>\n");
}

static void section_steps(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	const cJSON *s, *list = jget(r, "steps");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_addf(b, "<h2>Steps</h2><div id=\"steps\">");
	cJSON_ArrayForEach(s, list) step_block(b, r, s, c);
	ksr_strbuf_add(b, "</div>\n");
}

/* Model words said outside any step (the judge's first look, its
 * description of the failure screen) and the agentic loop's turns. */
static void section_model(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	const cJSON *m = jget(r, "model_usage"), *g = jget(r, "goal"), *w;
	bool words = false;
	cJSON_ArrayForEach(w, jget(r, "model_words")) words |= ksr_json_num(w, "step", 0) == 0;
	if (ksr_json_num(m, "calls", 0) <= 0 && !words && !cJSON_IsObject(g))
		return;
	ksr_strbuf_addf(b, "<h2>Models</h2><div class=\"card\"><p>%.0f calls, %.0f failed, ",
	                ksr_json_num(m, "calls", 0), ksr_json_num(m, "failures", 0));
	ms_text(b, ksr_json_num(m, "total_ms", 0));
	ksr_strbuf_add(b, " in all.</p>");
	model_words(b, r, 0);
	if (cJSON_IsObject(g)) {
		ksr_strbuf_add(b, "<h4>Goal</h4><p>");
		esc_str(b, g, "goal", "");
		ksr_strbuf_add(b, "</p><table><tr><th>turn</th><th>saw</th><th>chose</th>"
		                  "<th>result</th></tr>");
		const cJSON *t;
		cJSON_ArrayForEach(t, jget(g, "turns"))
		{
			ksr_strbuf_addf(b, "<tr><td>%.0f</td><td>", ksr_json_num(t, "turn", 0));
			esc_value(b, jget(t, "saw"));
			ksr_strbuf_add(b, "</td><td>");
			esc_value(b, jget(t, "chose"));
			ksr_strbuf_add(b, "</td><td>");
			esc_value(b, jget(t, "result"));
			ksr_strbuf_add(b, "</td></tr>");
		}
		ksr_strbuf_add(b, "</table><p>claim: ");
		esc_value(b, jget(g, "claim_text"));
		ksr_strbuf_add(b, "</p>");
	}
	ksr_strbuf_add(b, "</div>\n");
}

static void section_final_checks(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	const cJSON *ch, *list = jget(r, "final_checks");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "<h2>Final checks</h2><div class=\"card\"><table><tr><th>check</th>"
	                  "<th>result</th><th>detail</th></tr>");
	cJSON_ArrayForEach(ch, list)
	{
		bool ok = cJSON_IsTrue(jget(ch, "ok"));
		ksr_strbuf_add(b, "<tr><td>");
		esc_str(b, ch, "name", "");
		ksr_strbuf_addf(b, "</td><td><span class=\"badge %s\">%s</span></td><td>",
		                ok ? "c-held" : "c-failed", ok ? "ok" : "failed");
		esc_str(b, ch, "detail", "");
		ksr_strbuf_add(b, "</td></tr>");
	}
	ksr_strbuf_add(b, "</table></div>\n");
}

/* The page's errors (rung 0), each with the step it came in. */
static void section_page_errors(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	const cJSON *e, *list = jget(r, "page_errors");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "<h2>Page errors</h2><div class=\"card\"><table><tr><th>step</th>"
	                  "<th>line</th><th>kind</th><th>text</th><th>source</th></tr>");
	cJSON_ArrayForEach(e, list)
	{
		double step = ksr_json_num(e, "step", 0), line = ksr_json_num(e, "line", 0);
		if (step > 0)
			ksr_strbuf_addf(b, "<tr><td>%.0f</td><td>", step);
		else
			ksr_strbuf_add(b, "<tr><td>outside the steps</td><td>");
		if (line > 0)
			ksr_strbuf_addf(b, "%.0f", line);
		ksr_strbuf_add(b, "</td><td>");
		esc_str(b, e, "kind", "");
		ksr_strbuf_add(b, "</td><td>");
		esc_str(b, e, "text", "");
		ksr_strbuf_add(b, "</td><td>");
		esc_str(b, e, "source", "");
		ksr_strbuf_add(b, "</td></tr>");
	}
	ksr_strbuf_add(b, "</table></div>\n");
}

static bool is_image_kind(const char *kind)
{
	return kind && (!strcmp(kind, "screenshot") || !strcmp(kind, "diff") ||
	                !strcmp(kind, "baseline-candidate"));
}

/* Is file a step's own screenshot (shown with its step)? */
static bool step_shot(const cJSON *r, const char *file)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, jget(r, "steps"))
	{
		const char *a = ksr_json_str(s, "screenshot", NULL);
		const char *n = ksr_json_str(s, "annotated", NULL);
		if ((a && !strcmp(a, file)) || (n && !strcmp(n, file)))
			return true;
	}
	return false;
}

static void section_files(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	const cJSON *a, *list = jget(r, "artifacts");
	bool any = false;
	cJSON_ArrayForEach(a, list)
	{
		const char *name = ksr_json_str(a, "name", NULL);
		if (!name || !is_image_kind(ksr_json_str(a, "kind", NULL)) || step_shot(r, name))
			continue;
		ksr_strbuf_add(b, any ? "" : "<h2>Screenshots</h2><div class=\"card gallery\">");
		any = true;
		figure(b, name, ksr_json_str(a, "description", name));
	}
	ksr_strbuf_add(b, any ? "</div>\n" : "");
	any = false;
	cJSON_ArrayForEach(a, list)
	{
		const char *name = ksr_json_str(a, "name", NULL);
		if (!name || is_image_kind(ksr_json_str(a, "kind", NULL)))
			continue;
		ksr_strbuf_add(b, any ? "" : "<h2>Other files</h2><div class=\"card\"><ul>");
		any = true;
		ksr_strbuf_add(b, "<li><a href=\"");
		ksr_strbuf_add_url(b, name, 0);
		ksr_strbuf_add(b, "\">");
		ksr_strbuf_add_html(b, name);
		ksr_strbuf_add(b, "</a> <span class=\"muted\">(");
		esc_str(b, a, "kind", "");
		ksr_strbuf_add(b, ")</span> ");
		esc_str(b, a, "description", "");
		ksr_strbuf_add(b, "</li>");
	}
	ksr_strbuf_add(b, any ? "</ul></div>\n" : "");
}

static void section_logs(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	const cJSON *t, *list = jget(r, "log_tails");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "<h2>Log tails</h2><div id=\"log-tails\">");
	cJSON_ArrayForEach(t, list)
	{
		ksr_strbuf_add(b, "<div class=\"card\"><b>");
		esc_str(b, t, "path", "");
		ksr_strbuf_add(b, "</b><pre>");
		esc_str(b, t, "text", "");
		ksr_strbuf_add(b, "</pre></div>");
	}
	ksr_strbuf_add(b, "</div>\n");
}

static void a11y_control(ksr_strbuf *b, const cJSON *ctl)
{
	ksr_strbuf_add(b, "<li><b>");
	esc_str(b, ctl, "role", "?");
	ksr_strbuf_add(b, "</b> “");
	esc_str(b, ctl, "name", "");
	ksr_strbuf_add(b, "”");
	static const char *const extra[] = {"states", "actions"};
	for (size_t i = 0; i < 2; i++) {
		const cJSON *v = jget(ctl, extra[i]);
		if (!v || (cJSON_IsArray(v) && !cJSON_GetArraySize(v)))
			continue;
		ksr_strbuf_addf(b, " <span class=\"muted\">%s: ", extra[i]);
		esc_value(b, v);
		ksr_strbuf_add(b, "</span>");
	}
	const cJSON *e = jget(ctl, "extents");
	if (cJSON_IsObject(e))
		ksr_strbuf_addf(b, " <span class=\"muted\">%.0fx%.0f at %.0f,%.0f</span>",
		                ksr_json_num(e, "w", 0), ksr_json_num(e, "h", 0),
		                ksr_json_num(e, "x", 0), ksr_json_num(e, "y", 0));
	ksr_strbuf_add(b, "</li>");
}

static void section_a11y(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	const cJSON *a = jget(r, "accessibility"), *app = jget(a, "app"), *ctl;
	if (!cJSON_IsObject(a))
		return;
	ksr_strbuf_add(b, "<h2>Accessibility probe</h2><div class=\"card\" id=\"a11y\"><p>");
	esc_str(b, a, "status", "");
	if (ksr_json_str(a, "reason", NULL)) {
		ksr_strbuf_add(b, ": ");
		esc_str(b, a, "reason", "");
	}
	if (cJSON_IsObject(app)) {
		ksr_strbuf_add(b, "; app ");
		esc_str(b, app, "name", "");
		ksr_strbuf_add(b, " (");
		esc_str(b, app, "toolkit", "");
		ksr_strbuf_add(b, ")");
	}
	if (cJSON_IsNumber(jget(a, "nodes")))
		ksr_strbuf_addf(b, ", %.0f nodes", ksr_json_num(a, "nodes", 0));
	if (ksr_json_str(a, "artifact", NULL)) {
		ksr_strbuf_add(b, ", the whole tree in <a href=\"");
		ksr_strbuf_add_url(b, ksr_json_str(a, "artifact", NULL), 0);
		ksr_strbuf_add(b, "\">");
		esc_str(b, a, "artifact", "");
		ksr_strbuf_add(b, "</a>");
	}
	ksr_strbuf_add(b, ".</p>");
	const cJSON *controls = jget(a, "controls");
	if (cJSON_GetArraySize(controls)) {
		ksr_strbuf_addf(b,
		                "<p><input type=\"search\" id=\"a11y-q\" placeholder=\"filter "
		                "by role, name, state\" aria-label=\"filter the controls\"> "
		                "<span id=\"a11y-n\">%d</span> shown</p><ul class=\"a11y\">",
		                cJSON_GetArraySize(controls));
		cJSON_ArrayForEach(ctl, controls) a11y_control(b, ctl);
		ksr_strbuf_add(b, "</ul>");
	}
	ksr_strbuf_add(b, "</div>\n");
}

static void section_output_errors(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)c;
	list_section(b, r, "output_errors", "Evidence that could not be written", "what", "error");
}

static void page_tail(ksr_strbuf *b, const cJSON *r, const html_ctx *c)
{
	(void)r;
	ksr_strbuf_addf(b,
	                "</main><div id=\"lightbox\" role=\"dialog\" aria-label=\"enlarged "
	                "screenshot\"><img alt=\"\"></div><script nonce=\"%s\">%s</script>"
	                "</body></html>\n",
	                c->nonce, SCRIPT);
}

/* The step that decided: the failing step on the decision's line, else the
 * first step that failed (an interrupted run's open step closed as error). */
static int failing_step(const cJSON *r)
{
	const char *verdict = ksr_json_str(r, "verdict", "");
	if (!strcmp(verdict, "pass") || !strcmp(verdict, "pass-with-concerns"))
		return 0;
	const cJSON *s;
	double line = ksr_json_num(r, "line", -1);
	int first = 0;
	cJSON_ArrayForEach(s, jget(r, "steps"))
	{
		const char *st = ksr_json_str(s, "status", "");
		if (strcmp(st, "failed") && strcmp(st, "error") && strcmp(st, "running"))
			continue;
		int index = (int)ksr_json_num(s, "index", 0);
		if (line > 0 && ksr_json_num(s, "line", -2) == line)
			return index;
		first = first ? first : index;
	}
	return first;
}

char *ksr_report_html(const cJSON *report)
{
	static void (*const sections[])(ksr_strbuf *, const cJSON *, const html_ctx *) = {
	        page_head,        section_verdict,       section_summary,
	        section_concerns, section_timeline,      section_video,
	        section_steps,    section_page_errors,   section_final_checks,
	        section_model,    section_files,         section_logs,
	        section_a11y,     section_output_errors, page_tail,
	};
	html_ctx c = {
	        .total_ms = ksr_json_num(jget(report, "timings"), "duration_ms", 0),
	        .video_t0 = -1,
	        .failing_index = failing_step(report),
	};
	const cJSON *v = jget(report, "video");
	if (cJSON_IsObject(v) && ksr_json_str(v, "name", NULL))
		c.video_t0 = ksr_json_num(v, "start_ms", 0);
	make_nonce(&c);
	ksr_strbuf b = {0};
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		sections[i](&b, report, &c);
	return ksr_strbuf_take(&b);
}
