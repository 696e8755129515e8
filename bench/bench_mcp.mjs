// MCP round trips through the official SDK client (the one the tests pin in
// tests/integration/mcp_client): screen_capture inline (downscaled PNG,
// base64) and by reference (a resource_link, then resources/read), input_click
// and window_list, over stdio and over Streamable HTTP, beside the established
// tools doing the same job on the same display (xdotool click and search,
// ImageMagick import), and the server's RSS over 10,000 tool calls. Prints
// "ROW name median p95" lines (bench/run-all.sh reads them) and a table.
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
  const cap = await s.client.callTool({ name: "screen_capture", arguments: {} });
  const img = cap.content.find((c) => c.type === "image");
  console.log(`# ${kind}: capture ${cap.structuredContent.width}x${cap.structuredContent.height}, ` +
    `scale ${cap.structuredContent.scale}, base64 ${img.data.length} bytes`);
  figures[`${kind}.capture`] = row(`${kind}.capture`,
    await timed(() => s.client.callTool({ name: "screen_capture", arguments: {} }), n));
  // By reference at full size: the call (PNG written to the evidence folder),
  // then resources/read of the link, as a client that wants the pixels does.
  figures[`${kind}.capture_link`] = row(`${kind}.capture_link`, await timed(async () => {
    const r = await s.client.callTool({ name: "screen_capture", arguments: { delivery: "link", zoom: true } });
    const link = r.content.find((c) => c.type === "resource_link");
    await s.client.readResource({ uri: link.uri });
  }, n));
  figures[`${kind}.click`] = row(`${kind}.click`, await timed((i) => s.client.callTool(
    { name: "input_click", arguments: { x: 100 + (i % 50), y: 100 } }), n));
  figures[`${kind}.windows`] = row(`${kind}.windows`,
    await timed(() => s.client.callTool({ name: "window_list", arguments: {} }), n));
  figures[`${kind}.ping`] = row(`${kind}.ping`, await timed(() => s.client.ping(), n));
  if (kind === "stdio" || process.env.KSR_BENCH_RSS_HTTP) {
    const points = [];
    for (let i = 0; i <= RSS_CALLS; i++) {
      if (i % 2000 === 0) points.push(`${i}:${rss(s.pid)}`);
      if (i < RSS_CALLS) await s.client.callTool({ name: "window_list", arguments: {} });
    }
    console.log(`RSS ${kind} window_list calls:KiB ${points.join(" ")}`);
  }
  await s.close();
}
// The established tools, same display, same run.
figures["xdotool.click"] = row("xdotool.click", await timed((i) =>
  execFileSync("xdotool", ["mousemove", String(100 + (i % 50)), "100", "click", "1"]), n));
figures["import.capture"] = row("import.capture", await timed(() =>
  execFileSync("import", ["-window", "root", "png:-"], { maxBuffer: 64 << 20 }), Math.min(n, 20)));
figures["xdotool.windows"] = row("xdotool.windows", await timed(() =>
  execFileSync("xdotool", ["search", "--onlyvisible", "--name", "."]), n));
console.log("");
console.log(`| figure (ms, median of ${n}) | ksr over MCP | established tool | ratio (theirs / ours) |`);
console.log("|---|---|---|---|");
const line = (what, ours, theirs) =>
  console.log(`| ${what} | ${ours.toFixed(2)} | ${theirs === undefined ? "—" : theirs.toFixed(2)} | ${theirs === undefined ? "—" : (theirs / ours).toFixed(2)} |`);
for (const kind of ["stdio", "http"]) {
  line(`input_click over ${kind} vs xdotool mousemove+click (a process each)`, figures[`${kind}.click`], figures["xdotool.click"]);
  line(`window_list over ${kind} vs xdotool search --onlyvisible --name .`, figures[`${kind}.windows`], figures["xdotool.windows"]);
  line(`screen_capture over ${kind} (1280-edge PNG inline) vs import -window root png:- (full size)`, figures[`${kind}.capture`], figures["import.capture"]);
  line(`screen_capture link + resources/read over ${kind} (full size) vs import -window root png:-`, figures[`${kind}.capture_link`], figures["import.capture"]);
}
line("ping over stdio (vs http in the next column)", figures["stdio.ping"], figures["http.ping"]);
process.exit(0);
