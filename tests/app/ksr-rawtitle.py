#!/usr/bin/env python3
"""A hostile X client of the tests' own: a top-level window whose WM_NAME and
_NET_WM_NAME hold raw bytes that are not valid UTF-8 (argv[1] with \\xNN
escapes decoded, default "Error \\xff\\xfe"), typed UTF8_STRING as a client
that lies would type them. Plain Xlib through ctypes: no toolkit repairs the
bytes on the way. Maps the window, syncs, then stays until the X server goes
(or SIGTERM). With --background the process returns once the window is
mapped (a child keeps it), so `ksr-rawtitle.py --background && exec app`
has the window up before the app starts."""

import ctypes
import ctypes.util
import os
import sys

x = ctypes.CDLL(ctypes.util.find_library("X11"))
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XCreateSimpleWindow.restype = ctypes.c_ulong
x.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong,
                                  ctypes.c_ulong]
x.XInternAtom.restype = ctypes.c_ulong
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                              ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
x.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
x.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

background = "--background" in sys.argv[1:]
args = [a for a in sys.argv[1:] if a != "--background"]
title = (args[0] if args else "Error \\xff\\xfe").encode("latin-1")
title = title.decode("unicode_escape").encode("latin-1")

dpy = x.XOpenDisplay(None)
if not dpy:
    sys.exit("ksr-rawtitle: cannot open display %s" % os.environ.get("DISPLAY"))
win = x.XCreateSimpleWindow(dpy, x.XDefaultRootWindow(dpy), 50, 50, 320, 120, 0, 0, 0xffffff)
utf8 = x.XInternAtom(dpy, b"UTF8_STRING", 0)
for name in (b"WM_NAME", b"_NET_WM_NAME"):
    x.XChangeProperty(dpy, win, x.XInternAtom(dpy, name, 0), utf8, 8, 0, title, len(title))
x.XMapWindow(dpy, win)
x.XSync(dpy, 0)
if background and os.fork() > 0:
    os._exit(0)  # the child holds the connection, so the window stays
event = ctypes.create_string_buffer(256)  # XEvent is at most 192 bytes
while True:
    x.XNextEvent(dpy, event)  # Xlib exits the process when the server goes
