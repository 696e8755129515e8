/* Judgements outside steps (first look, failure screen) and what every
 * vision caller shares: configuration, the prepared screenshot, model_call
 * events. A model here is optional: unreachable, it adds a concern at most,
 * and nothing it says can clear a failure (the verdict takes the first
 * failure; these only ever add one). */
#include "run/vision/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIBE_MAX_MS 20000 /* diagnosis runs in the reserve: keep the report's share */

int ksr_judge_config(ksr_model_role role, ksr_model_config *cfg, char *why, size_t len)
{
	ksr_err err = {0};
	int rc = ksr_model_config_load(role, NULL, NULL, cfg, &err);
	if (rc < 0)
		snprintf(why, len, "the %s model is misconfigured: %s", ksr_model_role_name(role),
		         err.msg);
	else if (rc == 0)
		snprintf(why, len,
		         "no model is configured for the %s (set KASM_RUNTIME_MODEL and "
		         "KASM_RUNTIME_MODEL_URL, or KASM_RUNTIME_%s_MODEL)",
		         ksr_model_role_name(role),
		         role == KSR_MODEL_GROUNDER ? "GROUNDER" : "JUDGE");
	else
		why[0] = '\0';
	return rc;
}

int ksr_judge_capture(ksr_run *run, ksr_image **full, ksr_model_image *img, ksr_err *err)
{
	if (full)
		*full = NULL;
	ksr_image *shot = ksr_run_capture(run, err);
	if (!shot)
		return -1;
	int rc = ksr_model_image_prepare(shot, KSR_MODEL_MAX_EDGE, img, err);
	if (full && rc == 0)
		*full = shot;
	else
		ksr_image_free(shot);
	return rc;
}

void ksr_judge_emit_call(ksr_run *run, const ksr_model_config *cfg, const char *purpose,
                         const ksr_model_usage *u)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "role", ksr_model_role_name(cfg->role));
	cJSON_AddBoolToObject(f, "ok", u->ok);
	cJSON_AddNumberToObject(f, "ms", (double)u->ms);
	cJSON_AddStringToObject(f, "purpose", purpose);
	cJSON_AddStringToObject(f, "model", cfg->model);
	cJSON_AddStringToObject(f, "api", ksr_model_api_name(cfg->api));
	cJSON_AddNumberToObject(f, "attempts", u->attempts);
	if (u->http_status)
		cJSON_AddNumberToObject(f, "status", u->http_status);
	if (u->error[0])
		cJSON_AddStringToObject(f, "error", u->error);
	ksr_run_emit(run, "model_call", f);
}

static ksr_deadline call_deadline(const ksr_run *run)
{
	return ksr_deadline_min(run->work, ksr_deadline_in_ms(KSR_JUDGE_CALL_S * 1000));
}

static void emit_judgement(ksr_run *run, ksr_model_answer rendered, ksr_model_answer error,
                           const char *reason)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "what", "first-look");
	cJSON_AddStringToObject(f, "rendered", ksr_model_answer_name(rendered));
	cJSON_AddStringToObject(f, "error_showing", ksr_model_answer_name(error));
	cJSON_AddStringToObject(f, "reason", reason);
	ksr_run_emit(run, "judgement", f);
}

/* The answers decide: an error on screen first (the more specific finding). */
static void decide_first_look(ksr_run *run, ksr_model_answer rendered, ksr_model_answer error,
                              const char *reason, char *note, size_t len)
{
	if (error == KSR_MODEL_YES) {
		ksr_run_fail(run, KSR_OUTCOME_ERROR_DIALOG, 0,
		             "the judge sees an error on the first-look screen: %.300s", reason);
		snprintf(note, len, "judge: an error is showing");
	} else if (rendered == KSR_MODEL_NO) {
		ksr_run_fail(
		        run, KSR_OUTCOME_NOT_RENDERED, 0,
		        "the judge says the app did not render on the first-look screen: %.300s",
		        reason);
		snprintf(note, len, "judge: not rendered");
	} else {
		snprintf(note, len, "judge: rendered, no error");
	}
}

void ksr_judge_first_look(ksr_run *run, const ksr_image *screen, char *note, size_t len)
{
	ksr_model_config cfg;
	char why[400], reason[400] = "";
	int rc = ksr_judge_config(KSR_MODEL_JUDGE, &cfg, why, sizeof why);
	snprintf(note, len, "not judged (no model)");
	if (rc <= 0 || !screen) {
		if (rc < 0)
			ksr_run_concern(run, KSR_CONCERN_MODEL_UNREACHABLE, 0,
			                "the first look was not judged: %s", why);
		return;
	}
	ksr_model_image img = {0};
	ksr_err err = {0};
	ksr_model_answer rendered = KSR_MODEL_INCONCLUSIVE, error = KSR_MODEL_INCONCLUSIVE;
	ksr_model_usage u = {0};
	if (ksr_model_image_prepare(screen, KSR_MODEL_MAX_EDGE, &img, &err) == 0) {
		ksr_model_first_look(&cfg, &img, call_deadline(run), &rendered, &error, reason,
		                     sizeof reason, &u);
		ksr_judge_emit_call(run, &cfg, "first-look", &u);
	} else {
		snprintf(u.error, sizeof u.error, "%.250s", err.msg);
	}
	ksr_model_image_clear(&img);
	ksr_model_redact(reason, sizeof reason, cfg.api_key);
	explicit_bzero(cfg.api_key, sizeof cfg.api_key);
	if (ksr_cancelled() || ksr_deadline_passed(run->work)) {
		ksr_run_wait_ended_run(run, ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT,
		                       0, "the first-look judgement");
		return;
	}
	emit_judgement(run, rendered, error, reason);
	if (rendered == KSR_MODEL_INCONCLUSIVE) {
		ksr_run_concern(run, KSR_CONCERN_MODEL_UNREACHABLE, 0,
		                "the judge could not be asked whether the app rendered: %s",
		                u.error);
		snprintf(note, len, "judge unreachable");
		return;
	}
	decide_first_look(run, rendered, error, reason, note, len);
}

static void save_description(ksr_run *run, const char *text)
{
	ksr_err err = {0};
	static const char name[] = "99-failure-description.txt";
	char *body = ksr_xasprintf("%s\n", text);
	if (ksr_evidence_write_text(run->out, name, body, strlen(body), &err) == 0) {
		char what[480];
		snprintf(what, sizeof what, "the judge's description of 99-failure.png: %.400s",
		         text);
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "name", name);
		cJSON_AddStringToObject(a, "kind", "other");
		cJSON_AddStringToObject(a, "description", what);
		ksr_run_emit(run, "artifact", a);
	}
	free(body);
}

bool ksr_judge_describe_failure(ksr_run *run, char *note, size_t len)
{
	ksr_model_config cfg;
	char why[400], text[1200] = "";
	if (ksr_judge_config(KSR_MODEL_JUDGE, &cfg, why, sizeof why) <= 0 || ksr_cancelled())
		return false;
	int64_t budget = ksr_deadline_remaining_ms(run->hard) / 3;
	ksr_deadline d = ksr_deadline_in_ms(budget < DESCRIBE_MAX_MS ? budget : DESCRIBE_MAX_MS);
	ksr_model_image img = {0};
	ksr_err err = {0};
	ksr_model_usage u = {0};
	int rc = -1;
	if (ksr_judge_capture(run, NULL, &img, &err) == 0) {
		rc = ksr_model_describe(&cfg, &img, d, text, sizeof text, &u);
		ksr_judge_emit_call(run, &cfg, "failure-description", &u);
	}
	ksr_model_image_clear(&img);
	ksr_model_redact(text, sizeof text, cfg.api_key);
	explicit_bzero(cfg.api_key, sizeof cfg.api_key);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddBoolToObject(f, "ok", rc == 0);
	cJSON_AddStringToObject(f, "text", rc == 0 ? text : "");
	if (rc != 0)
		cJSON_AddStringToObject(f, "error", u.error[0] ? u.error : err.msg);
	ksr_run_emit(run, "screen_description", f);
	if (rc == 0)
		save_description(run, text);
	snprintf(note, len,
	         rc == 0 ? "failure screen described by the judge"
	                 : "the judge could not describe the failure screen");
	return true;
}
