export MEMEXT_LOG=info,memext::daemon::events=debug
# base: memext as it is (wake read-backs at nice 0); nice19: the same build with daemon.wake_read_back_nice = 19
cd /var/tmp/s63/w2
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s63/r3 base:memext /var/tmp/s63/w2 nice19:memext+daemon.wake_read_back_nice=19 /var/tmp/s63/w2
