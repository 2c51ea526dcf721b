# pfscale: page-fault scalability races on linux-source-6.1, made visible.
#
#   make run    build what is missing, boot, run the race demo, show it
#   make test   build, boot the `test` kernel, run every test, summarise
#   make soak   loop the guest race tests for DURATION seconds per fault path
#   make bench  boot the `perf` kernel once, run the fault benchmarks, report
#
# The kernel tree and builds live outside the clone, in $(PFSCALE_CACHE).

PFSCALE_CACHE ?= $(HOME)/.cache/pfscale
export PFSCALE_CACHE
SMP ?= 4
MEM ?= 1024
BUILD := build
# The kernel line: 6.1 (default; the series' base) or 6.12 (Debian's
# linux-source-6.12; only the unpatched flavours so far: make
# kernel-test+unpatched KERNEL=6.12). The scripts read it as PFSCALE_KERNEL.
KERNEL ?= 6.1
ifeq ($(filter 6.1 6.12,$(KERNEL)),)
$(error KERNEL=$(KERNEL): pfscale builds KERNEL=6.1 or KERNEL=6.12)
endif
export PFSCALE_KERNEL := $(KERNEL)
# build/kernel-FLAVOUR.path for 6.1 (as always), build/kernel-6.12-FLAVOUR.path
# for 6.12.
KERNEL_PATH_PREFIX := $(BUILD)/kernel$(if $(filter-out 6.1,$(KERNEL)),-$(KERNEL))

DEB_PACKAGES := linux-source-6.1 linux-config-6.1 qemu-system-x86 gdb crash busybox-static gcc make \
	flex bison bc libelf-dev libssl-dev cpio dwarves python3 python3-ply python3-git ccache xz-utils file \
	gnuplot-nox trace-cmd libnuma-dev
# Another kernel line's source only when it is asked for (make deps KERNEL=6.12).
DEB_PACKAGES += $(if $(filter-out 6.1,$(KERNEL)),linux-source-$(KERNEL))
# Debian tools copied into the initramfs with their libraries: trace-cmd
# records the pfscale trace events in the guest (t_trace).
GUEST_HOST_TOOLS := trace-cmd

GUEST_CFLAGS := -static -O2 -Wall -Wextra -Werror -pthread -Itests/guest -Idebugfs-tools -Ibench -Ilib
GUEST_TESTS := $(patsubst tests/guest/%.c,$(BUILD)/guest/%,$(wildcard tests/guest/t_*.c))
GUEST_TOOLS := $(BUILD)/guest/pfstat $(BUILD)/guest/pfrss $(BUILD)/guest/pfcost
# h_*.c: guest helpers that host-side tests (gdb, crash) drive; not run by guest/run/tests.
GUEST_HELPERS := $(patsubst tests/guest/%.c,$(BUILD)/guest/%,$(wildcard tests/guest/h_*.c))
GUEST_BENCH := $(BUILD)/guest/pfbench
GUEST_PROGS := $(GUEST_TESTS) $(GUEST_HELPERS) $(GUEST_TOOLS) $(GUEST_BENCH)

# make bench knobs: seconds per run, repetitions, vCPUs, thread counts (N:N:..)
BENCH_SECS ?= 1
BENCH_REPS ?= 3
BENCH_CPUS ?= $(shell nproc)
BENCH_THREADS ?=
# BENCH_ONLY=same_region:page_fault1: only these benchmarks
BENCH_ONLY ?=
# BENCH_COST=1: count per-fault instructions and line transfers with the
# pfcost plugin; BENCH_FLOOR=1: also run the unpatched perf kernel
BENCH_COST ?= 1
BENCH_FLOOR ?= 1
# passes over the region per run instead of BENCH_SECS: fixed work, so the
# plugin's per-fault counts do not depend on the guest's speed
BENCH_PASSES ?= $(if $(filter 1,$(BENCH_COST)),1)

.PHONY: all deps kernel kernel-test kernel-perf initramfs plugin run check series-builds test test-kasan test-generic soak shell bench \
	debian-config clean
all: run

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f '$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "pfscale: installing $$missing"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null; \
	fi

kernel: kernel-test
# build/kernel-FLAVOUR.path is rewritten only when the artifact dir changes,
# so that what depends on it (the initramfs) stays built on warm runs.
kernel-test kernel-perf kernel-test+kasan kernel-test+unpatched kernel-test+generic kernel-perf+unpatched: kernel-%: deps
	@mkdir -p $(BUILD)
	@scripts/kernel.sh $* > $(KERNEL_PATH_PREFIX)-$*.path.new
	@cmp -s $(KERNEL_PATH_PREFIX)-$*.path.new $(KERNEL_PATH_PREFIX)-$*.path || \
		mv $(KERNEL_PATH_PREFIX)-$*.path.new $(KERNEL_PATH_PREFIX)-$*.path
	@rm -f $(KERNEL_PATH_PREFIX)-$*.path.new
	@echo "pfscale: $(KERNEL) $* kernel in $$(cat $(KERNEL_PATH_PREFIX)-$*.path)"
$(BUILD)/kernel-test.path: kernel-test ;

$(BUILD)/guest/%: tests/guest/%.c tests/guest/tap.h tests/guest/common.h debugfs-tools/pfscale_trace.h \
		bench/pfcost.h | deps
	@mkdir -p $(dir $@)
	gcc $(GUEST_CFLAGS) -o $@ $<

$(BUILD)/guest/%: debugfs-tools/%.c debugfs-tools/pfscale_trace.h lib/json_writer.h | deps
	@mkdir -p $(dir $@)
	gcc $(GUEST_CFLAGS) -o $@ $<

$(BUILD)/guest/%: bench/%.c bench/pfcost.h lib/json_writer.h | deps
	@mkdir -p $(dir $@)
	gcc $(GUEST_CFLAGS) -o $@ $<

# The crash extension (crash/*.c, one .so; crash/layout.c includes the names
# and bounds of pfscale-layout from scripts/layout.def); tests/host/*.sh and
# crash/vmcore.sh build it with this rule.
# -fvisibility=hidden: the files share symbols that crash's must not bind to.
CRASH_CFLAGS := -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC -nostartfiles \
	-fvisibility=hidden -D_GNU_SOURCE -DX86_64 -I/usr/include/crash -Ilib
CRASH_SRCS := crash/pfscale.c crash/layout.c crash/tasks.c crash/maple.c crash/decode.c \
	crash/cmd_counters.c crash/cmd_rss.c crash/cmd_pte.c crash/cmd_vma.c
$(BUILD)/pfscale.so: $(CRASH_SRCS) crash/pfscale.h crash/decode.h lib/json_writer.h scripts/layout.def
	@mkdir -p $(dir $@)
	gcc $(CRASH_CFLAGS) -o $@ $(CRASH_SRCS)

# The extension's decode core and JSON writer as a host program, for the
# golden vectors (tests/host/vectors.sh): no crash headers.
$(BUILD)/decode-vectors: tests/host/decode_vectors.c crash/decode.c crash/decode.h \
		lib/json_writer.h
	@mkdir -p $(dir $@)
	gcc -Wall -Wextra -Werror -O1 -Ilib -o $@ tests/host/decode_vectors.c crash/decode.c

# The QEMU TCG plugin that counts instructions and cache-line transfers
# between guest markers (qemu/boot.sh -P), built with the host compiler
# against the API declarations in qemu/plugin/ (Debian ships no header).
PLUGIN := $(BUILD)/pfcost.so
plugin: $(PLUGIN)
$(PLUGIN): qemu/plugin/pfcost.c qemu/plugin/qemu-plugin-api.h bench/pfcost.h lib/json_writer.h | deps
	@mkdir -p $(dir $@)
	gcc -O2 -g -Wall -Wextra -Werror -Ibench -Ilib -shared -fPIC -fvisibility=hidden -o $@ $<

# The host's TSC rate, for the perf guest's tsc_early_khz= (bench/run.sh).
HOST_TSC_KHZ := $(BUILD)/host-tsc-khz
$(HOST_TSC_KHZ): qemu/host-tsc-khz.c | deps
	@mkdir -p $(dir $@)
	gcc -O2 -Wall -Wextra -Werror -o $@ $<

# The initramfs needs of the kernel only the tree its mm selftests are built
# from: it depends on the path file (not the phony kernel-test, which would
# rebuild it on every make run/test), and on the selftests' build script.
initramfs: $(BUILD)/initramfs.cpio
$(BUILD)/initramfs.cpio: $(GUEST_PROGS) guest/init $(wildcard guest/run/* guest/lib/*) scripts/initramfs.sh \
		tests/selftests/build.sh $(BUILD)/kernel-test.path
	tests/selftests/build.sh $$(cat $$(cat $(BUILD)/kernel-test.path)/source) $(BUILD)/selftests \
		> $(BUILD)/selftests.list
	GUEST_HOST_TOOLS="$(GUEST_HOST_TOOLS)" scripts/initramfs.sh $@ $(GUEST_PROGS) $$(cat $(BUILD)/selftests.list)

# The main job: boot the patched kernel and run the race demo, under the
# pfcost plugin, which prints each path's cost per page fault.
run: kernel-test $(BUILD)/initramfs.cpio $(PLUGIN)
	PFSCALE_PFCOST_ARGS=print=on qemu/boot.sh -k $$(cat $(BUILD)/kernel-test.path)/bzImage \
		-i $(BUILD)/initramfs.cpio -c $(SMP) -m $(MEM) -r demo -l $(BUILD)/run-console.log \
		-P $(BUILD)/run-pfcost.jsonl

# An interactive guest shell (exit with: reboot -f).
shell: kernel-test $(BUILD)/initramfs.cpio
	qemu/boot.sh -k $$(cat $(BUILD)/kernel-test.path)/bzImage -i $(BUILD)/initramfs.cpio \
		-c $(SMP) -m $(MEM) -t 100000 -l $(BUILD)/shell-console.log

# gdb on a running guest: boot it with the gdbstub in the background, open gdb
# with vmlinux, vmlinux-gdb.py and gdb-scripts/pfscale.py loaded and attached;
# the guest stops when gdb exits. Non-interactive:
#   make gdb GDB_BATCH='-batch -ex "pf-counters"'
# GDB_RUN: guest run scripts; GDB_ARGS: extra kernel command line.
GDB_PORT ?= 1234
GDB_RUN ?= gdbmm,gdbmap
GDB_ARGS ?=
GDB_BATCH ?=
GDB_ART ?= $$(cat $(BUILD)/kernel-test.path)
GDB_LOG ?= $(BUILD)/gdb-console.log
.PHONY: gdb
gdb: kernel-test $(BUILD)/initramfs.cpio
	gdb-scripts/session.sh -k $(GDB_ART) -i $(BUILD)/initramfs.cpio -p $(GDB_PORT) \
		-r $(GDB_RUN) -a "$(GDB_ARGS)" -c $(SMP) -m $(MEM) -l $(GDB_LOG) \
		-- $(GDB_BATCH)

# vmcores of a racing guest (VMCORE_AT=panic: of a panicked one) for crash and
# gdb in build/vmcore/, and the command lines that open them (docs/debuggers.md).
# VMCORE_ARGS: extra kernel command line, e.g. pfscale.atomic_pte=1.
VMCORE_AT ?= race
VMCORE_ARGS ?=
.PHONY: vmcore
vmcore: kernel-test $(BUILD)/initramfs.cpio
	crash/vmcore.sh -k $$(cat $(BUILD)/kernel-test.path) -i $(BUILD)/initramfs.cpio \
		-c $(SMP) -m $(MEM) -w $(VMCORE_AT) -a "$(VMCORE_ARGS)" -o $(BUILD)/vmcore

# The everyday loop (README): one boot, the race tests widened on the
# atomic path then on the stock path, and the host unit tests; the debugger
# tests and checkpatch only when their files changed (scripts/check.sh).
check: kernel-test $(BUILD)/initramfs.cpio
	scripts/check.sh $$(cat $(BUILD)/kernel-test.path) $(BUILD)/initramfs.cpio \
		$(SMP) $(MEM) $(BUILD)/check

# The unpatched build is the baseline boot of the guest tests (tests/run.sh
# -p unpatched) and what the debugger tests check "no pfscale patches" on.
test: kernel-test kernel-test+unpatched $(BUILD)/initramfs.cpio $(PLUGIN) $(HOST_TSC_KHZ)
	PFSCALE_STOCK_ART=$$(cat $(BUILD)/kernel-test+unpatched.path) \
	tests/run.sh -k $$(cat $(BUILD)/kernel-test.path) -i $(BUILD)/initramfs.cpio \
		-c $(SMP) -m $(MEM) -o $(BUILD)/test

# The guest tests, both paths, on a KASAN build of the test kernel (slower;
# not in make test). No host tests: a -p dump of a KASAN kernel pages
# through its whole shadow mapping and does not finish.
test-kasan: kernel-test+kasan $(BUILD)/initramfs.cpio
	tests/run.sh -G -k $$(cat $(BUILD)/kernel-test+kasan.path) -i $(BUILD)/initramfs.cpio \
		-c $(SMP) -m $(MEM) -o $(BUILD)/test-kasan

# The guest tests on the atomic path of a test kernel that runs the generic
# lock-taking table operations (CONFIG_PFSCALE_GENERIC_TABLE_OPS), what an
# architecture without native ones would run; plain and with widened race
# windows. Not in make test: a third kernel build.
test-generic: kernel-test+generic $(BUILD)/initramfs.cpio
	PFSCALE_APPEND=pfscale_test.table_ops=generic tests/run.sh -G -p atomic,widened -k $$(cat $(BUILD)/kernel-test+generic.path) \
		-i $(BUILD)/initramfs.cpio -c $(SMP) -m $(MEM) -o $(BUILD)/test-generic

# Every deliberately broken kernel variant (tests/broken/variants), built in
# the test kernel's tree and booted: each must be caught by the check meant
# for it (tests/broken/README.md). A few minutes each; make test runs some.
.PHONY: broken
broken: kernel-test $(BUILD)/initramfs.cpio
	@missed=; for v in $$(tests/broken/check.sh --list); do \
		tests/broken/check.sh $$v || missed="$$missed $$v"; done; \
	if [ -n "$$missed" ]; then echo "not caught:$$missed"; exit 1; fi

# Every prefix of patches/series builds: one incremental vmlinux build of
# the test config per patch (scripts/series-builds.sh). Not in make test.
series-builds: deps
	scripts/series-builds.sh

# Debian's own config (linux-config-6.1's config.amd64_none_amd64) with the
# pfscale options on: both must survive olddefconfig, and the .c files the
# series touches must compile without a warning. Not in make test.
debian-config: deps
	scripts/debian-config.sh

# Soak: loop the guest race tests for DURATION seconds on each fault path.
DURATION ?= 1800
soak: kernel-test $(BUILD)/initramfs.cpio
	tests/run.sh -k $$(cat $(BUILD)/kernel-test.path) -i $(BUILD)/initramfs.cpio \
		-c $(SMP) -m $(MEM) -o $(BUILD)/soak -s $(DURATION)

# Benchmarks: the perf kernel (no debug options), one boot, ratios from it;
# per-fault counts from the pfcost plugin; the unpatched perf kernel as the
# floor in a second boot.
BENCH_FLOOR_KERNEL := $(if $(filter 1,$(BENCH_FLOOR)),kernel-perf+unpatched)
bench: kernel-perf $(BENCH_FLOOR_KERNEL) $(BUILD)/initramfs.cpio $(PLUGIN) $(HOST_TSC_KHZ)
	bench/run.sh -k $$(cat $(BUILD)/kernel-perf.path) -i $(BUILD)/initramfs.cpio -T $(HOST_TSC_KHZ) \
		-c $(BENCH_CPUS) -s $(BENCH_SECS) -r $(BENCH_REPS) -C $(BENCH_COST) \
		$(if $(BENCH_FLOOR_KERNEL),-u $$(cat $(BUILD)/kernel-perf+unpatched.path)) \
		$(if $(BENCH_THREADS),-t $(BENCH_THREADS)) $(if $(BENCH_PASSES),-p $(BENCH_PASSES)) \
		$(if $(BENCH_ONLY),-b $(BENCH_ONLY)) -o $(BUILD)/bench

clean:
	rm -rf $(BUILD)
