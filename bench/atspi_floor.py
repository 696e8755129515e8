"""The floor of a full AT-SPI walk, for bench/atspi.sh: the least an AT-SPI
client must ask an app to know every node's role, name, states and
interfaces (one org.a11y.atspi.Cache.GetItems) and every node's extents and
actions (one GetExtents per Component, one GetActions per Action), all sent
at once (Gio, asynchronous). The app answers one call at a time, so this is
bounded by the app's own time per call, whoever asks.

GTK 3's bridge serves GetItems only once some client has registered an event
listener with the registry; this script registers one (object:children-changed)
for its own connection.
An app that serves no cache (Qt 5) is asked the least a walk needs without
one (no_cache_run).
   python3 atspi_floor.py PID RUNS   one line per run: "<ms> <items> <calls>"
   python3 atspi_floor.py PID RUNS find NAME
       the least a find of a hidden control by the runtime's rule (a showing
       match, anywhere, wins) asks without a cache (find_run), same line """
import sys
import time

from gi.repository import Gio, GLib

pid, runs = int(sys.argv[1]), int(sys.argv[2])
find_name = sys.argv[4] if len(sys.argv) == 5 and sys.argv[3] == "find" else None
sess = Gio.bus_get_sync(Gio.BusType.SESSION, None)
addr = sess.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                      GLib.VariantType("(s)"), 0, 2000, None).unpack()[0]
bus = Gio.DBusConnection.new_for_address_sync(
    addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
    Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def dbus(method, arg):
    return bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                         method, arg, None, 0, 2000, None).unpack()[0]


app = None
for name in dbus("ListNames", None):
    if name.startswith(":"):
        try:
            if dbus("GetConnectionUnixProcessID", GLib.Variant("(s)", (name,))) == pid:
                app = name
        except GLib.Error:
            pass
if not app:
    sys.exit("atspi_floor.py: no bus connection of pid %d" % pid)
bus.call_sync("org.a11y.atspi.Registry", "/org/a11y/atspi/registry", "org.a11y.atspi.Registry",
              "RegisterEvent", GLib.Variant("(sass)", ("object:children-changed", [], "")), None,
              0, 2000, None)
loop = GLib.MainLoop()


def ifaces_of(item):
    """The interface list: its place differs between cache versions."""
    for v in item:
        if isinstance(v, list) and v and isinstance(v[0], str):
            return v
    return []


def one_run():
    t0 = time.monotonic()
    items = None
    for _ in range(50):  # the bridge activates its cache on the registration
        try:
            items = bus.call_sync(app, "/org/a11y/atspi/cache", "org.a11y.atspi.Cache",
                                  "GetItems", None, None, 0, 5000, None).unpack()[0]
            break
        except GLib.Error:
            time.sleep(0.02)
            t0 = time.monotonic()
    if not items:  # Qt 5's bridge answers GetItems with an empty list
        return no_cache_run()
    pending = [0]

    def done(src, res, _):
        try:
            src.call_finish(res)
        except GLib.Error:
            pass
        pending[0] -= 1
        if pending[0] == 0:
            loop.quit()

    calls = 1
    for it in items:
        path, ifaces = it[0][1], ifaces_of(it)
        for iface, method, arg in (
                ("org.a11y.atspi.Component", "GetExtents", GLib.Variant("(u)", (0,))),
                ("org.a11y.atspi.Action", "GetActions", None)):
            if iface in ifaces:
                pending[0] += 1
                calls += 1
                bus.call(app, path, iface, method, arg, None, 0, 5000, None, done, None)
    if pending[0]:
        loop.run()
    return (time.monotonic() - t0) * 1000, len(items), calls


def no_cache_run():
    """Without a cache (Qt 5): the calls pyatspi's walk cannot do without, per
    node its role name, name, states and interfaces (Qt takes Properties.Get,
    never GetAll), its children (GetChildren, without asking the count first),
    then extents and actions where its interfaces offer them; every call sent
    as soon as it can be (children's calls when the GetChildren answer comes)."""
    t0 = time.monotonic()
    pending, nodes, calls = [0], [0], [0]
    acc, props = "org.a11y.atspi.Accessible", "org.freedesktop.DBus.Properties"

    def call(path, iface, method, arg, then=None):
        pending[0] += 1
        calls[0] += 1

        def done(src, res, _):
            try:
                reply = src.call_finish(res).unpack()
                if then:
                    then(reply)
            except GLib.Error:
                pass
            pending[0] -= 1
            if pending[0] == 0:
                loop.quit()
        bus.call(app, path, iface, method, arg, None, 0, 5000, None, done, None)

    def details(path, reply):
        ifaces = reply[0]
        if "org.a11y.atspi.Component" in ifaces:
            call(path, "org.a11y.atspi.Component", "GetExtents", GLib.Variant("(u)", (0,)))
        if "org.a11y.atspi.Action" in ifaces:
            call(path, "org.a11y.atspi.Action", "GetActions", None)

    def node(path, depth):
        nodes[0] += 1
        call(path, acc, "GetRoleName", None)
        call(path, props, "Get", GLib.Variant("(ss)", (acc, "Name")))
        call(path, acc, "GetState", None)
        call(path, acc, "GetInterfaces", None, lambda r: details(path, r))
        if depth < 32:
            call(path, acc, "GetChildren", None, lambda r: [
                node(p, depth + 1) for (b, p) in r[0] if b == app])

    node("/org/a11y/atspi/accessible/root", 0)
    loop.run()
    return (time.monotonic() - t0) * 1000, nodes[0], calls[0]


def find_run():
    """Find find_name without a cache: every node's name and states are
    needed (a showing match anywhere would win over a hidden one), its
    children by GetChildren at once (no count asked first). Once a hidden
    match is known, only showing nodes are gone below (no showing node lies
    under a hidden one), as the runtime's find does. Stops at the first
    showing match, else reads all. No role, interface, extent or action is
    asked."""
    t0 = time.monotonic()
    pending, nodes, calls, cand, t_found = [0], [0], [0], [False], [None]
    acc, props = "org.a11y.atspi.Accessible", "org.freedesktop.DBus.Properties"
    showing_bit = 1 << 25  # ATSPI_STATE_SHOWING

    def call(path, iface, method, arg, then):
        pending[0] += 1
        calls[0] += 1

        def done(src, res, _):
            try:
                then(src.call_finish(res).unpack())
            except GLib.Error:
                pass
            pending[0] -= 1
            if pending[0] == 0:
                loop.quit()
        bus.call(app, path, iface, method, arg, None, 0, 5000, None, done, None)

    def node(path, depth):
        nodes[0] += 1
        info = {}

        def got_state(r):
            info["showing"] = bool(r[0][0] & showing_bit)

        def got_name(r):
            if r[0] == find_name:
                if info.get("showing") and t_found[0] is None:
                    t_found[0] = time.monotonic()  # the rest is answered, not timed
                cand[0] = True

        def got_children(r):
            if t_found[0] is not None or (cand[0] and not info.get("showing")):
                return
            for (b, p) in r[0]:
                if b == app:
                    node(p, depth + 1)
        call(path, acc, "GetState", None, got_state)
        call(path, props, "Get", GLib.Variant("(ss)", (acc, "Name")), got_name)
        if depth < 32:
            call(path, acc, "GetChildren", None, got_children)

    node("/org/a11y/atspi/accessible/root", 0)
    loop.run()
    return ((t_found[0] or time.monotonic()) - t0) * 1000, nodes[0], calls[0]


for _ in range(runs):
    ms, n, calls = find_run() if find_name else one_run()
    print("%.2f %d %d" % (ms, n, calls))
    sys.stdout.flush()
