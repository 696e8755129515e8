"""The floor of a full AT-SPI walk, for bench/atspi.sh: the least an AT-SPI
client must ask an app to know every node's role, name, states and
interfaces (one org.a11y.atspi.Cache.GetItems) and every node's extents and
actions (one GetExtents per Component, one GetActions per Action), all sent
at once (Gio, asynchronous). The app answers one call at a time, so this is
bounded by the app's own time per call, whoever asks.

GTK 3's bridge serves GetItems only once some client has registered an event
listener with the registry; this script registers one (object:children-changed)
for its own connection.
   python3 atspi_floor.py PID RUNS   one line per run: "<ms> <items> <calls>" """
import sys
import time

from gi.repository import Gio, GLib

pid, runs = int(sys.argv[1]), int(sys.argv[2])
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
        sys.exit("atspi_floor.py: the app serves no Cache.GetItems, or an empty one")
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


for _ in range(runs):
    ms, n, calls = one_run()
    print("%.2f %d %d" % (ms, n, calls))
    sys.stdout.flush()
