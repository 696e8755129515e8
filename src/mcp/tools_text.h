/* a11y.text (tools_text.c): its row of the tools table, kept here so that
 * the table in tools.c holds it in one line. */
#ifndef KSR_MCP_TOOLS_TEXT_H
#define KSR_MCP_TOOLS_TEXT_H

#include "mcp/mcp_priv.h"

int mcp_tool_a11y_text(ksr_mcp *m, const cJSON *a, mcp_result *r);

#define MCP_TOOL_A11Y_TEXT                                                                         \
	{                                                                                          \
		"a11y.text", "Control text",                                                       \
		        "A control's text (AT-SPI Text) or value (Value: spin buttons, sliders, "  \
		        "progress "                                                                \
		        "bars), read now, as the scenario check text: reads it. Without name: "    \
		        "the focused "                                                             \
		        "control, else the first showing one with text or a value (of role, when " \
		        "given).",                                                                 \
		        "{\"type\":\"object\",\"properties\":{\"pid\":{\"type\":\"integer\","      \
		        "\"minimum\":1,"                                                           \
		        "\"description\":\"the app's process\"},\"window\":{\"type\":\"string\","  \
		        "\"description\":\"a window title pattern (PCRE); its "                    \
		        "process\"},\"app\":{\"type\":"                                            \
		        "\"string\",\"description\":\"the AT-SPI application "                     \
		        "name\"},\"name\":{\"type\":"                                              \
		        "\"string\",\"description\":\"exact, or "                                  \
		        "/pattern/\"},\"role\":{\"type\":\"string\"}}}",                           \
		        "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"     \
		        "\"role\":{\"type\":"                                                      \
		        "\"string\"},\"name\":{\"type\":\"string\"},\"from\":{\"type\":"           \
		        "\"string\",\"enum\":["                                                    \
		        "\"text\",\"value\"]},\"text\":{\"type\":\"string\"}},\"required\":["      \
		        "\"path\",\"role\","                                                       \
		        "\"name\",\"from\",\"text\"]}",                                            \
		        true, false, false, mcp_tool_a11y_text                                     \
	}

#endif
