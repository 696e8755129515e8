// A tap on a stdio MCP server's input, for tests/integration/test_mcp_aisdk.py:
//   node stdio_tap.mjs LOG -- COMMAND ARGS...
// runs COMMAND with this process's stdout and stderr, copies every byte this
// process reads to COMMAND's stdin and appends it to LOG, so the test sees what
// the client put on the wire (one JSON-RPC message a line) without trusting the
// client to say. EOF and SIGTERM/SIGINT are passed on; the tap exits with
// COMMAND's status.
import { spawn } from "node:child_process";
import fs from "node:fs";

const sep = process.argv.indexOf("--");
const log = process.argv[2];
const [command, ...args] = process.argv.slice(sep + 1);
const fd = fs.openSync(log, "a");
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });

process.stdin.on("data", (chunk) => {
  fs.writeSync(fd, chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.stdin.on("error", () => {}); // the server gone first: its exit ends the tap
for (const sig of ["SIGTERM", "SIGINT"])
  process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => {
  fs.closeSync(fd);
  process.exit(code ?? (signal ? 128 : 1));
});
