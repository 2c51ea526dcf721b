#
# pfscale gdb helpers: shared bits
#
# Every command reports a user error as one line, never a Python
# traceback; a bug in the scripts is reported as one.
#

import functools
import json

import gdb

from pfscale_gdb import decode


class PfError(Exception):
    """An error that the command prints as one line."""


def first_line(e):
    msg = str(e).strip().splitlines()
    return msg[0] if msg else type(e).__name__


def one_line_errors(name):
    """Decorate a gdb.Command.invoke: a user error (PfError, an input the
    decoder refuses, gdb's own errors such as unreadable memory) is one
    line "NAME: what", raised as gdb.GdbError; anything else is a bug in
    these scripts and says so ("internal error"), with the traceback under
    'set python print-stack full'."""
    def wrap(invoke):
        @functools.wraps(invoke)
        def run(self, arg, from_tty):
            try:
                invoke(self, arg, from_tty)
            except (PfError, decode.DecodeError, gdb.error,
                    gdb.GdbError) as e:
                raise gdb.GdbError("{}: {}".format(name, first_line(e)))
            except Exception as e:
                if gdb.parameter("python print-stack") == "full":
                    raise
                raise gdb.GdbError(
                    "{}: internal error (a bug in gdb-scripts/pfscale_gdb): "
                    "{}: {}; 'set python print-stack full' shows the "
                    "traceback".format(name, type(e).__name__,
                                       first_line(e)))
        return run
    return wrap


def parse_int(text, what):
    try:
        return int(text, 0)
    except ValueError:
        raise PfError("bad {} '{}'".format(what, text))


def split_args(arg):
    """Return (positional args, set of --options)."""
    words = gdb.string_to_argv(arg)
    opts = set(w for w in words if w.startswith("--"))
    return [w for w in words if not w.startswith("--")], opts


def have_symbol(name):
    try:
        return gdb.lookup_global_symbol(name) is not None or \
            gdb.lookup_static_symbol(name) is not None
    except gdb.error:
        return False


def write_json(obj):
    gdb.write(json.dumps(obj, sort_keys=False) + "\n")
