#
# pfscale gdb helpers: shared bits
#
# Every command reports an error as one line, never a Python traceback.
#

import functools
import json

import gdb


class PfError(Exception):
    """An error that the command prints as one line."""


def one_line_errors(name):
    """Decorate a gdb.Command.invoke so that errors print as one line."""
    def wrap(invoke):
        @functools.wraps(invoke)
        def run(self, arg, from_tty):
            try:
                invoke(self, arg, from_tty)
            except (PfError, gdb.error, gdb.MemoryError, ValueError,
                    KeyError, IndexError, OverflowError) as e:
                msg = str(e).strip().splitlines()
                gdb.write("{}: {}\n".format(name, msg[0] if msg else
                                            type(e).__name__))
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
