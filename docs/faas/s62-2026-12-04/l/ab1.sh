export MEMEXT_LOG=info,memext::daemon::events=debug
# base: 5e96e6f (one lane), give: 19c2c85 with bfeac59 reverted (give-way, one lane), lanes: 19c2c85 (give-way + wake lane); ideal beside
cd /var/tmp/s62/lanes
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s62/l base /var/tmp/s62/base give /var/tmp/s62/give lanes /var/tmp/s62/lanes ideal:ideal /var/tmp/s62/lanes
