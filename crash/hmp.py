#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send HMP commands to a QEMU monitor on a unix socket (qemu/boot.sh -M SOCK).

    crash/hmp.py SOCK CMD...

Waits for the "(qemu) " prompt after each command, so a synchronous
dump-guest-memory has finished when the next command is sent; prints what
the monitor answered.
"""
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(300)


def until_prompt():
    buf = b""
    while not buf.endswith(b"(qemu) "):
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf.decode(errors="replace")


until_prompt()
for c in sys.argv[2:]:
    s.sendall(c.encode() + b"\n")
    sys.stdout.write(until_prompt())
