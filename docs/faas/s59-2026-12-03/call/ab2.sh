while ! grep -q '^rc=' /tmp/ci-check/LOG; do sleep 10; done
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s59/call
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s59/ab2 base:memext /var/tmp/s59/base2 call:memext /var/tmp/s59/call
