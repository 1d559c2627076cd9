#!/bin/bash
# redis x grow (quick), memext only, with `memext status --json` every 2 s.
cd /work/main
bash bench/faas/statsampler.sh /var/tmp/s25/g3.status & sp=$!
python3 bench/peers/run.py --quick --critical redis,postgres --noise grow --modes memext --rounds 1 --out /var/tmp/s25/g3 > /var/tmp/s25/g3.log 2>&1
kill $sp
