#!/usr/bin/python3
"""The established tool for bench/atspi.sh: Debian's pyatspi (python3-pyatspi,
run by /usr/bin/python3) doing the jobs bench_atspi does, on the same app.

  atspi_pyatspi.py walk PID RUNS        full walk: role, name, states, actions, extents
  atspi_pyatspi.py act PID NAME RUNS    find a control by name and do its first action

Prints one line per run: "<ms> <nodes>" (walk) or "<ms>" (act; GAP_MS, default
300, is the untimed pause between two acts). Times cover
only the job (the registry lookup of the app is done once, before)."""

import os
import sys
import time

import pyatspi


def find_app(pid):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        try:
            if app is not None and app.get_process_id() == pid:
                return app
        except Exception:
            pass
    raise SystemExit("no application with pid %d on the AT-SPI bus" % pid)


def read_node(acc):
    role = acc.getRoleName()
    name = acc.name
    states = acc.getState().getStates()
    actions = []
    try:
        act = acc.queryAction()
        actions = [act.getName(i) for i in range(act.nActions)]
    except NotImplementedError:
        pass
    extents = None
    try:
        extents = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    except NotImplementedError:
        pass
    return role, name, states, actions, extents


def walk(acc, depth=0):
    """Recursive, as a pyatspi user writes it; capped like ours (depth 32)."""
    read_node(acc)
    n = 1
    if depth >= 32:
        return n
    for child in acc:
        if child is not None:
            n += walk(child, depth + 1)
    return n


def main():
    job, pid = sys.argv[1], int(sys.argv[2])
    app = find_app(pid)
    # libatspi caches what it has read (pyatspi's setCacheLevel is a no-op):
    # like ours, every run must ask the app again, so the cache is cleared
    # (recursively) before each run. Not set_cache_mask(Atspi.Cache.NONE): then
    # libatspi's own handler for the app's StateChanged events makes a
    # synchronous call from inside dbus_connection_dispatch while a call of the
    # walk is waiting in it, and libdbus waits for itself forever (seen with
    # mousepad, which emits events while it is walked: the walk never ended).
    if job == "walk":
        for _ in range(int(sys.argv[3])):
            app.clear_cache()
            t0 = time.perf_counter()
            n = walk(app)
            print("%.2f %d" % ((time.perf_counter() - t0) * 1000, n), flush=True)
    elif job == "act":
        name = sys.argv[3]
        for _ in range(int(sys.argv[4])):
            app.clear_cache()
            t0 = time.perf_counter()
            node = pyatspi.findDescendant(app, lambda a: a is not None and a.name == name)
            if node is None:
                raise SystemExit("no control named %r" % name)
            node.queryAction().doAction(0)
            print("%.2f" % ((time.perf_counter() - t0) * 1000), flush=True)
            # GTK4 drops actions closer than ~250 ms (not timed); GAP_MS as bench_atspi's
            time.sleep(int(os.environ.get("GAP_MS", "300")) / 1000)
    else:
        raise SystemExit("usage: atspi_pyatspi.py walk PID RUNS | act PID NAME RUNS")


if __name__ == "__main__":
    main()
