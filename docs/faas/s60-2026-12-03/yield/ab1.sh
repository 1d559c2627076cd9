export MEMEXT_LOG=info,memext::daemon::events=debug
# base: 5e96e6f, yield: 9cbf8f5 (worktrees)
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s60/y base /var/tmp/s60/base yield /var/tmp/s60/yield
