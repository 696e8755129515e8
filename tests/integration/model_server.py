"""A local model server for the vision tests: the one stand-in the suite allows.

It speaks the three wire protocols the runtime uses, for real, over HTTP:
  POST /v1/chat/completions   OpenAI Chat Completions (image as a data URL,
                              response_format json_schema)
  POST /v1/messages           Anthropic Messages (base64 image block, forced
                              tool use, x-api-key)
  POST /api/chat              Ollama (images, format)
Every request is parsed; its image is decoded from base64 and must be a PNG
(header parsed) of the size the script expects; problems are answered 400 and
logged. Answers come from a per-test script file (JSON), one queue per kind of
question (judge, ground, first-look, describe, plan: told apart by the
structured output schema the runtime sent); the last entry of a queue repeats.
A plan request (the goal loop's planner) is text only: it must carry no image;
its answer is the tool choice, sent as each protocol sends structured output
(OpenAI content, Anthropic tool_use input, Ollama content).

Script:
  {"expect_size": [w, h] | null, "api_key": "KEY" | null,
   "responses": {"judge": [ENTRY...], "ground": [...], "first-look": [...],
                 "describe": [...], "plan": [...]}}
ENTRY:
  {"status": 200, "headers": {"retry-after": "1"}, "hang": SECONDS,
   "answer": {...}            -> the structured answer (tool input / content)
   "raw": "text"              -> the assistant's text as is (prose, fences, junk)
   "body": "text"             -> the whole HTTP body as is
   "ground_window": "TITLE", "at": [fx, fy], "coords": "pixel|norm1000|...",
   "form": "xy|point|box"     -> a location computed from the window's real
                                 geometry (xwininfo on the server's DISPLAY)}
Each request is appended to the log file as one JSON line: path, protocol,
kind, png size, problems, auth (whether the key matched), status sent.
"""

import base64
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATHS = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic", "/api/chat": "ollama"}


def png_size(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return [int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")]


def smart_resize(w, h, factor=28, min_px=56 * 56, max_px=12845056):
    hb = max(factor, round(h / factor) * factor)
    wb = max(factor, round(w / factor) * factor)
    if hb * wb > max_px:
        beta = math.sqrt(h * w / max_px)
        hb = max(factor, math.floor(h / beta / factor) * factor)
        wb = max(factor, math.floor(w / beta / factor) * factor)
    elif hb * wb < min_px:
        beta = math.sqrt(min_px / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return wb, hb


def window_geometry(display, title):
    """(x, y, w, h) of the client window titled `title`, and the root size."""
    env = dict(os.environ, DISPLAY=display)
    out = subprocess.run(["xwininfo", "-name", title], env=env, capture_output=True,
                         text=True, timeout=10).stdout
    root = subprocess.run(["xwininfo", "-root"], env=env, capture_output=True, text=True,
                          timeout=10).stdout

    def field(text, name):
        m = re.search(r"%s:\s+(-?\d+)" % re.escape(name), text)
        if not m:
            raise RuntimeError("xwininfo: no %s for %r" % (name, title))
        return int(m.group(1))
    return ((field(out, "Absolute upper-left X"), field(out, "Absolute upper-left Y"),
             field(out, "Width"), field(out, "Height")),
            (field(root, "Width"), field(root, "Height")))


class ModelServer:
    def __init__(self, script_path, log_path, display=None, host="127.0.0.1", port=0):
        self.script_path = script_path
        self.log_path = log_path
        self.display = display
        self.counters = {}
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                server.handle(self)

            def do_GET(self):
                self.send_error(404)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = None

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    # ---- requests -------------------------------------------------------

    def script(self):
        with open(self.script_path, encoding="utf-8") as f:
            return json.load(f)

    def log(self, entry):
        with self.lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def next_entry(self, script, kind):
        queue = (script.get("responses") or {}).get(kind) or []
        with self.lock:
            n = self.counters.get(kind, 0)
            self.counters[kind] = n + 1
        if not queue:
            return {"status": 500, "body": '{"error": "no scripted answer for %s"}' % kind}
        return queue[min(n, len(queue) - 1)]

    def handle(self, h):
        proto = PATHS.get(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        entry = {"path": h.path, "protocol": proto, "problems": [], "t": time.time()}
        if not proto:
            return self.reply(h, entry, 404, {}, '{"error": "unknown path"}')
        try:
            req = json.loads(raw)
        except ValueError:
            entry["problems"].append("body is not JSON")
            return self.reply(h, entry, 400, {}, '{"error": "body is not JSON"}')
        script = self.script()
        images, schema, prompt = self.parse(proto, req, entry["problems"])
        entry["kind"] = kind = self.kind_of(schema)
        entry["model"] = req.get("model")
        entry["prompt"] = prompt
        self.check_images(images, script, entry)
        entry["auth"] = self.check_auth(proto, h.headers, script)
        if script.get("api_key") and not entry["auth"]:
            return self.reply(h, entry, 401, {}, '{"error": "invalid api key"}')
        if entry["problems"]:
            return self.reply(h, entry, 400, {},
                              json.dumps({"error": "; ".join(entry["problems"])}))
        ans = self.next_entry(script, kind)
        if ans.get("hang"):
            entry["hang"] = ans["hang"]
            self.log(dict(entry, status="hang"))
            time.sleep(ans["hang"])
            return
        body = self.body_for(proto, ans, entry)
        return self.reply(h, entry, ans.get("status", 200), ans.get("headers") or {}, body)

    def reply(self, h, entry, status, headers, body):
        entry["status"] = status
        self.log(entry)
        data = body.encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                h.send_header(k, str(v))
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass

    @staticmethod
    def check_auth(proto, headers, script):
        key = script.get("api_key")
        if not key:
            return True
        if proto == "anthropic":
            return headers.get("x-api-key") == key
        return headers.get("Authorization") == "Bearer " + key

    @staticmethod
    def parse(proto, req, problems):
        """(list of PNG bytes, schema, prompt text) from a request."""
        images, texts, schema = [], [], None
        msgs = req.get("messages") or []
        if not msgs or not req.get("model"):
            problems.append("no model or messages")
            return images, schema, ""
        content = msgs[0].get("content")
        if proto == "openai":
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                elif part.get("type") == "image_url":
                    url = (part.get("image_url") or {}).get("url", "")
                    if not url.startswith("data:image/png;base64,"):
                        problems.append("image_url is not a PNG data URL")
                    else:
                        images.append(url.split(",", 1)[1])
            rf = req.get("response_format") or {}
            if rf.get("type") != "json_schema":
                problems.append("response_format is not json_schema")
            schema = (rf.get("json_schema") or {}).get("schema")
        elif proto == "anthropic":
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                elif part.get("type") == "image":
                    src = part.get("source") or {}
                    if src.get("type") != "base64" or src.get("media_type") != "image/png":
                        problems.append("image block is not base64 PNG")
                    images.append(src.get("data", ""))
            tools = req.get("tools") or []
            choice = req.get("tool_choice") or {}
            if not tools or choice.get("type") != "tool" or choice.get("name") != tools[0].get("name"):
                problems.append("tool use is not forced")
            if not req.get("max_tokens"):
                problems.append("max_tokens missing")
            schema = tools[0].get("input_schema") if tools else None
        else:
            texts.append(content if isinstance(content, str) else "")
            images.extend(msgs[0].get("images") or [])
            schema = req.get("format")
            if req.get("stream") is not False:
                problems.append("stream is not false")
        if not isinstance(schema, dict):
            problems.append("no JSON schema for structured output")
        return images, schema, "\n".join(texts)

    @staticmethod
    def kind_of(schema):
        props = (schema or {}).get("properties") or {}
        for key, kind in (("answer", "judge"), ("found", "ground"), ("rendered", "first-look"),
                          ("description", "describe"), ("tool", "plan")):
            if key in props:
                return kind
        return "unknown"

    @staticmethod
    def check_images(images, script, entry):
        entry["png"] = None
        if entry.get("kind") == "plan":
            if images:
                entry["problems"].append("a planner request carries an image")
            return
        if len(images) != 1:
            entry["problems"].append("expected one image, got %d" % len(images))
            return
        try:
            data = base64.b64decode(images[0], validate=True)
        except ValueError:
            entry["problems"].append("image is not valid base64")
            return
        size = png_size(data)
        if not size:
            entry["problems"].append("image is not a PNG")
            return
        entry["png"] = size
        entry["png_bytes"] = len(data)
        want = script.get("expect_size")
        if want and list(want) != size:
            entry["problems"].append("image is %dx%d, expected %dx%d" % (size[0], size[1],
                                                                         want[0], want[1]))

    # ---- answers --------------------------------------------------------

    def located(self, ans, entry):
        (wx, wy, ww, wh), (sw, sh) = window_geometry(self.display, ans["ground_window"])
        fx, fy = ans["at"]
        iw, ih = entry["png"]
        # the point in the image sent (the runtime may have downscaled the screen)
        ix, iy = (wx + fx * ww) * iw / sw, (wy + fy * wh) * ih / sh
        entry["meant_screen"] = [round(wx + fx * ww), round(wy + fy * wh)]
        coords = ans.get("coords", "pixel")
        if coords == "smart-resize":
            rw, rh = smart_resize(iw, ih)
            x, y = ix * rw / iw, iy * rh / ih
        elif coords in ("norm1000", "norm1000-yx"):
            x, y = ix * 1000 / iw, iy * 1000 / ih
        elif coords == "norm1":
            x, y = ix / iw, iy / ih
        else:
            x, y = ix, iy
        form = ans.get("form", "xy")
        yx = coords == "norm1000-yx"
        if form == "point":
            return {"found": True, "point": [y, x] if yx else [x, y]}
        if form == "box":
            d = 0.01 if coords == "norm1" else 10
            box = [y - d, x - d, y + d, x + d] if yx else [x - d, y - d, x + d, y + d]
            return {"found": True, "bbox_2d" if not yx else "box_2d": box}
        return {"found": True, "x": x, "y": y}

    def body_for(self, proto, ans, entry):
        if "body" in ans:
            return ans["body"]
        if "ground_window" in ans:
            answer, text = self.located(ans, entry), None
        else:
            answer, text = ans.get("answer"), ans.get("raw")
        if text is None:
            text = json.dumps(answer)
        if proto == "openai":
            return json.dumps({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text},
                 "finish_reason": "stop"}], "usage": {"prompt_tokens": 1}})
        if proto == "anthropic":
            block = ({"type": "tool_use", "id": "t1", "name": "answer", "input": answer}
                     if answer is not None and ans.get("raw") is None
                     else {"type": "text", "text": text})
            return json.dumps({"id": "m", "type": "message", "role": "assistant",
                               "content": [block], "stop_reason": "tool_use"})
        return json.dumps({"model": "m", "message": {"role": "assistant", "content": text},
                           "done": True})


def read_log(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--display")
    a = ap.parse_args()
    s = ModelServer(a.script, a.log, a.display, port=a.port).start()
    print(s.port, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        s.stop()


if __name__ == "__main__":
    sys.exit(main())
