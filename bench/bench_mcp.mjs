// MCP round trips through the official SDK client (the one the tests pin in
// tests/integration/mcp_client): screen.capture (downscaled PNG, base64) and
// input.click, over stdio and over Streamable HTTP, beside the established
// tools doing the same job on the same display (xdotool click, ImageMagick
// import), and the server's RSS over 10,000 tool calls.
//   node bench/bench_mcp.mjs BIN N   (DISPLAY set: bench/mcp.sh does it)
import { createRequire } from "node:module";
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const req = createRequire(path.join(here, "..", "tests", "integration", "mcp_client", "package.json"));
const { Client } = await import(req.resolve("@modelcontextprotocol/sdk/client/index.js"));
const { StdioClientTransport } = await import(req.resolve("@modelcontextprotocol/sdk/client/stdio.js"));
const { StreamableHTTPClientTransport } = await import(
  req.resolve("@modelcontextprotocol/sdk/client/streamableHttp.js"));

const [bin, nArg] = process.argv.slice(2);
const n = Number(nArg || 50);
const RSS_CALLS = 10000;

const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const p95 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length * 0.95)]; };
const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);

async function timed(fn, times) {
  const out = [];
  for (let i = 0; i < times; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
}

function row(name, ms) {
  console.log(`ROW ${name} ${med(ms).toFixed(3)} ${p95(ms).toFixed(3)}`);
  return med(ms);
}

async function connect(kind) {
  const client = new Client({ name: "ksr-bench", version: "1.0.0" });
  if (kind === "stdio") {
    const t = new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "ignore" });
    await client.connect(t);
    return { client, pid: t.pid, close: () => client.close() };
  }
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
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  return { client, pid: srv.pid, close: async () => { await client.close(); srv.kill("SIGTERM"); } };
}

const figures = {};
for (const kind of ["stdio", "http"]) {
  const s = await connect(kind);
  const cap = await s.client.callTool({ name: "screen.capture", arguments: {} });
  const img = cap.content.find((c) => c.type === "image");
  console.log(`# ${kind}: capture ${cap.structuredContent.width}x${cap.structuredContent.height}, ` +
    `scale ${cap.structuredContent.scale}, base64 ${img.data.length} bytes`);
  figures[`${kind}.capture`] = row(`${kind}.capture`,
    await timed(() => s.client.callTool({ name: "screen.capture", arguments: {} }), n));
  figures[`${kind}.click`] = row(`${kind}.click`, await timed((i) => s.client.callTool(
    { name: "input.click", arguments: { x: 100 + (i % 50), y: 100 } }), n));
  figures[`${kind}.ping`] = row(`${kind}.ping`, await timed(() => s.client.ping(), n));
  if (kind === "stdio" || process.env.KSR_BENCH_RSS_HTTP) {
    const points = [];
    for (let i = 0; i <= RSS_CALLS; i++) {
      if (i % 2000 === 0) points.push(`${i}:${rss(s.pid)}`);
      if (i < RSS_CALLS) await s.client.callTool({ name: "window.list", arguments: {} });
    }
    console.log(`RSS ${kind} window.list calls:KiB ${points.join(" ")}`);
  }
  await s.close();
}
// The established tools, same display, same run.
figures["xdotool.click"] = row("xdotool.click", await timed((i) =>
  execFileSync("xdotool", ["mousemove", String(100 + (i % 50)), "100", "click", "1"]), n));
figures["import.capture"] = row("import.capture", await timed(() =>
  execFileSync("import", ["-window", "root", "png:-"], { maxBuffer: 64 << 20 }), Math.min(n, 20)));
console.log("");
console.log(`| figure (ms, median of ${n}) | ksr over MCP | established tool | ratio |`);
console.log("|---|---|---|---|");
for (const kind of ["stdio", "http"]) {
  const c = figures[`${kind}.click`], x = figures["xdotool.click"];
  console.log(`| input.click over ${kind} vs xdotool mousemove+click (a process each) | ${c.toFixed(2)} | ${x.toFixed(2)} | ${(c / x).toFixed(2)} |`);
  const p = figures[`${kind}.capture`], im = figures["import.capture"];
  console.log(`| screen.capture over ${kind} (downscaled PNG, base64) vs import -window root png (full size) | ${p.toFixed(2)} | ${im.toFixed(2)} | ${(p / im).toFixed(2)} |`);
}
console.log(`| ping over stdio / http | ${figures["stdio.ping"].toFixed(3)} | ${figures["http.ping"].toFixed(3)} | ${(figures["http.ping"] / figures["stdio.ping"]).toFixed(2)} |`);
process.exit(0);
