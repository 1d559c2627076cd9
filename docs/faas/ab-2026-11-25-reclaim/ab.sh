#!/bin/bash
# bench/faas A/B: two builds, each from its own worktree, two rounds each,
# alternating; `memext status --json` sampled beside each run.
# Usage: ab.sh OUT A_NAME A_TREE B_NAME B_TREE   (run from a checkout that has
# bench/faas/statsampler.sh). This session's runs:
#   ab.sh /var/tmp/faasab  old  <worktree at 3b6f173> new   <this checkout>
#   ab.sh /var/tmp/faasab2 base <worktree at 504fb16> fix   <this checkout>
#   ab.sh /var/tmp/faasab3 fix  <worktree at 3d975c9> lever <this checkout>
# (the first one's sampler path was wrong: no status samples for it).
# (Two builds: what bench/faas/ab.sh does, which this was.)
exec "$(dirname "$0")/../../../bench/faas/ab.sh" "$@"
