# Writes the crafted seeds of fuzz/corpus/mcp/ (fuzz_mcp: newline-separated
# JSON-RPC messages; a first byte with bit 0 set asks for underscore names) and
# fuzz/corpus/mcp_http/ (fuzz_mcp_http: listen, Host, Origin, Authorization,
# token, Accept on six lines). Run from fuzz/.
import json, os


def w(d, name, data):
    os.makedirs(os.path.join('corpus', d), exist_ok=True)
    open(os.path.join('corpus', d, name), 'wb').write(data.encode() if isinstance(data, str) else data)


def req(i, method, params=None):
    o = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        o["params"] = params
    return json.dumps(o)


def call(i, name, args=None, meta=None):
    p = {"name": name}
    if args is not None:
        p["arguments"] = args
    if meta is not None:
        p["_meta"] = meta
    return req(i, "tools/call", p)


init = req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "f", "version": "1"}})
note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
w('mcp', 'handshake', "\n".join([init, note, req(2, "tools/list"), req(3, "ping")]))
w('mcp', 'old_protocol', req(1, "initialize", {"protocolVersion": "2025-03-26"}) + "\n"
  + req("s", "tools/list"))
tools = [("screen.capture", {"region": {"x": 0, "y": 0, "width": 64, "height": 64}, "max_edge": 256}),
         ("screen.ground", {"description": "the OK button"}),
         ("input.click", {"x": 10, "y": 10, "button": "left", "count": 2}),
         ("input.move", {"x": 1.5, "y": 2}),
         ("input.drag", {"x1": 1, "y1": 2, "x2": 3, "y2": 4}),
         ("input.scroll", {"x": 1, "y": 1, "dy": -3}),
         ("input.type", {"text": "h\u00e9llo\n"}),
         ("input.key", {"keys": "ctrl+s"}),
         ("window.list", {}),
         ("window.focus", {"window": "^Untitled"}),
         ("a11y.tree", {"max_nodes": 10}),
         ("a11y.click", {"name": "OK", "role": "push button"}),
         ("a11y.state", {"name": "OK"})]
for n, (name, args) in enumerate(tools):
    w('mcp', 'call_' + name.replace('.', '_'),
      init + "\n" + call(10 + n, name, args, {"progressToken": "p"}))
w('mcp', 'underscore_names', "\x01" + "\n" + init + "\n" + call(5, "input_move", {"x": 1, "y": 1}))
w('mcp', 'bad_args', "\n".join([call(1, "input.click", {"x": "a"}),
                               call(2, "input.click", {"x": 1, "y": 2, "zzz": 1}),
                               call(3, "input.click", []), call(4, "nope.tool", {}), call(5, 7),
                               req(6, "tools/call", "x")]))
w('mcp', 'malformed', "\n".join([
    '{', '[]', '[' + init + ']', '{"jsonrpc":"1.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":{},"method":"ping"}', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}', '{"jsonrpc":"2.0","method":7,"id":1}',
    '{"jsonrpc":"2.0","id":1,"result":{}}', 'null', '"x"',
    '{"jsonrpc":"2.0","id":1,"method":"nope"}']))
w('mcp', 'cancel_and_level', "\n".join([
    req(1, "logging/setLevel", {"level": "debug"}), req(2, "logging/setLevel", {"level": "loud"}),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 3, "reason": "x"}}),
    call(3, "window.list")]))
w('mcp', 'big_ids', '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}\n'
  '{"jsonrpc":"2.0","id":-0,"method":"ping"}\n{"jsonrpc":"2.0","id":"\\u0000","method":"ping"}')
w('mcp', 'deep', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"input.move",'
  '"arguments":' + '[' * 300 + ']' * 300 + '}}')
for n, f in enumerate([
        ["127.0.0.1:8765", "127.0.0.1:8765", "http://localhost:3000", "Bearer s3cret", "s3cret",
         "application/json, text/event-stream"],
        ["[::1]:0", "[::1]:9", "https://[::1]", "bearer  abc ", "abc", "*/*"],
        [":8765", "localhost", "null", "Basic Zm9v", "tok", "text/*;q=0.5, application/*"],
        ["0.0.0.0:80", "evil.example:80", "http://evil.example", "Bearer", "", "text/html"],
        ["localhost:65536", "127.1.2.3", "http://127.0.0.1:99/", "Bearer x", "xy", ""],
        ["::1:80", "[::1", "http://user@127.0.0.1", "BEARER xy", "xy", ",,;"],
        ["a" * 300 + ":1", "[::ffff:127.0.0.1]:1", "HTTP://LOCALHOST", "Bearer " + "t" * 200,
         "t" * 200, "application/json;q=0"]]):
    w('mcp_http', 'h%02d' % n, "\n".join(f))
