#!/usr/bin/env bash
# bench/wake: see run.py --help. Needs root.
exec python3 "$(dirname "$0")/wake/run.py" "$@"
