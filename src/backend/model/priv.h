/* Inside the model module (model.c, model_proto.c): request bodies and base64. */
#ifndef KSR_MODEL_PRIV_H
#define KSR_MODEL_PRIV_H

#include "ksr/model.h"

/* The protocol's request body (JSON text; free it). b64 may be NULL (no image). */
char *ksr_model_request_body(const ksr_model_config *cfg, const char *b64, const char *prompt,
                             const cJSON *schema);
char *ksr_model_base64(const unsigned char *data, size_t len); /* free it */

#endif
