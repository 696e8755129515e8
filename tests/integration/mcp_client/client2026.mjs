// A bridge between tests/integration/test_mcp_2026.py and the MCP TypeScript
// SDK v2 client (@modelcontextprotocol/client, pinned to protocol 2026-07-28:
// no initialize, the _meta envelope on every request) with the tasks
// extension's client (@modelcontextprotocol/ext-tasks). The server command
// comes after "--" (stdio), or "--url URL" names a Streamable HTTP server;
// requests arrive as JSON lines on stdin ({"op": ...}), each answer is one
// JSON line on stdout.
//
// ext-tasks drives the task flow (tools/call -> CreateTaskResult, tasks/get
// polling, tasks/cancel) but leaves the wire to the host for 2026 task
// traffic (the SDK's codec refuses resultType "task"): its rawDispatch is the
// host's request coordinator. Here that is the smallest one: over HTTP a POST
// with the transport's headers, over stdio a message written through the same
// transport the SDK client uses, its answer taken off before the client sees
// it. Every message the client side sends is recorded (op "traffic"), so the
// test can check what went on the wire.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import readline from "node:readline";

const VERSION = "2026-07-28";
const urlAt = process.argv.indexOf("--url");
const url = urlAt > 0 ? process.argv[urlAt + 1] : null;
const sep = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(sep + 1);
const clientInfo = { name: "ksr-it-client-2026", version: "1.0.0" };
const clientCapabilities = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const sent = []; // every message the client side wrote: {method, id, via}

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

// A transport that records what passes and lets the raw coordinator take its
// own answers (ids "raw-N") off a shared stdio channel.
class Recording {
  constructor(inner) {
    this.inner = inner;
    this.raw = new Map();
    inner.onmessage = (m, extra) => {
      const waiter = m && typeof m.id === "string" ? this.raw.get(m.id) : undefined;
      if (waiter) { this.raw.delete(m.id); waiter(m); return; }
      this.onmessage?.(m, extra);
    };
    inner.onerror = (e) => this.onerror?.(e);
    inner.onclose = () => this.onclose?.();
  }
  start() { return this.inner.start(); }
  close() { return this.inner.close(); }
  send(m, opts) {
    sent.push({ method: m.method ?? null, id: m.id ?? null, via: "sdk" });
    return this.inner.send(m, opts);
  }
  setProtocolVersion(v) { this.inner.setProtocolVersion?.(v); }
  get sessionId() { return this.inner.sessionId; }
}

const transport = new Recording(url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
const client = new Client(clientInfo, {
  capabilities: clientCapabilities,
  versionNegotiation: { mode: { pin: VERSION } },
});

let rawSeq = 0;
function asResponse(m) {
  return m.error ? { kind: "error", error: m.error } : { kind: "result", result: m.result };
}

// The last JSON-RPC message of an SSE body (or the JSON body itself).
function lastMessage(type, text) {
  if (!type.includes("text/event-stream")) return JSON.parse(text);
  const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim());
  return JSON.parse(data[data.length - 1]);
}

async function rawHttp(msg, signal) {
  const name = msg.params?.name ?? msg.params?.uri ?? msg.params?.taskId;
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": msg.method,
  };
  if (name !== undefined) headers["mcp-name"] = String(name);
  const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(msg), signal });
  return lastMessage(r.headers.get("content-type") ?? "", await r.text());
}

function rawStdio(msg, signal) {
  return new Promise((resolve, reject) => {
    transport.raw.set(msg.id, resolve);
    signal?.addEventListener("abort", () => {
      transport.raw.delete(msg.id);
      transport.inner.send({ jsonrpc: "2.0", method: "notifications/cancelled",
                             params: { requestId: msg.id, reason: "aborted" } });
      reject(new Error("aborted"));
    });
    transport.inner.send(msg).catch(reject);
  });
}

async function rawDispatch(request, options = {}) {
  const msg = { jsonrpc: "2.0", ...request, id: "raw-" + ++rawSeq };
  sent.push({ method: msg.method, id: msg.id, via: "tasks" });
  const m = url ? await rawHttp(msg, options.signal) : await rawStdio(msg, options.signal);
  return asResponse(m);
}

let session;
function tasks() {
  session ??= createTaskSessionFromClient(client, {
    endpointId: url ?? "stdio",
    rawDispatch,
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities },
  });
  return session;
}

// Run a tool through ext-tasks: the statuses it saw while polling, the outcome.
async function taskRun(req) {
  const exec = await tasks().callTool(req.name, req.args ?? {}, { task: { preference: "prefer" } });
  const statuses = [];
  let cancelled = false;
  const settled = await exec.settle({
    onEvent: async (ev) => {
      if (ev.type !== "task") return;
      statuses.push({ status: ev.task.status, message: ev.task.statusMessage ?? null });
      const hit = req.cancel_on && (ev.task.statusMessage ?? "").includes(req.cancel_on);
      if (hit && !cancelled) { cancelled = true; await exec.cancel(); }
    },
  });
  const out = { ok: true, kind: exec.kind, taskId: exec.handle?.taskId ?? null,
                outcome: settled.outcome.kind ?? settled.outcome.status ?? null,
                last: settled.lastTask ?? null, statuses, cancelled };
  try {
    out.result = resultFromTaskOutcome(settled.outcome);
  } catch (e) {
    out.error = String(e?.message ?? e);
  }
  return out;
}

// A tool call through ext-tasks left running: its kind ("task", or
// "immediate" when the server answered with the result) and handle; the
// execution is kept for task_settle / task_cancel, so the test can act on the
// desktop while the task works.
const running = new Map();
async function taskStart(req) {
  const exec = await tasks().callTool(req.name, req.args ?? {}, { task: { preference: "prefer" } });
  const taskId = exec.handle?.taskId ?? null;
  if (taskId) running.set(taskId, exec);
  else return { ok: true, kind: exec.kind, taskId, result: resultFromTaskOutcome(await exec.result()) };
  return { ok: true, kind: exec.kind, taskId };
}

async function taskSettle(req) {
  const exec = running.get(req.taskId);
  running.delete(req.taskId);
  const settled = await exec.settle();
  const out = { ok: true, outcome: settled.outcome.kind ?? settled.outcome.status ?? null,
                last: settled.lastTask ?? null };
  try {
    out.result = resultFromTaskOutcome(settled.outcome);
  } catch (e) {
    out.error = String(e?.message ?? e);
  }
  return out;
}

async function taskCancel(req) {
  const exec = running.get(req.taskId);
  running.delete(req.taskId);
  await exec.cancel();
  return { ok: true };
}

// A task's state as the server tells it now (tasks/get through the coordinator).
async function taskGet(req) {
  const _meta = { "io.modelcontextprotocol/protocolVersion": VERSION,
                  "io.modelcontextprotocol/clientInfo": clientInfo,
                  "io.modelcontextprotocol/clientCapabilities": clientCapabilities };
  const r = await rawDispatch({ method: "tasks/get", params: { taskId: req.taskId, _meta } });
  return { ok: r.kind === "result", ...r };
}

async function handle(req) {
  switch (req.op) {
  case "hello":
    return { ok: true, era: client.getProtocolEra?.() ?? null, server: client.getServerVersion(),
             caps: client.getServerCapabilities() };
  case "list":
    return { ok: true, result: await client.listTools() };
  case "call": {
    const t0 = Date.now();
    try {
      const result = await client.callTool({ name: req.name, arguments: req.args ?? {} });
      return { ok: true, result, ms: Date.now() - t0 };
    } catch (e) {
      return { ok: false, error: String(e?.message ?? e), code: e?.code ?? null };
    }
  }
  case "task_run":
    return await taskRun(req);
  case "task_get":
    return await taskGet(req);
  case "read":
    try {
      return { ok: true, result: await client.readResource({ uri: req.uri }) };
    } catch (e) {
      return { ok: false, error: String(e?.message ?? e), code: e?.code ?? null };
    }
  case "task_start":
    return await taskStart(req);
  case "task_settle":
    return await taskSettle(req);
  case "task_cancel":
    return await taskCancel(req);
  case "traffic":
    return { ok: true, sent };
  case "close":
    await session?.close();
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
    say({ ok: false, error: String(e?.stack ?? e?.message ?? e) });
  }
  if (req?.op === "close") process.exit(0);
}
await session?.close();
await client.close();
