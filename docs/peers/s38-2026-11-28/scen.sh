#!/bin/bash
cd /work/main
echo "$(date +%T) start scen" >> /var/tmp/s38/progress
python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext --rounds 2 --out /var/tmp/s38/scen > /var/tmp/s38/scen.log 2>&1
echo "$(date +%T) end scen rc=$?" >> /var/tmp/s38/progress
