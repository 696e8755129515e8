"""The oracle of a full walk's shape: an app's accessible tree walked by
org.a11y.atspi.Accessible.GetChildren alone, breadth first, each node's
children in the order the app gives them (as the runtime's walk keeps them),
leaving out children on another connection and the null object, to depth 32.
One line per node: its object path and its parent's ("-" for the
application), the format of `ksr-findcheck --tree`.
    /usr/bin/python3 atspi_children.py PID    (the app's session environment)"""
import sys

from gi.repository import Gio, GLib

ROOT = "/org/a11y/atspi/accessible/root"
NULL = "/org/a11y/atspi/null"


def connect():
    sess = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    addr = sess.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                          GLib.VariantType("(s)"), 0, 5000, None).unpack()[0]
    return Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
        Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def app_bus(bus, pid):
    def call(method, arg):
        return bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                             "org.freedesktop.DBus", method, arg, None, 0, 5000,
                             None).unpack()[0]
    for name in call("ListNames", None):
        if not name.startswith(":"):
            continue
        try:
            if call("GetConnectionUnixProcessID", GLib.Variant("(s)", (name,))) == pid:
                return name
        except GLib.Error:
            pass
    sys.exit("atspi_children.py: no bus connection of pid %d" % pid)


def main():
    pid = int(sys.argv[1])
    bus = connect()
    app = app_bus(bus, pid)
    level = [(ROOT, "-", 0)]
    while level:
        below = []
        for path, parent, depth in level:
            print(path, parent)
            if depth >= 32:
                continue
            kids = bus.call_sync(app, path, "org.a11y.atspi.Accessible", "GetChildren", None,
                                 GLib.VariantType("(a(so))"), 0, 5000, None).unpack()[0]
            below += [(p, path, depth + 1) for b, p in kids if b == app and p != NULL]
        level = below


main()
