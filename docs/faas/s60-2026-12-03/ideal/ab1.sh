ROUNDS=1 bash bench/faas/ab.sh /var/tmp/s60/i ideal:ideal /var/tmp/s60/lanes
