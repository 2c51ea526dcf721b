# Sourced by tests/host/gdb.sh in gdb (vmlinux and the pfscale scripts
# loaded, no guest): commands that exercise the scripts' own error
# handling and the layout cache.
#   pf-selftest-user       a user error: one line
#   pf-selftest-bug        a script bug (KeyError): an internal error line
#   pf-selftest-cache VMLINUX
#                          fill the layout cache, load VMLINUX again (a new
#                          objfile), report whether the cache was emptied
import gdb

from pfscale_gdb import layout, util


class SelftestUser(gdb.Command):
    def __init__(self):
        super(SelftestUser, self).__init__("pf-selftest-user",
                                           gdb.COMMAND_DATA)

    @util.one_line_errors("pf-selftest-user")
    def invoke(self, arg, from_tty):
        raise util.PfError("no task with pid 1")


class SelftestBug(gdb.Command):
    def __init__(self):
        super(SelftestBug, self).__init__("pf-selftest-bug",
                                          gdb.COMMAND_DATA)

    @util.one_line_errors("pf-selftest-bug")
    def invoke(self, arg, from_tty):
        return {}["no-such-key"]


class SelftestCache(gdb.Command):
    def __init__(self):
        super(SelftestCache, self).__init__("pf-selftest-cache",
                                            gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        layout.maple()
        layout.mm_counters()
        filled = len(layout._cache)
        gdb.execute("file " + arg, to_string=True)
        gdb.write("CACHE {}, then {}\n".format(
            "filled" if filled else "not filled",
            "emptied by a new objfile" if not layout._cache else
            "still holding {} entries".format(len(layout._cache))))


SelftestUser()
SelftestBug()
SelftestCache()
