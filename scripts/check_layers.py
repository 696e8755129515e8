#!/usr/bin/env python3
"""The layers' include rule (docs/design.md), checked on the source tree.

Prints the folder-level include graph, then fails (exit 1) on:
  - an #include "..." of a header that belongs to a higher layer, or to
    another folder of the same rank (the front ends do not include each
    other);
  - an #include <...> of libX11, libwebsockets, AT-SPI or GDBus headers
    outside src/backend/;
  - a source file directly under src/backend/ (each backend has its folder,
    src/backend/NAME/);
  - a cycle between backend folders (they may include each other's headers,
    one way only);
  - a header under include/ksr/ that no layer owns (add it to OWNERS);
  - cJSON_Print* called outside src/core/json.c (JSON leaves through
    ksr_json_print, which repairs invalid UTF-8).

The linker enforces the same direction for calls (CMakeLists.txt, ksr_layer:
each library's link check); this script covers what the linker cannot see
(a header included for its types or macros).

  scripts/check_layers.py [ROOT]      check the tree (default: the repository)
  scripts/check_layers.py --self-test plant violations in a scratch tree and
                                      check that each one is caught
"""
import os
import re
import sys
import tempfile

# Folder -> rank. A file may include headers of its own folder and of folders
# of a lower rank.
RANKS = {
    "core": 0,
    "backend": 1,
    "scenario": 2,
    "run/context": 3,
    "run/vision": 4,
    "run/diagnosis": 5,
    "run/actions": 6,
    "run/agent": 7,
    "run/stages": 8,
    "run": 9,
    "inspect": 10,
    "record": 10,
    "watch": 10,
    "mcp": 10,
    "cli": 11,
}

# The backends' folders (src/backend/NAME), all of the backend rank. They may
# include each other's headers as long as no two reach each other (no cycle).
BACKENDS = ("x11", "atspi", "cdp", "bidi", "http", "image", "model", "proc", "session", "video",
            "desktop")
for _b in BACKENDS:
    RANKS["backend/" + _b] = RANKS["backend"]

# Public headers (include/ksr/NAME) -> the folder whose code they describe.
OWNERS = {
    "deadline.h": "core", "error.h": "core", "event.h": "core", "evidence.h": "core",
    "report.h": "core", "strbuf.h": "core", "verdict.h": "core", "pattern.h": "core", "utf8.h": "core",
    "json.h": "core", "redact.h": "core", "log_tail.h": "core",
    "x11.h": "backend/x11", "x11_record.h": "backend/x11", "keys.h": "backend/x11",
    "video.h": "backend/video", "atspi.h": "backend/atspi", "cdp.h": "backend/cdp", "page.h": "backend/cdp", "bidi.h": "backend/bidi",
    "model.h": "backend/model", "image.h": "backend/image", "proc.h": "backend/proc",
    "session.h": "backend/session", "http_server.h": "backend/http",
    "desktop.h": "backend/desktop",
    "scenario.h": "scenario", "scenario_yaml.h": "scenario", "vocabulary.h": "scenario", "vocabulary.def": "scenario",
    # The run's options (the context's input) and its entry point: the options are
    # part of the context, so the header sits at the run's bottom.
    "run.h": "run/context",
    "inspect.h": "inspect",
    "record.h": "record",
    "watch.h": "watch", "junit.h": "watch", "fleet.h": "watch",
    "mcp.h": "mcp", "mcp_http.h": "mcp",
}

# System headers only the backends may include.
BACKEND_ONLY = re.compile(r"^(X11/|libwebsockets\.h|lws_|atspi/|gio/|dbus/|libav|libswscale/)")
# JSON text leaves the runtime through ksr_json_print (src/core/json.c) only:
# it repairs bytes that are not UTF-8, so no output can forget (issue 31).
RAW_JSON_PRINT = re.compile(r"\bcJSON_Print(?:Unformatted|Buffered|Preallocated)?\s*\(")
JSON_PRINT_HOME = "src/core/json.c"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def folder_of(rel):
    """src/run/actions/x.c -> run/actions; include/ksr/x11.h -> backend."""
    parts = rel.split("/")
    if parts[0] == "include":
        return OWNERS.get(parts[-1])
    if parts[0] != "src" or len(parts) < 3:
        return None
    if parts[1] in ("run", "backend") and len(parts) > 3:
        return parts[1] + "/" + parts[2]
    return parts[1]


def is_backend(folder):
    return folder == "backend" or folder.startswith("backend/")


def backend_cycles(graph):
    """Each cycle between backend folders, as a list of folders."""
    edges = {a: [b for b in outs if b != a and is_backend(b)] for a, outs in graph.items() if is_backend(a)}
    cycles, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in edges.get(node, []):
            if state.get(nxt) == "open":
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    return cycles


def resolve(src_rel, target, root):
    """The repository path a quoted include names, or None (not ours)."""
    for base in (os.path.dirname(src_rel), "src", "include"):
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.exists(os.path.join(root, cand)):
            return cand
    return None


def sources(root):
    for top in ("src", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".def")):
                    yield os.path.relpath(os.path.join(d, f), root)


def check(root):
    graph, errors = {}, []
    for rel in sources(root):
        here = folder_of(rel)
        if here == "backend" and rel.startswith("src/"):
            errors.append(f"{rel}: a backend's code belongs in its folder (src/backend/NAME/)")
            continue
        if here is None:
            if rel.startswith("include/"):
                errors.append(f"{rel}: no layer owns this public header (scripts/check_layers.py OWNERS)")
            continue
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
        for m in RAW_JSON_PRINT.finditer(text if rel.endswith(".c") and rel != JSON_PRINT_HOME else ""):
            line = text.count("\n", 0, m.start()) + 1
            errors.append(f"{rel}:{line}: cJSON_Print* outside {JSON_PRINT_HOME} (use ksr_json_print)")
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            kind, target = m.group(1), m.group(2)
            if kind == "<":
                if BACKEND_ONLY.match(target) and not is_backend(here):
                    errors.append(f"{rel}:{line}: <{target}> outside src/backend")
                continue
            dest = resolve(rel, target, root)
            there = folder_of(dest) if dest else None
            if there is None:
                continue
            graph.setdefault(here, {}).setdefault(there, 0)
            graph[here][there] += 1
            if there == here:
                continue
            if is_backend(here) and is_backend(there):
                continue  # between backend folders: the cycle check below
            if RANKS[there] >= RANKS[here]:
                errors.append(f'{rel}:{line}: "{target}" ({there}) against the layers from {here}')
    for cycle in backend_cycles(graph):
        errors.append("a cycle between backend folders: " + " -> ".join(cycle))
    return graph, errors


def print_graph(graph):
    print("folder-level include graph (from -> to: includes):")
    for here in sorted(graph, key=lambda f: (RANKS[f], f)):
        outs = ", ".join(f"{t} {n}" for t, n in sorted(graph[here].items(), key=lambda kv: (RANKS[kv[0]], kv[0])) if t != here)
        print(f"  {here:16} -> {outs or '(own folder only)'}")


def self_test():
    """Each planted violation must be reported; the clean tree must not be."""
    def tree(files):
        d = tempfile.mkdtemp(prefix="ksr-layers-")
        for rel, text in files.items():
            os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        return d

    clean = {
        "include/ksr/x11.h": "#include <stdint.h>\n",
        "include/ksr/error.h": "",
        "src/core/error.c": '#include "ksr/error.h"\n',
        "src/core/json.c": "char *t = cJSON_Print(o);\n",
        "src/backend/x11/x11.c": '#include <X11/Xlib.h>\n#include "ksr/x11.h"\n#include "ksr/error.h"\n',
        "src/backend/session/session.c": '#include "ksr/x11.h"\n',
        "src/run/context/context.h": '#include "ksr/x11.h"\n',
        "src/run/actions/a.c": '#include "run/context/context.h"\n',
        "src/cli/main.c": '#include "run/actions/a.h"\n',
    }
    cases = {
        "core includes a backend header": {"src/core/bad.c": '#include "ksr/x11.h"\n'},
        "context includes actions": {"src/run/context/bad.c": '#include "run/actions/exec.h"\n',
                                     "src/run/actions/exec.h": ""},
        "a front end includes another": {"src/mcp/bad.c": '#include "ksr/watch.h"\n',
                                         "include/ksr/watch.h": ""},
        "libX11 outside the backends": {"src/mcp/bad.c": "#include <X11/Xlib.h>\n"},
        "libwebsockets outside the backends": {"src/mcp/bad.c": "#include <libwebsockets.h>\n"},
        "AT-SPI outside the backends": {"src/inspect/bad.c": "#include <atspi/atspi.h>\n"},
        "an unowned public header": {"include/ksr/mystery.h": ""},
        "a backend file outside a folder": {"src/backend/loose.c": '#include "ksr/x11.h"\n'},
        "cJSON_Print outside core/json.c": {"src/cli/bad.c": "char *t = cJSON_PrintUnformatted(o);\n"},
        "a cycle between backend folders": {"src/backend/x11/bad.c": '#include "ksr/session.h"\n',
                                            "include/ksr/session.h": ""},
    }
    failures = 0
    _, errs = check(tree(clean))
    if errs:
        print("self-test: the clean tree was reported:", errs)
        failures += 1
    for name, extra in cases.items():
        _, errs = check(tree({**clean, **extra}))
        status = "caught" if errs else "MISSED"
        print(f"self-test: {name}: {status}" + (f" ({errs[0]})" if errs else ""))
        failures += not errs
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    graph, errors = check(os.path.abspath(root))
    print_graph(graph)
    for e in errors:
        print("layers:", e)
    print(f"{len(errors)} include(s) against the layers")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
