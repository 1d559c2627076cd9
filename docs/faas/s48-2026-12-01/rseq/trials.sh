#!/bin/bash
# N trials each way, alternating (run.sh); the tally, then each line.
# Usage (root, a swap area on): trials.sh [N]
HERE=$(cd "$(dirname "$0")" && pwd)
for i in $(seq "${1:-10}"); do
  for r in 1 0; do echo "rseq=$r: $("$HERE/run.sh" $r 2>/dev/null | tail -1)"; done
done > /tmp/rseq-trials.txt
sed -e 's/: alive: D in mem_cgroup_oom_synchronize.*/: waits in the OOM wait/' -e 's/: alive: .*/: runs on (not held)/' \
  -e 's/: DIED: exit \([0-9]*\).*/: died, exit \1/' /tmp/rseq-trials.txt | sort | uniq -c
echo; cat /tmp/rseq-trials.txt; rm -f /tmp/rseq-trials.txt
