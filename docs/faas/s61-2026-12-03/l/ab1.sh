export MEMEXT_LOG=info,memext::daemon::events=debug
# base: 5e96e6f, lanes: a8a755d (= 27189fc's code), ideal beside them (worktrees)
cd /var/tmp/s61/lanes
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s61/l base /var/tmp/s61/base lanes /var/tmp/s61/lanes ideal:ideal /var/tmp/s61/lanes
