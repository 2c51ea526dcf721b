#!/bin/bash
# The pfcost plugin's cost model against sharing patterns whose counts it
# predicts (tests/guest/h_pfcost_model.c): boot the test kernel on 2 vCPUs
# with the plugin (qemu/boot.sh -P), run the patterns between markers, and
# check every record: instructions of a known loop, 2N transfers for N
# turns of ping-pong on one line (plain stores and atomics), N for an RMW
# instruction on a line the other vCPU wrote, about 0 for private lines;
# a window (pfbench's all-workers-running stretch) counts what happened
# inside it only, and with windows=on lists each window's own counts,
# which add up to the sums; the address map the plugin got (from the
# kernel's vmlinux, qemu/pfcost-layout) fits the guest: every direct-map
# transfer is at its physical address plus page_offset_base.
# Transfer counts do not depend on timing: each turn waits for the other.
# The model orders accesses by the plugin's callbacks, which QEMU runs just
# after each access: a write that follows the other vCPU's store within
# that gap is ordered before it and a transfer is lost (lock xadd turns
# 2.4 us apart lost 27%). So each turn waits a few microseconds before it
# writes (h_pfcost_model.c), and the 10% tolerance covers a vCPU thread
# preempted between an access and its callback.
#
#   PFSCALE_ART=DIR PFSCALE_INITRD=CPIO PFSCALE_OUT=DIR tests/host/pfcost.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/host/lib.sh
. "$top/tests/host/lib.sh"
host_test_env
log=$out/pfcost-console.log report=$out/pfcost-model.jsonl
echo "1..10"
PFSCALE_PFCOST_ARGS=windows=on "$top/qemu/boot.sh" -q -k "$art/bzImage" -i "$initrd" -c 2 -m 512 -r pfcostmodel \
	-P "$report" -l "$log" -t 400 >"$out/pfcost-boot.out" 2>&1
echo "# boot exit $? (log $log, report $report)"
tr -d '\r' < "$log" | grep '^PFCOST_MODEL' > "$out/pfcost-model.lines"
exec python3 - "$report" "$out/pfcost-model.lines" <<'PY'
import json, sys

report, lines = sys.argv[1], sys.argv[2]
checks = [
    'pfcost: one plugin record per marked phase of h_pfcost_model (7: one begun by pfcost_phase())',
    'pfcost: instructions: a dec/jnz loop of K iterations is 2K user instructions (+0.1%), none of them spin, in both intervals around pfcost_phase()',
    'pfcost: ping-pong of one line for N turns (plain stores): 2N transfers on that line (+-10%)',
    'pfcost: ping-pong with lock xadd: 2N transfers (an atomic RMW is one store)',
    'pfcost: RMW instructions (lock incq, addq $1,(mem)) on a line the other vCPU wrote: N transfers each, flag line 2N',
    'pfcost: threads storing to private lines N times: user-memory transfers under 1% of N',
    'pfcost: every transfer has a data class, the pause loops count as spin, the kernel ran',
    'pfcost: a window counts only inside it: P faults of 3P, 1 window (stray closes ignored, one left open dropped), P of them on the faulting vCPU',
    'pfcost: windows=on: every record lists its closed windows, whose per-vCPU counts add up to the window sums and whose data classes add up to their transfers',
    "pfcost: the address map (qemu/pfcost-layout, from vmlinux) fits the guest: direct-map transfers at physical + page_offset_base, no kernel-half address below the map",
]
try:
    recs = [json.loads(l) for l in open(report)]
except (OSError, ValueError) as e:
    recs, err = [], 'no readable report: %s' % e
phases = {}
for l in open(lines):
    f = dict(kv.split('=', 1) for kv in l.split()[1:] if '=' in kv)
    if 'phase' in f:
        phases[f['phase']] = f
if len(recs) != 7 or len(phases) != 7:
    err = 'report has %d records, guest printed %d phases' % (len(recs), len(phases))
    for c in checks:
        print('not ok - %s (%s)' % (c, err))
    sys.exit(0)
rec = {name: recs[int(f['seq']) - 1] for name, f in phases.items()}
for name, f in phases.items():
    if rec[name]['seq'] != int(f['seq']):
        print('# record %d is not phase %s' % (rec[name]['seq'], name))


def line_n(name, key='line'):
    """Transfers of the line at the guest address the phase printed."""
    va = int(phases[name][key], 16)
    return sum(h['n'] for h in rec[name]['hot_lines'] if int(h['va'], 16) >> 6 == va >> 6)


def result(ok, text, detail):
    print('%s - %s (%s)' % ('ok' if ok else 'not ok', text, detail))


def near(x, want, tol=0.10):
    return abs(x - want) <= tol * want


result(True, checks[0], ', '.join('%s=%d' % (n, rec[n]['seq']) for n in phases))
k = int(phases['insns']['k'])
ins, ph = rec['insns']['insns'], rec['phase']['insns']
result(all(2 * k <= i['user'] <= 2 * k * 1.001 and i['spin_user'] == 0 for i in (ins, ph)),
       checks[1], 'K=%d: user %d and %d, spin_user %d and %d'
       % (k, ins['user'], ph['user'], ins['spin_user'], ph['spin_user']))
n = int(phases['pingpong']['n'])
pp = line_n('pingpong')
result(near(pp, 2 * n), checks[2], 'N=%d: %d' % (n, pp))
at = line_n('atomic')
result(near(at, 2 * n) and rec['atomic']['accesses']['atomic'] >= n, checks[3],
       'N=%d: %d, atomic accesses %d' % (n, at, rec['atomic']['accesses']['atomic']))
fl, la, lp = line_n('rmw'), line_n('rmw', 'line2'), line_n('rmw', 'line3')
result(near(fl, 2 * n) and near(la, n) and near(lp, n), checks[4],
       'N=%d: flag %d, lock incq %d, addq %d' % (n, fl, la, lp))
pu = rec['private']['by_class']['user']
result(pu < n / 100, checks[5], 'N=%d: %d' % (n, pu))
bad = [r['seq'] for r in recs
       if sum(r['by_class'].values()) != r['transfers']['total']
       or r['transfers']['total'] != r['transfers']['load'] + r['transfers']['store']]
spin = rec['pingpong']['insns']['spin_user']
kern = min(r['insns']['kernel'] for r in recs)
result(not bad and spin > 0 and kern > 0, checks[6],
       'records with unclassified transfers: %s; ping-pong spin %d; kernel >= %d'
       % (bad or 'none', spin, kern))
wr = rec['window']
win = wr.get('window', {})
p = int(phases['window']['n'])
pv = win.get('per_vcpu', [])
result(win.get('windows') == 1 and p <= win.get('page_faults', -1) <= p + 2
       and wr['page_faults'] >= 3 * p and pv and pv[0]['page_faults'] >= p,
       checks[7], 'P=%d: interval %d faults; window: %s windows, %s faults (per vCPU %s)'
       % (p, wr['page_faults'], win.get('windows'), win.get('page_faults'),
          [v['page_faults'] for v in pv]))
wrong = []
for r in recs:
    w = r.get('window', {})
    wl = w.get('window_list')
    if wl is None or len(wl) != w.get('windows'):
        wrong.append('record %d: %s windows, %s listed'
                     % (r['seq'], w.get('windows'), 'no list' if wl is None else len(wl)))
        continue
    for i, v in enumerate(w['per_vcpu']):
        for key, total in v.items():
            listed = sum(e['per_vcpu'][i][key] for e in wl)
            if listed != total:
                wrong.append('record %d vCPU %d %s: %d listed, %d summed'
                             % (r['seq'], i, key, listed, total))
    wrong += ['record %d window %d: classes %d, transfers %d'
              % (r['seq'], j, sum(e['by_class'].values()), e['transfers'])
              for j, e in enumerate(wl) if sum(e['by_class'].values()) != e['transfers']]
result(not wrong, checks[8], '; '.join(wrong[:3]) or '%d records, %d windows listed'
       % (len(recs), sum(len(r['window']['window_list']) for r in recs)))
lay = [r.get('layout') for r in recs]
direct = sum(r['by_class'].get('direct_map', 0) + r['by_class'].get('page_data', 0) for r in recs)
result(all(lay) and not sum(l['misses'] for l in lay) and direct > 0, checks[9],
       '%s; %d direct-map transfers, %d misses'
       % (lay[0] if lay else 'no records', direct, sum(l['misses'] for l in lay if l)))
PY
