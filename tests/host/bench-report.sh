#!/bin/bash
# Host-side unit test of make bench's report (bench/report.py) on made-up
# pfbench run and verdict records and pfcost records: tests/host/bench_report.py
# prints the TAP.
exec python3 "$(dirname "$0")/bench_report.py"
