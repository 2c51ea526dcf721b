#!/bin/bash
# Host-side unit test of the gdb helpers' pure decoding (plain python3, no
# gdb, no guest), with the values of the test kernel's pfscale-layout
# ($PFSCALE_ART): tests/host/decode.py prints the TAP.
exec python3 "$(dirname "$0")/decode.py"
