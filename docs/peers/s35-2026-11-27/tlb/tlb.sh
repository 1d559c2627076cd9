#!/bin/bash
# Who sends the TLB shootdown IPIs in a redis x burst cell under memext's default:
# perf samples 1 in 10 "remote IPI send" flushes with call chains, for the whole run.
cd /work/main
P=/var/tmp/s35/progress
[ -e /var/tmp/s35/stop ] && exit 0
echo "$(date +%T) start tlb" >> $P
perf record -e tlb:tlb_flush --filter 'reason == 4' -c 10 -a -g -o /var/tmp/s35/tlb.data > /var/tmp/s35/tlb-perf.out 2>&1 &
PERF=$!
sleep 2
python3 bench/peers/run.py --critical redis --noise burst --modes memext --rounds 1 --out /var/tmp/s35/tlb-run > /var/tmp/s35/tlb-run.out 2>&1
kill -INT $PERF; wait $PERF
echo "$(date +%T) end tlb" >> $P
