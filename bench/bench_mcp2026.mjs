// MCP 2026-07-28 against 2025-11-25 in the same run, on the same display:
// window_list and input_click round trips through the SDK v2 client pinned to
// 2026-07-28 (@modelcontextprotocol/client: stateless, the _meta envelope on
// every request) and through the 2025 SDK client (@modelcontextprotocol/sdk,
// initialize'd session), over stdio and Streamable HTTP; then scenario_run as
// a task (ext-tasks polling tasks/get, HTTP) against the streamed request (2025
// client, progress on the request): time to verdict, and the run's own time
// (report.json timings.duration_ms) subtracted for the server's added latency.
// Prints "ROW name median p95" lines and a table.
//   node bench/bench_mcp2026.mjs BIN N   (DISPLAY set: bench/mcp.sh does it)
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const nm = path.join(here, "..", "tests", "integration", "mcp_client", "node_modules");
const req = createRequire(path.join(nm, "..", "package.json"));
// The v2 packages export ESM only (an "import" condition): named by file.
const esm = {
  "@modelcontextprotocol/client": "@modelcontextprotocol/client/dist/index.mjs",
  "@modelcontextprotocol/client/stdio": "@modelcontextprotocol/client/dist/stdio.mjs",
  "@modelcontextprotocol/ext-tasks/client": "@modelcontextprotocol/ext-tasks/dist/client/index.js",
};
const imp = (p) => import(esm[p] ? path.join(nm, esm[p]) : req.resolve(p));
const v1 = await imp("@modelcontextprotocol/sdk/client/index.js");
const v1stdio = await imp("@modelcontextprotocol/sdk/client/stdio.js");
const v1http = await imp("@modelcontextprotocol/sdk/client/streamableHttp.js");
const v2 = await imp("@modelcontextprotocol/client");
const v2stdio = await imp("@modelcontextprotocol/client/stdio");
const tasks = await imp("@modelcontextprotocol/ext-tasks/client");

const [bin, nArg] = process.argv.slice(2);
const n = Number(nArg || 50);
const runs = Math.max(3, Math.min(10, Math.floor(n / 10)));
const V = "2026-07-28";
const info = { name: "ksr-bench-2026", version: "1.0.0" };
const caps = { extensions: { "io.modelcontextprotocol/tasks": {} } };

const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const p95 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length * 0.95)]; };
async function timed(fn, times) {
  const out = [];
  for (let i = 0; i < times; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
}
const figures = {};
function row(name, ms) {
  console.log(`ROW ${name} ${med(ms).toFixed(3)} ${p95(ms).toFixed(3)}`);
  figures[name] = med(ms);
}

async function httpServer() {
  const srv = spawn(bin, ["mcp", "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
  const port = await new Promise((ok, bad) => {
    let buf = "";
    srv.stderr.on("data", (d) => {
      buf += d;
      const m = /listening on http:\/\/\S+:(\d+)\/mcp/.exec(buf);
      if (m) ok(Number(m[1]));
    });
    srv.on("exit", () => bad(new Error("server exited: " + buf)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => srv.kill("SIGTERM") };
}

async function connect(rev, kind) {
  const srv = kind === "http" ? await httpServer() : null;
  const client = rev === V
    ? new v2.Client(info, { capabilities: caps, versionNegotiation: { mode: { pin: V } } })
    : new v1.Client(info);
  const T = rev === V
    ? (kind === "http" ? v2.StreamableHTTPClientTransport : v2stdio.StdioClientTransport)
    : (kind === "http" ? v1http.StreamableHTTPClientTransport : v1stdio.StdioClientTransport);
  const t = kind === "http" ? new T(new URL(srv.url))
    : new T({ command: bin, args: ["mcp"], env: process.env, stderr: "ignore" });
  await client.connect(t);
  return { client, url: srv?.url, close: async () => { await client.close(); srv?.stop(); } };
}

for (const kind of ["stdio", "http"]) {
  for (const rev of [V, "2025-11-25"]) {
    const s = await connect(rev, kind);
    const tag = `${kind}.${rev === V ? "2026" : "2025"}`;
    row(`${tag}.window_list`, await timed(() => s.client.callTool({ name: "window_list", arguments: {} }), n));
    row(`${tag}.input_click`, await timed(
      (i) => s.client.callTool({ name: "input_click", arguments: { x: 5 + (i % 20), y: 5 } }), n));
    await s.close();
  }
}

// scenario_run: a desktop scenario of one short step, its evidence in a fresh folder.
const yaml = "name: bench\ndesktop: true\nsettle_s: 0.3\nsteps:\n  - sleep: 0.2\n";
const runMs = (out) => {
  const ms = JSON.parse(readFileSync(path.join(out, "report.json"), "utf8")).timings.duration_ms;
  rmSync(out, { recursive: true, force: true });
  return ms;
};
const fresh = () => mkdtempSync(path.join(os.tmpdir(), "ksr-bench-mcp-"));

async function rawDispatch(url, request, options = {}) {
  const msg = { jsonrpc: "2.0", ...request, id: "raw-" + Math.random() };
  const name = msg.params?.name ?? msg.params?.taskId;
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream",
                    "mcp-protocol-version": V, "mcp-method": msg.method };
  if (name !== undefined) headers["mcp-name"] = String(name);
  const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(msg), signal: options.signal });
  const text = await r.text();
  const m = (r.headers.get("content-type") ?? "").includes("event-stream")
    ? JSON.parse(text.split("\n").filter((l) => l.startsWith("data:")).pop().slice(5)) : JSON.parse(text);
  return m.error ? { kind: "error", error: m.error } : { kind: "result", result: m.result };
}

{
  const s = await connect(V, "http");
  const session = tasks.createTaskSessionFromClient(s.client, {
    endpointId: s.url, rawDispatch: (r, o) => rawDispatch(s.url, r, o),
    v2RequestFraming: { protocolVersion: V, clientInfo: info, clientCapabilities: caps } });
  const added = [];
  row("http.2026.scenario_task", await timed(async () => {
    const out = fresh();
    const t0 = Date.now();
    const exec = await session.callTool("scenario_run", { yaml, out }, { task: { preference: "prefer" } });
    const { outcome } = await exec.settle();
    tasks.resultFromTaskOutcome(outcome);
    added.push(Date.now() - t0 - runMs(out));
  }, runs));
  row("http.2026.scenario_task_added", added);
  await session.close();
  await s.close();
}
for (const kind of ["stdio", "http"]) {
  const s = await connect("2025-11-25", kind);
  const added = [];
  row(`${kind}.2025.scenario_streamed`, await timed(async () => {
    const out = fresh();
    const t0 = Date.now();
    await s.client.callTool({ name: "scenario_run", arguments: { yaml, out } }, undefined,
                            { onprogress: () => {}, timeout: 120000 });
    added.push(Date.now() - t0 - runMs(out));
  }, runs));
  row(`${kind}.2025.scenario_streamed_added`, added);
  await s.close();
}

console.log("\n| round trip (median ms) | stdio 2026 | stdio 2025 | HTTP 2026 | HTTP 2025 |");
console.log("|---|---|---|---|---|");
for (const t of ["window_list", "input_click"])
  console.log(`| ${t} | ${["stdio.2026", "stdio.2025", "http.2026", "http.2025"]
    .map((k) => figures[`${k}.${t}`].toFixed(2)).join(" | ")} |`);
console.log(`\nscenario_run to verdict (median of ${runs}): task over HTTP ` +
  `${figures["http.2026.scenario_task"].toFixed(0)} ms (added ${figures["http.2026.scenario_task_added"].toFixed(0)}), ` +
  `streamed over HTTP ${figures["http.2025.scenario_streamed"].toFixed(0)} ms (added ` +
  `${figures["http.2025.scenario_streamed_added"].toFixed(0)}), streamed over stdio ` +
  `${figures["stdio.2025.scenario_streamed"].toFixed(0)} ms (added ${figures["stdio.2025.scenario_streamed_added"].toFixed(0)})`);
