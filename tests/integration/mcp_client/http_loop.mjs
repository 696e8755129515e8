// For tests/integration/test_mcp_http.py: N sequential requests through the
// official SDK client's StreamableHTTPClientTransport (the transport bench/mcp.sh
// measures), alternating tools/call window.list, tools/call screen.capture and
// ping, each with its own deadline; stops at the third failure. Prints one JSON line:
//   {"n": requests made, "failures": [{"i", "what", "error"}...], "max_ms", "median_ms", "slowest": i}
//   node http_loop.mjs URL N TIMEOUT_MS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, nArg, timeoutArg] = process.argv.slice(2);
const n = Number(nArg);
const timeout = Number(timeoutArg);
const client = new Client({ name: "ksr-it-http-loop", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const steps = [
  ["window.list", () => client.callTool({ name: "window.list", arguments: {} }, undefined, { timeout })],
  ["screen.capture", () => client.callTool({ name: "screen.capture", arguments: {} }, undefined, { timeout })],
  ["ping", () => client.ping({ timeout })],
];
const failures = [];
const ms = [];
let slowest = -1;
for (let i = 0; i < n; i++) {
  const [what, fn] = steps[i % steps.length];
  const t0 = process.hrtime.bigint();
  try {
    const r = await fn();
    if (what !== "ping" && (r.isError || !r.structuredContent))
      failures.push({ i, what, error: "not a result: " + JSON.stringify(r).slice(0, 300) });
  } catch (e) {
    failures.push({ i, what, error: String(e?.message ?? e) });
  }
  const t = Number(process.hrtime.bigint() - t0) / 1e6;
  if (slowest < 0 || t > ms[slowest]) slowest = i;
  ms.push(t);
  if (failures.length >= 3) break; // each one cost a timeout: enough to tell
}
await client.close();
const sorted = [...ms].sort((a, b) => a - b);
console.log(JSON.stringify({ n: ms.length, failures, max_ms: ms[slowest],
                             median_ms: sorted[ms.length >> 1], slowest }));
process.exit(0);
