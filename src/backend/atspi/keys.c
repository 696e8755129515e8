/* A control's key bindings (the MCP a11y.find tool's "shortcut"): the third
 * member of each Action.GetActions entry, read for one node on demand. The walk
 * keeps only action names (it never needed the bindings), so this is a
 * separate call and a separate file. */
#include "backend/atspi/priv.h"

#include <stdlib.h>

void ksr_atspi_keys_clear(ksr_atspi_keys *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++) {
		free(k->action[i]);
		free(k->binding[i]);
	}
	free(k->action);
	free(k->binding);
	*k = (ksr_atspi_keys){0};
}

int ksr_atspi_action_keys(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d,
                          ksr_atspi_keys *out, ksr_err *err)
{
	*out = (ksr_atspi_keys){0};
	ksr_atspi_ctx_enter(a->ctx);
	GVariant *r = ksr_atspi_call(a->ctx, a->conn, app->bus, path, ATSPI_IFACE_ACTION,
	                             "GetActions", NULL, "(a(sss))", d, err);
	if (r) {
		GVariantIter *it = NULL;
		const char *name, *desc, *keys;
		g_variant_get(r, "(a(sss))", &it);
		size_t n = g_variant_iter_n_children(it);
		out->action = ksr_xcalloc(n ? n : 1, sizeof *out->action);
		out->binding = ksr_xcalloc(n ? n : 1, sizeof *out->binding);
		while (out->n < n && g_variant_iter_next(it, "(&s&s&s)", &name, &desc, &keys)) {
			out->action[out->n] = ksr_xstrdup(name);
			out->binding[out->n] = ksr_xstrdup(keys);
			out->n++;
		}
		g_variant_iter_free(it);
		g_variant_unref(r);
	}
	ksr_atspi_ctx_leave(a->ctx);
	return r ? 0 : -1;
}
