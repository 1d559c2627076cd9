#!/bin/bash
# K trials at once (ctrial.sh each) with CPU noise (2 busy loops), hold 6 s each.
# Usage: par.sh K FLOOR_SPEC HEAP
K=$1; shift
( timeout 40 sh -c 'while :; do :; done' & timeout 40 sh -c 'while :; do :; done' & wait ) &
N=$!
for i in $(seq $K); do ./ctrial.sh "$@" > out.$i 2>&1 & done; wait $(jobs -p | grep -v $N) 2>/dev/null
cat out.*; rm -f out.*
