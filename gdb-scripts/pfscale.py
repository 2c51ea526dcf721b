#
# pfscale gdb helpers: loader
#
# Load after the kernel's vmlinux-gdb.py (which provides the linux.* modules):
#
#   (gdb) source ART/vmlinux-gdb.py
#   (gdb) source gdb-scripts/pfscale.py
#
# Commands: pf-counters, pf-rss, pf-walk, pf-range, pf-mm, pf-race-watch
# (see "help pf-...").
#

import os
import sys

import gdb


def load():
    """Import the command modules; one line instead of a traceback when
    the kernel's gdb scripts (the linux.* modules) are missing."""
    try:
        import linux.utils  # noqa: F401
    except ImportError:
        gdb.write("pfscale: source the kernel's vmlinux-gdb.py first; "
                  "pf-* commands not loaded\n")
        return
    except gdb.error as e:
        gdb.write("pfscale: the kernel's gdb scripts do not load ({}): is "
                  "the file vmlinux? pf-* commands not loaded\n".format(
                      str(e).strip().splitlines()[0]))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pfscale_gdb.counters  # noqa: F401
    import pfscale_gdb.tasks  # noqa: F401
    import pfscale_gdb.pgtable  # noqa: F401
    import pfscale_gdb.mm  # noqa: F401
    import pfscale_gdb.racewatch  # noqa: F401


load()
