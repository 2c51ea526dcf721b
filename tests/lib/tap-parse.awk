# The parser of tests/run.sh (run through tests/lib/tap-parse.sh, which
# documents the modes and variables). Reads one log, prints one line per
# result: "PASS  TEXT", "FAIL  TEXT", "SKIP  TEXT", and "      TEXT" for
# diagnostics. Plain POSIX awk (Debian's default is mawk).
#
# A program's run in a guest log (guest/run/prog prints the framing lines):
#   # pfscale-guest: programs t_a t_b vmselftests     (what will run)
#   # pfscale-guest: running t_a
#   1..3                                              (its plan)
#   ok - t_a: ...                                     (its results)
#   # pfscale-guest: t_a exited with 0                (its exit status)
#   kmsg: ...                                         (kernel messages)
# Each program gets one more result: PASS if it printed one plan, as many
# results as planned and exited 0; FAIL otherwise, and FAIL for a listed
# program that never started. A host test's output is one such run. A plan
# of 0 is a skip of every check, through the allowlist, and only as
# "1..0 # SKIP reason"; a bare "1..0" or one without a reason fails.
#
# The last line printed, once the log has been read, is the end line
# "END   [LABEL] LOG": tests/lib/tap-parse.sh and tests/run.sh fail a parse
# that has none.

function glob2re(g,   r, i, c) {
	r = ""
	for (i = 1; i <= length(g); i++) {
		c = substr(g, i, 1)
		if (c == "*")
			r = r ".*"
		else if (c == "?")
			r = r "."
		else if (c == "^")
			r = r "\\^"
		else if (c == "\\")
			r = r "."
		else if (index("$.[]|()+{}", c))
			r = r "[" c "]"
		else
			r = r c
	}
	return "^" r "$"
}

# The allowlist: "GLOB -- REASON" per line; GLOB is matched against
# "[LABEL] TEXT", TEXT being the skip line after "ok - ".
function load_allow(   line, n, g, why) {
	nallow = 0
	if (allow == "")
		return
	while ((getline line < allow) > 0) {
		if (line ~ /^[ \t]*(#|$)/)
			continue
		n = index(line, " -- ")
		why = n ? substr(line, n + 4) : ""
		if (!n || why ~ /^[ \t]*$/) {
			out("FAIL", "expected-skips entry without ' -- REASON': " line)
			continue
		}
		g = substr(line, 1, n - 1)
		sub(/[ \t]+$/, "", g)
		allow_re[++nallow] = glob2re(g)
		allow_why[nallow] = why
	}
	close(allow)
}

function out(kind, text) {
	print kind "  " text
}

function diag(text) {
	print "      " text
}

function skip(text,   i) {
	for (i = 1; i <= nallow; i++)
		if ((tag " " text) ~ allow_re[i]) {
			out("SKIP", tag " " text " [expected: " allow_why[i] "]")
			return
		}
	out("FAIL", tag " " text " [an unexpected skip: not in " allowname "]")
}

function result(line) {
	if (line ~ /^ok - / && line ~ /#[ \t]*SKIP/)
		skip(substr(line, 6))
	else if (line ~ /^ok - /)
		out("PASS", tag " " substr(line, 6))
	else
		out("FAIL", tag " " substr(line, 10))
	if (inblock)
		nres++
}

function open_block(name) {
	if (inblock)
		close_block("reported no exit status (the next program started)")
	inblock = 1
	bname = name
	plan = -1
	nplans = 0
	nres = 0
	skipall = ""
	plan0 = ""
	subname = ""
	ran[name] = 1
	cur = name
}

# status: the exit status (a number), or what went wrong instead.
function close_block(status,   why, prefix) {
	why = ""
	if (status !~ /^[0-9]+$/)
		why = status
	else if (status + 0 != 0)
		why = "exited with " status (status > 128 && status < 160 ? \
			" (killed by signal " status - 128 ")" : "") \
			(exitnote == "" ? "" : "; " exitnote)
	exitnote = ""
	if (nplans == 0)
		why = why (why == "" ? "" : "; ") "printed no plan (1..N)"
	else if (nplans > 1)
		why = why (why == "" ? "" : "; ") "printed " nplans " plans"
	else if (nres != plan)
		why = why (why == "" ? "" : "; ") "planned " plan " checks, reported " nres
	if (plan0 != "")
		why = why (why == "" ? "" : "; ") plan0
	# A host test's block has no name: its tag is its name.
	prefix = bname == "" ? "" : bname ": "
	if (why != "")
		out("FAIL", tag " " prefix why)
	else if (skipall != "")
		skip(prefix "every check skipped (" skipall ")")
	else
		out("PASS", tag " " prefix "ran to the end, " nres " of " plan \
			" planned checks, exit 0")
	inblock = 0
}

BEGIN {
	tag = "[" label "]"
	errre = ENVIRON["ERRRE"]
	okre = ENVIRON["OKRE"]
	blockre = ENVIRON["BLOCKRE"]
	allowname = allow
	sub(/.*\//, "", allowname)
	load_allow()
	nwant = 0
	if (expect != "") {
		n = split(expect, e, " ")
		for (i = 1; i <= n; i++)
			if (!(e[i] in want)) {
				want[e[i]] = 1
				order[++nwant] = e[i]
			}
	}
	if (mode == "host")
		open_block("")
	nerr = 0
}

{ sub(/\r$/, "") }

# An expected report ("!<" header) and its stack dump, through "</TASK>".
blockre != "" && $0 ~ blockre { inreport = 1 }
inreport {
	if ($0 ~ /<\/TASK>/)
		inreport = 0
	if (mode == "console")
		next
}
mode != "host" && errre != "" && !inreport && $0 ~ errre && (okre == "" || $0 !~ okre) {
	if (!nerr++) {
		first = $0
		# A program's kmsg lines follow its exit line: until the
		# next program starts, a message is the last one's.
		during = cur == "" ? "boot" : cur (subname == "" ? "" : " " subname)
	}
}

mode == "console" { next }

mode == "guest" && /^# pfscale-guest: programs( |$)/ {
	listed = 1
	for (i = 4; i <= NF; i++)
		if (!($i in want)) {
			want[$i] = 1
			order[++nwant] = $i
		}
	next
}

# "phase NAME" (guest/run/check): the results from here on are on another
# path of the same boot; their tag says which.
mode == "guest" && /^# pfscale-guest: phase [^ ]+$/ {
	if (inblock)
		close_block("reported no exit status (the next phase started)")
	tag = "[" label " " $NF "]"
	next
}

mode == "guest" && /^# pfscale-guest: running / {
	open_block($NF)
	diag($0)
	next
}

mode == "guest" && /^# pfscale-guest: selftest / {
	subname = $NF
	next
}

mode == "guest" && /^# pfscale-guest: [^ ]+ exited with / {
	diag($0)
	# guest/run/prog's per-program time limit ended it: say so.
	exitnote = ""
	if (match($0, /timed out, PFSCALE_PROG_TIMEOUT=[0-9]+/))
		exitnote = substr($0, RSTART, RLENGTH)
	if (inblock && $3 == bname)
		close_block($6)
	else
		out("FAIL", tag " " $3 ": an exit line without a running line")
	next
}

# "pfscale-guest: done rc=N": N is guest/init's status (a run script that
# failed or was missing).
mode == "guest" && /pfscale-guest: done/ {
	done = 1
	donerc = ""
	if (match($0, /pfscale-guest: done rc=[0-9]+/))
		donerc = substr($0, RSTART + 23, RLENGTH - 23)
}
mode == "guest" && /FATAL: expected [0-9]+ CPUs/ { cpufatal = $0 }

/^1\.\.[0-9]+/ {
	if (inblock) {
		nplans++
		plan = substr($1, 4) + 0
		if (plan == 0 && $0 ~ /#[ \t]*SKIP/) {
			skipall = $0
			sub(/.*#[ \t]*SKIP[ \t]*/, "", skipall)
			if (skipall == "")
				plan0 = "printed the plan 1..0 # SKIP without a reason"
		} else if (plan == 0)
			plan0 = "printed the plan 1..0 without '# SKIP reason'"
	}
	next
}

/^(not )?ok - / {
	result($0)
	next
}

mode == "host" { diag($0); next }
/^# / { diag($0) }

END {
	finish()
	print "END   " tag " " (logname == "" ? "-" : logname)
}

function finish() {
	if (mode == "skip")
		return
	if (mode == "host") {
		close_block(rc)
		return
	}
	if (mode == "guest") {
		if (inblock)
			close_block("did not finish: no exit line (it hung, or the guest died under it)")
		if (!listed && nwant == 0)
			out("FAIL", tag " the guest listed the programs it would run ('# pfscale-guest: programs' line)")
		for (i = 1; i <= nwant; i++)
			if (!(order[i] in ran))
				out("FAIL", tag " " order[i] ": never ran")
		if (rc == 124)
			out("FAIL", tag " guest finished in time (timed out; see " logname ")")
		else if (!done)
			out("FAIL", tag " guest ran to the end (QEMU exit " rc ", no done marker; see " logname ")")
		else if (donerc == "")
			out("FAIL", tag " guest ran to the end (a done marker without rc=N; see " logname ")")
		else if (donerc + 0 != 0)
			out("FAIL", tag " guest ran to the end (done rc=" donerc ": a run script failed or is missing; see " logname ")")
		else if (rc != 0)
			out("FAIL", tag " guest ran to the end (QEMU exit " rc " after the done marker; see " logname ")")
		else
			out("PASS", tag " guest ran to the end")
		if (cpufatal != "")
			out("FAIL", tag " guest sees the CPUs asked for: " cpufatal)
	}
	if (errre == "")
		out("FAIL", tag " kernel error patterns: " ENVIRON["ERRWHY"] " (the console log was not scanned)")
	else if (nerr)
		out("FAIL", tag " no kernel error in the console log (" nerr " lines, the first during " \
			during "; see " logname "): " first)
	else
		out("PASS", tag " no kernel error in the console log")
}
