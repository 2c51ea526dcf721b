# Sourced by tests/host/gdb.sh in gdb (vmlinux loaded, no guest): the special
# swap types that layout.defines() derives from the kernel's pfscale-layout
# (MAX_SWAPFILES, SWP_*_NUM) against those the kernel's .config allots,
# from 31 down as include/linux/swap.h does.
import os

from pfscale_gdb import layout

cfg = set(line.strip() for line in open(os.environ["PFSCALE_CONFIG"]))


def on(opt):
    return "CONFIG_{}=y".format(opt) in cfg


names = (["hwpoison"] * on("MEMORY_FAILURE") +
         ["migration-read", "migration-read-exclusive",
          "migration-write"] * on("MIGRATION") +
         ["device-write", "device-read", "device-exclusive-write",
          "device-exclusive-read"] * on("DEVICE_PRIVATE") +
         ["pte-marker"] * on("PTE_MARKER") + ["swapin-error"])
want = dict((32 - len(names) + i, n)
            for i, n in enumerate(names))
got = layout.defines().swap_kinds
print("SWAPKINDS " + ("ok" if got == want else
                      "fail: {} != {}".format(got, want)))
