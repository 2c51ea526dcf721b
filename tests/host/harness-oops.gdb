# tests/host/harness.sh: turn h_fail's next sched_rr_get_interval() call
# into a real kernel BUG: stop at the syscall, jump to the ud2 of the first
# BUG() in the kernel's bug table that is in the kernel's text (init text
# is gone by now) and not a WARN (BUGFLAG_WARNING is bit 0).
break __x64_sys_sched_rr_get_interval
continue
set $b = (struct bug_entry *)&__start___bug_table
set $a = (long)&$b->bug_addr_disp + $b->bug_addr_disp
while (($b->flags & 1) || $a < (long)&_stext || $a >= (long)&_etext)
  set $b = $b + 1
  set $a = (long)&$b->bug_addr_disp + $b->bug_addr_disp
end
set var $pc = $a
printf "pc now %#lx\n", $pc
delete
detach
