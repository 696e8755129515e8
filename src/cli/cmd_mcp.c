/* mcp: serve the runtime's actions to outside agents over MCP (docs/mcp.md).
 * stdio here; --http is the Streamable HTTP transport. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ksr/deadline.h"
#include "ksr/mcp.h"
#include "ksr/mcp_http.h"

typedef struct mcp_args {
	const char *http;
	const char *token;
	ksr_mcp_opts o;
} mcp_args;

static int parse(int argc, char **argv, mcp_args *a)
{
	enum { OPT_HTTP = 1, OPT_NAMES, OPT_XVFB, OPT_TOKEN, OPT_EVIDENCE, OPT_SERVER, OPT_WM };
	static const struct option longopts[] = {
	        {"http", required_argument, NULL, OPT_HTTP},
	        {"tool-names", required_argument, NULL, OPT_NAMES},
	        {"xvfb", no_argument, NULL, OPT_XVFB},
	        {"token", required_argument, NULL, OPT_TOKEN},
	        {"evidence", required_argument, NULL, OPT_EVIDENCE},
	        {"display-server", required_argument, NULL, OPT_SERVER},
	        {"wm", required_argument, NULL, OPT_WM},
	        {NULL, 0, NULL, 0}};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == OPT_HTTP)
			a->http = optarg;
		else if (c == OPT_TOKEN)
			a->token = optarg;
		else if (c == OPT_XVFB)
			a->o.xvfb = true;
		else if (c == OPT_EVIDENCE)
			a->o.evidence_dir = optarg;
		else if (c == OPT_SERVER &&
		         ksr_session_parse_server(optarg, &a->o.display_server) < 0)
			return cli_usage_error(&cli_cmd_mcp,
			                       "--display-server '%s' is not xvfb, xvnc or auto",
			                       optarg);
		else if (c == OPT_WM && ksr_session_parse_wm(optarg, &a->o.wm) < 0)
			return cli_usage_error(&cli_cmd_mcp,
			                       "--wm '%s' is not openbox, xfwm4 or auto", optarg);
		else if (c == OPT_SERVER || c == OPT_WM)
			a->o.xvfb = true;
		else if (c == OPT_NAMES && !strcmp(optarg, "dots"))
			a->o.dotted_names = true;
		else if (c == OPT_NAMES && strcmp(optarg, "underscore"))
			return cli_usage_error(&cli_cmd_mcp, "--tool-names is underscore or dots");
		else if (c != OPT_NAMES)
			return cli_usage_error(&cli_cmd_mcp, "unknown or incomplete option '%s'",
			                       argv[optind - 1]);
	}
	if (optind < argc)
		return cli_usage_error(&cli_cmd_mcp, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* The protocol owns stdin and stdout: keep private copies and point fds 0 and
 * 1 at /dev/null and stderr, so an app a scenario launches (it inherits them)
 * can neither read requests nor write into the reply stream. */
static int take_stdio(int *in_fd, int *out_fd)
{
	*in_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	*out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (*in_fd < 0 || *out_fd < 0 || null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0)
		return -1;
	close(null);
	return 0;
}

static void on_listen(void *ud, const char *host, int port)
{
	(void)ud;
	/* Tests and wrappers read the bound port (for port 0) from this line. */
	cli_say("kasm-session-runtime mcp: ", "listening on http://%s%s%s:%d/mcp",
	        strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
}

/* --http: Streamable HTTP. stdin/stdout are not the protocol's here. */
static int serve_http(const mcp_args *a)
{
	const char *token = a->token ? a->token : getenv("KASM_RUNTIME_MCP_TOKEN");
	ksr_mcp_http_opts ho = {.listen = a->http, .token = token, .on_listen = on_listen};
	ksr_mcp_http_addr addr;
	ksr_err err = {0};
	/* Refuse a bad address or a tokenless public bind before starting a session. */
	if (ksr_mcp_http_parse_addr(a->http, &addr, &err) < 0)
		return cli_usage_error(&cli_cmd_mcp, "%s", err.msg);
	if (!addr.loopback && !(token && token[0]))
		return cli_usage_error(
		        &cli_cmd_mcp,
		        "--http %s is not loopback: set KASM_RUNTIME_MCP_TOKEN or --token",
		        a->http);
	ksr_cancel_install();
	ksr_mcp *m = ksr_mcp_create(&a->o, &err);
	if (!m) {
		cli_say("kasm-session-runtime mcp: ", "%s", err.msg);
		return 2;
	}
	int rc = ksr_mcp_serve_http(m, &ho, &err);
	if (rc < 0)
		cli_say("kasm-session-runtime mcp: ", "%s", err.msg);
	ksr_mcp_destroy(m);
	return rc < 0 ? 2 : 0;
}

static int exec_mcp(int argc, char **argv)
{
	mcp_args a = {0};
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc;
	if (a.http)
		return serve_http(&a);
	ksr_cancel_install();
	int in_fd, out_fd;
	if (take_stdio(&in_fd, &out_fd) < 0) {
		perror("kasm-session-runtime mcp: standard input/output");
		return 2;
	}
	ksr_err err = {0};
	ksr_mcp *m = ksr_mcp_create(&a.o, &err);
	if (!m) {
		cli_say("kasm-session-runtime mcp: ", "%s", err.msg);
		return 2;
	}
	rc = ksr_mcp_serve_stdio(m, in_fd, out_fd, &err);
	if (rc < 0)
		cli_say("kasm-session-runtime mcp: ", "%s", err.msg);
	ksr_mcp_destroy(m);
	close(in_fd);
	close(out_fd);
	return rc < 0 ? 2 : 0;
}

const cli_command cli_cmd_mcp = {
        .name = "mcp",
        .summary = "serve the runtime's actions to outside agents (MCP)",
        .usage =
                "usage: kasm-session-runtime mcp [--http HOST:PORT] [--tool-names underscore|dots] "
                "[--xvfb] [--display-server xvfb|xvnc|auto] [--wm openbox|xfwm4|auto]\n"
                "       [--token TOKEN] [--evidence DIR]\n\n"
                "Model Context Protocol server (revision 2025-11-25; 2025-06-18 and 2025-03-26\n"
                "on request). Without --http: newline-delimited JSON-RPC on stdin/stdout, logs\n"
                "on stderr, exit 0 at end of input.\n\n"
                "  --http HOST:PORT     Streamable HTTP (POST /mcp) instead of stdio; loopback\n"
                "                       unless HOST says otherwise; port 0 picks a free one\n"
                "  --token TOKEN        bearer token for --http (default\n"
                "                       $KASM_RUNTIME_MCP_TOKEN); required off loopback\n"
                "  --tool-names MODE    underscore (input_click, default: every client accepts\n"
                "                       it) or dots (input.click); calls accept both\n"
                "  --xvfb               a private display + window manager + AT-SPI for the tools\n"
                "  --display-server S   its X server: xvfb, xvnc (Xtigervnc, VNC on loopback\n"
                "                       only) or auto (Xvfb when installed); implies --xvfb\n"
                "  --wm W               its window manager: openbox, xfwm4 or auto; implies "
                "--xvfb\n"
                "  --evidence DIR       where linked screenshots are written (kept); default a\n"
                "                       temporary folder removed at exit\n\n"
                "Tools: screen_capture, screen_wait, screen_ground, input_click/move/drag/\n"
                "scroll/type/key, window_list/focus, a11y_tree/find/click/state,\n"
                "cdp_list_interactive/click/fill/navigate, scenario_run. Coordinates are in\n"
                "the last screenshot's space. Resources: the linked screenshots.\n",
        .exec = exec_mcp,
};
