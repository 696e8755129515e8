// A bridge between tests/integration/test_mcp_*.py and the official MCP
// TypeScript SDK client: the server command comes after "--" (stdio), or
// "--url URL" names a Streamable HTTP server; requests arrive as JSON lines on
// stdin ({"op": ...}), each answer is one JSON line on stdout.
// Everything MCP goes through the SDK (its framing, its structuredContent
// validation against outputSchema, its progress and cancellation).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import readline from "node:readline";

const urlAt = process.argv.indexOf("--url");
const sep = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(sep + 1);
const transport = urlAt > 0
  ? new StreamableHTTPClientTransport(new URL(process.argv[urlAt + 1]))
  : new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "ksr-it-client", version: "1.0.0" });

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

async function call(req) {
  const progress = [];
  const ac = new AbortController();
  const opts = { signal: ac.signal, timeout: req.timeout_ms ?? 120000 };
  if (req.progress || req.cancel_on_progress) {
    opts.onprogress = (p) => {
      progress.push(p);
      if (req.cancel_on_progress && p.message && p.message.includes(req.cancel_on_progress))
        ac.abort("test cancels");
    };
  }
  if (req.cancel_after_ms) setTimeout(() => ac.abort("test cancels"), req.cancel_after_ms);
  const t0 = Date.now();
  try {
    const result = await client.callTool({ name: req.name, arguments: req.args ?? {} }, undefined, opts);
    return { ok: true, result, progress, ms: Date.now() - t0 };
  } catch (e) {
    return { ok: false, error: String(e?.message ?? e), code: e?.code ?? null, aborted: ac.signal.aborted,
             progress, ms: Date.now() - t0 };
  }
}

async function handle(req) {
  switch (req.op) {
  case "hello":
    return { ok: true, server: client.getServerVersion(), caps: client.getServerCapabilities() };
  case "list":
    return { ok: true, result: await client.listTools() };
  case "ping":
    await client.ping();
    return { ok: true };
  case "resources":
    return { ok: true, result: await client.listResources() };
  case "read":
    try {
      return { ok: true, result: await client.readResource({ uri: req.uri }) };
    } catch (e) {
      return { ok: false, error: String(e?.message ?? e), code: e?.code ?? null };
    }
  case "call":
    return await call(req);
  case "close":
    await client.close();
    return { ok: true };
  default:
    return { ok: false, error: "unknown op " + req.op };
  }
}

try {
  await client.connect(transport);
} catch (e) {
  say({ ok: false, error: "connect: " + String(e?.message ?? e) });
  process.exit(1);
}
say({ ok: true, connected: true });
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let req;
  try {
    req = JSON.parse(line);
    say(await handle(req));
  } catch (e) {
    say({ ok: false, error: String(e?.message ?? e) });
  }
  if (req?.op === "close") process.exit(0);
}
await client.close();
