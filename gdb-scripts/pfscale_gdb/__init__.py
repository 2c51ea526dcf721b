# pfscale gdb helpers (see gdb-scripts/pfscale.py)
