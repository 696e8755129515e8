"""Helpers for the watch and blocker tests: start `watch`, parse its lines
(text and JSON), normalise them to a structure that can be compared with a
golden list, and validate JUnit files against tests/data/junit/junit-10.xsd."""

import json
import os
import re
import signal
import subprocess
import time

import ksr

JUNIT_XSD = os.path.join(ksr.SOURCE_DIR, "tests", "data", "junit", "junit-10.xsd")

_TOKEN = re.compile(r'([a-z_]+)=("(?:[^"\\]|\\.)*"|[A-Za-z0-9._:/@+,-]+)')


def _unquote(v):
    if not v.startswith('"'):
        return int(v) if re.fullmatch(r"-?\d+", v) else v
    out, i, body = [], 0, v[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\":
            n = body[i + 1]
            if n == "x":
                out.append(chr(int(body[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"n": "\n", "t": "\t"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def parse_text_line(line):
    """'EVENT step run=x reason="a b"' -> {"type": "EVENT", "event": "step", ...}.
    Fails when the line does not split cleanly (what the quoting promises)."""
    head, _, rest = line.partition(" ")
    obj = {"type": head}
    if head in ("EVENT", "ERROR") and rest:
        word, _, rest = rest.partition(" ")
        obj["event" if head == "EVENT" else "code"] = word
    pos = 0
    while pos < len(rest):
        m = _TOKEN.match(rest, pos)
        if not m:
            raise AssertionError("watch line does not parse at %d: %r" % (pos, line))
        obj[m.group(1)] = _unquote(m.group(2))
        pos = m.end()
        if pos < len(rest):
            if rest[pos] != " ":
                raise AssertionError("no space after a value at %d: %r" % (pos, line))
            pos += 1
    return obj


class Watch:
    """`kasm-session-runtime watch ARGS` in the background, stdout to a file."""

    def __init__(self, tc, args, json_mode=False):
        self.json = json_mode
        n = len(getattr(tc, "watches", []))
        self.out_path = os.path.join(tc.tmp, "watch%d.out" % n)
        self.err_path = os.path.join(tc.tmp, "watch%d.err" % n)
        cmd = [ksr.BIN, "watch"] + (["--json"] if json_mode else []) + list(args)
        with open(self.out_path, "wb") as so, open(self.err_path, "wb") as se:
            self.proc = subprocess.Popen(cmd, env=tc.env(), stdin=subprocess.DEVNULL,
                                         stdout=so, stderr=se, start_new_session=True)
        if not hasattr(tc, "watches"):
            tc.watches = []
        tc.watches.append(self)
        tc.procs.append(self.proc)

    def raw_lines(self):
        with open(self.out_path, encoding="utf-8") as f:
            data = f.read()
        return [l for l in data.split("\n")[:-1]]

    def lines(self):
        return [json.loads(l) if self.json else parse_text_line(l) for l in self.raw_lines()]

    @property
    def stderr(self):
        with open(self.err_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait_line(self, pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for l in self.lines():
                if pred(l):
                    return l
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        for l in self.lines():
            if pred(l):
                return l
        raise AssertionError("no matching watch line within %ss; got:\n%s\nstderr:\n%s"
                             % (timeout, "\n".join(self.raw_lines()), self.stderr[-2000:]))

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise AssertionError("watch did not exit within %ss; lines:\n%s"
                                 % (timeout, "\n".join(self.raw_lines())))


# The keys that make a line's structure; times, pids, paths, reasons and run
# ids vary from run to run and are left out (run ids are numbered instead).
_KEEP = ("name", "status", "index", "kind", "verdict", "outcome", "exit_code", "code",
         "where", "what", "runs_done")


def structure(lines, keep=_KEEP):
    ids, out = {}, []
    for l in lines:
        item = [l["type"], l.get("event") or l.get("code") or ""]
        if "run" in l:
            item.append("R%d" % ids.setdefault(l["run"], len(ids) + 1))
        if l["type"] == "READY":
            item.append(l.get("scenario"))
        if l["type"] == "DONE":
            item.append({k: v for k, v in l.items() if k != "type"})
        for k in keep:
            if k in l and l["type"] in ("EVENT", "ERROR"):
                item.append("%s=%s" % (k, l[k]))
        out.append(tuple(item) if l["type"] != "DONE" else tuple(item[:2]) + (
            tuple(sorted(item[2].items())),))
    return out


def validate_junit(tc, path):
    """Parse and validate a JUnit file against the XSD; return the root element."""
    from lxml import etree
    schema = etree.XMLSchema(etree.parse(JUNIT_XSD))
    doc = etree.parse(path)
    if not schema.validate(doc):
        tc.fail("%s is not valid JUnit:\n%s\n%s" % (path, schema.error_log,
                                                    open(path, encoding="utf-8").read()[:3000]))
    return doc.getroot()
