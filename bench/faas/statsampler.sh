#!/bin/bash
# Samples `memext status --json` of the running bench/faas daemon every 2 s into $1
# (each sample after a line "# EPOCH"); stattab.py reads them. Stop it by its pid.
out=$1
while true; do
  cfg=$(ps -eo args | grep -o -- '--config [^ ]*memext.toml daemon' | head -1 | awk '{print $2}')
  if [ -n "$cfg" ]; then
    bin=$(ps -eo args | grep -- "--config $cfg daemon" | grep -v grep | head -1 | awk '{print $1}')
    echo "# $(date +%s.%N)" >> $out
    timeout 5 $bin --config $cfg status --json >> $out 2>/dev/null
  fi
  sleep 2
done
