/* ksr_run_scenario: scenario -> run context -> stages -> verdict -> report.
 * DONE is written last on every path where the evidence folder is writable. */
#include "run/watchdog.h"
#include "ksr/json.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ksr/cdp.h"
#include "ksr/page.h"
#include "ksr/report.h"
#include "ksr/proc.h"
#include "ksr/report.h"
#include "run/actions/exec.h"
#include "run/actions/exec_atspi.h"
#include "run/diagnosis/diagnose.h"
#include "run/stages/stage.h"

#define RESERVE_MS 30000

static void message(const ksr_run_opts *opts, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void message(const ksr_run_opts *opts, const char *fmt, ...)
{
	if (!opts->on_message)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	opts->on_message(opts->on_message_ud, buf);
}

static void make_run_id(char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, len, "%08lx-%05x-%04lx", (unsigned long)ts.tv_sec,
	         (unsigned)getpid() & 0xfffff, (unsigned long)(ts.tv_nsec / 1000) & 0xffff);
}

static void iso_now(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *name_list(const char *list)
{
	cJSON *a = cJSON_CreateArray();
	for (const char *p = list; *p; p += strlen(p) + 1)
		cJSON_AddItemToArray(a, cJSON_CreateString(p));
	return a;
}

/* What the folder held before this run (docs/report.md#the-evidence-folder). */
static cJSON *evidence_folder_obj(const ksr_evidence *out)
{
	cJSON *o = cJSON_CreateObject();
	const char *moved = ksr_evidence_moved(out);
	if (*moved)
		cJSON_AddStringToObject(o, "previous", "previous");
	else
		cJSON_AddNullToObject(o, "previous");
	cJSON_AddItemToObject(o, "moved", name_list(moved));
	cJSON_AddItemToObject(o, "foreign", name_list(ksr_evidence_foreign(out)));
	return o;
}

static void emit_run_start(ksr_run *run, const char *scenario_name, const char *sha)
{
	char started[32];
	iso_now(started, sizeof started);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", getpid());
	cJSON_AddStringToObject(f, "run_id", run->run_id);
	cJSON_AddStringToObject(f, "started_at", started);
	/* The same instant in ms (wall clock), to line the trace up with what
	 * happened outside the process (bench/demo.sh: exec to exit). */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	cJSON_AddNumberToObject(f, "started_unix_ms",
	                        (double)now.tv_sec * 1e3 + (double)(now.tv_nsec / 1000000));
	cJSON *sc = cJSON_AddObjectToObject(f, "scenario");
	cJSON_AddStringToObject(sc, "path", run->opts->scenario_path);
	cJSON_AddStringToObject(sc, "name", scenario_name);
	if (sha)
		cJSON_AddStringToObject(sc, "sha256", sha);
	else
		cJSON_AddNullToObject(sc, "sha256");
	cJSON *rt = cJSON_AddObjectToObject(f, "runtime");
	cJSON_AddStringToObject(rt, "version", KSR_VERSION);
	cJSON_AddNumberToObject(f, "deadline_s", run->opts->deadline_s);
	cJSON_AddStringToObject(f, "out", ksr_evidence_dir(run->out));
	cJSON_AddItemToObject(f, "evidence_folder", evidence_folder_obj(run->out));
	ksr_run_emit(run, "run.start", f);
}

static char *format_load_errors(const char *path, const ksr_errlist *errs)
{
	size_t cap = 256 + errs->len * (KSR_ERR_MSG_MAX + 64), n = 0;
	char *out = ksr_xmalloc(cap);
	out[0] = '\0';
	for (size_t i = 0; i < errs->len; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s:%d:%d: %s", i ? "\n" : "", path,
		                      errs->items[i].line, errs->items[i].col, errs->items[i].msg);
	return out;
}

static void record_invalid_scenario(ksr_run *run, const ksr_errlist *errs)
{
	char *all = format_load_errors(run->opts->scenario_path, errs);
	message(run->opts, "%s", all);
	const ksr_err *first = errs->len ? &errs->items[0] : NULL;
	if (first) {
		char more[64] = "";
		if (errs->len > 1)
			snprintf(more, sizeof more, " (and %zu more)", errs->len - 1);
		ksr_run_fail_setup(run, KSR_OUTCOME_INVALID_SCENARIO, 0,
		                   "the scenario is invalid: %s:%d:%d: %s%s",
		                   run->opts->scenario_path, first->line, first->col, first->msg,
		                   more);
	} else {
		ksr_run_fail_setup(run, KSR_OUTCOME_INVALID_SCENARIO, 0,
		                   "the scenario %s could not be loaded", run->opts->scenario_path);
	}
	free(all);
}

static void write_text(ksr_run *run, const char *name, const char *text)
{
	ksr_err err = {0};
	if (ksr_evidence_write_text(run->out, name, text, strlen(text), &err) < 0)
		message(run->opts, "could not write %s/%s: %s", ksr_evidence_dir(run->out), name,
		        err.msg);
}

static void note_output_errors(ksr_run *run)
{
	for (const char *f = ksr_evidence_failures(run->out); f && *f; f += strlen(f) + 1) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "what", f);
		ksr_run_emit(run, "output_error", o);
	}
	if (!ksr_evidence_ok(run->out) || ksr_events_trace_errno(run->ev)) {
		ksr_run_fail_setup(run, KSR_OUTCOME_OUTPUT_UNWRITABLE, 0,
		                   "evidence could not be written completely to %s",
		                   ksr_evidence_dir(run->out));
	}
}

/* The app's output past the cap was not kept in launch.log (a tool's:
 * ksr_run_stop_app notes it, before the tools' table goes). */
static void note_log_cut(ksr_run *run)
{
	if (run->launched_pid > 0)
		ksr_run_note_log_cut(run, "launch.log", NULL);
}

int ksr_run_finish_report(ksr_run *run)
{
	ksr_run_video_stop(run); /* finished and synced before DONE, on every path */
	note_log_cut(run);
	note_output_errors(run);
	ksr_decision d = ksr_verdict_from_events(ksr_events_all(run->ev));
	cJSON *v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "verdict", ksr_verdict_name(d.verdict));
	cJSON_AddNumberToObject(v, "exit_code", d.exit_code);
	cJSON_AddStringToObject(v, "outcome", ksr_outcome_name(d.outcome));
	cJSON_AddStringToObject(v, "reason", d.reason ? d.reason : "");
	if (d.line > 0)
		cJSON_AddNumberToObject(v, "line", d.line);
	ksr_run_emit(run, "verdict", v);
	cJSON *end = cJSON_CreateObject();
	cJSON_AddNumberToObject(end, "exit_code", d.exit_code);
	ksr_run_emit(run, "run.end", end);

	/* d.reason is borrowed from the events; render before anything else is recorded. */
	cJSON *report = ksr_report_json(ksr_events_all(run->ev), &d);
	char *json = ksr_json_print(report, true);
	write_text(run, "report.json", json);
	char *md = ksr_report_markdown(report);
	write_text(run, "report.md", md);
	free(md);
	char *html = ksr_report_html(report);
	write_text(run, "report.html", html);
	free(html);
	free(json);
	int code = d.exit_code;
	const char *word = ksr_verdict_name(d.verdict);
	if (!ksr_evidence_ok(run->out)) {
		code = 2;
		word = ksr_verdict_name(KSR_VERDICT_TEST_ERROR);
	}
	if (run->opts->on_report)
		run->opts->on_report(run->opts->on_report_ud, report);
	cJSON_Delete(report);
	ksr_err err = {0};
	if (ksr_evidence_finish(run->out, word, &err) < 0) {
		message(run->opts, "could not write DONE in %s: %s", ksr_evidence_dir(run->out),
		        err.msg);
		code = 2;
	}
	return code;
}

static void set_deadlines(ksr_run *run)
{
	int64_t total = (int64_t)run->opts->deadline_s * 1000;
	int64_t reserve = total < 120000 ? total / 4 : RESERVE_MS;
	run->hard = ksr_deadline_in_ms(total);
	run->work = ksr_deadline_in_ms(total - reserve);
	run->stage = run->work;
}

static void teardown(ksr_run *run)
{
	ksr_run_page_errors(run, "the end of the run, after the steps", 0);
	ksr_page_close(run->page); /* before the browser is stopped */
	run->page = NULL;
	run->cdp = NULL;
	ksr_run_atspi_drop(run);
	ksr_run_stop_app(run);
	ksr_run_wm_watch_stop(run);
	ksr_x11_close(run->x);
	run->x = NULL;
	/* The private display's parts are told to stop and go while the report
	 * is written: nothing of theirs is evidence (the app, whose output is,
	 * was stopped and reaped above). Reaped once DONE is written. */
	ksr_session_signal(run->session);
	ksr_run_window_release(&run->window);
	free(run->windows_before_launch);
	run->windows_before_launch = NULL;
}

int ksr_run_scenario(const ksr_run_opts *opts)
{
	ksr_run run = {.opts = opts};
	ksr_err err = {0};
	ksr_errlist errs = {0};
	if (ksr_cancel_install() < 0) {
		message(opts, "cannot install signal handlers");
		return 2;
	}
	set_deadlines(&run);
	make_run_id(run.run_id, sizeof run.run_id);
	run.sc = ksr_scenario_load(opts->scenario_path, &errs);
	run.out = ksr_evidence_open(opts->out_dir, &err);
	if (!run.out) {
		message(opts, "output-unwritable: cannot use the evidence folder %s: %s",
		        opts->out_dir, err.msg);
		if (!run.sc) {
			char *all = format_load_errors(opts->scenario_path, &errs);
			message(opts, "%s", all);
			free(all);
		}
		ksr_errlist_free(&errs);
		ksr_scenario_free(run.sc);
		return 2;
	}
	run.ev = ksr_events_create();
	ksr_events_attach_trace(run.ev, ksr_evidence_trace_fd(run.out));
	pthread_mutex_init(&run.lock, NULL);
	if (ksr_watchdog_start(&run) < 0)
		message(opts, "the watchdog thread could not be started; a blocked call could "
		              "outlive the deadline");
	emit_run_start(&run, run.sc ? run.sc->name : opts->scenario_path,
	               run.sc ? run.sc->sha256 : NULL);
	if (!run.sc)
		record_invalid_scenario(&run, &errs);
	else
		ksr_stages_run(&run);
	if (run.sc && opts->on_stages_done) {
		run.current_stage = "inspecting the app after the steps";
		opts->on_stages_done(opts->on_stages_done_ud);
	}
	if (run.failed) {
		run.current_stage = "diagnosis";
		ksr_diagnose(&run);
	} else if (run.sc) {
		run.current_stage = "the final screenshot";
		ksr_run_final_shot(&run); /* before the video stops: its last frame is this */
	}
	run.current_stage = "teardown (stopping the app and the display)";
	ksr_run_video_stop(&run); /* while the display is still there */
	teardown(&run);
	ksr_watchdog_stop(&run);
	int code = ksr_run_finish_report(&run);
	ksr_session_stop(run.session);
	run.session = NULL;
	ksr_events_free(run.ev);
	pthread_mutex_destroy(&run.lock);
	ksr_evidence_close(run.out);
	ksr_scenario_free(run.sc);
	ksr_errlist_free(&errs);
	return code;
}
