#
# pfscale gdb helpers: loader
#
# Load after the kernel's vmlinux-gdb.py (which provides the linux.* modules):
#
#   (gdb) source ART/vmlinux-gdb.py
#   (gdb) source gdb-scripts/pfscale.py
#
# Commands: pf-counters, pf-rss, pf-walk, pf-range (see "help pf-...").
#

import os
import sys

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import linux.utils  # noqa: F401
except ImportError:
    raise gdb.GdbError("pfscale: source the kernel's vmlinux-gdb.py first")

import pfscale_gdb.counters  # noqa: E402,F401
import pfscale_gdb.tasks  # noqa: E402,F401
import pfscale_gdb.pgtable  # noqa: E402,F401
