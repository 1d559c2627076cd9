#!/bin/sh
# One bench/imdt job, run inside its container (image memext-openfoam, Debian's
# OpenFOAM 1912 and its examples): the windAroundBuildings case with its
# background mesh scaled by $1 in each direction, refined by snappyHexMesh,
# decomposed by decomposePar, then checked by checkMesh. The case is copied into
# the container's own storage, so every job works on its own files.
#
# Prints "phase NAME SECONDS" per step, "peak_kib NAME KIB" (each step's peak
# resident set) and, last, "mesh ok CELLS" when checkMesh passes; exits non-zero
# as soon as a step fails.
set -eu
scale=${1:?usage: job.sh SCALE}
src=${CASE:-/usr/share/doc/openfoam-examples/examples/incompressible/simpleFoam/windAroundBuildings}
case_dir=/tmp/case
rm -rf "$case_dir"; cp -r "$src" "$case_dir"; cd "$case_dir"
gunzip -f constant/triSurface/*.gz
awk -v s="$scale" '/^ *[xyz]Cells / { n = $2; sub(";", "", n); c = int(n * s + 0.5); if (c < 1) c = 1;
                                      printf "    %s %d;\n", $1, c; next } { print }' \
    system/blockMeshDict > system/blockMeshDict.scaled
mv system/blockMeshDict.scaled system/blockMeshDict
# Debian's OpenFOAM is built without scotch: decompose geometrically.
sed -i -e 's/^method .*/method simple;/' system/decomposeParDict
cat >> system/decomposeParDict <<'DICT'
coeffs
{
    n (3 2 1);
}
DICT
of=/usr/share/openfoam/etc/openfoam
for step in surfaceFeatureExtract blockMesh "snappyHexMesh -overwrite" decomposePar checkMesh; do
    name=${step%% *}
    t0=$(date +%s.%N)
    if ! /usr/bin/time -f "$name %M" -a -o peaks $of $step > "log.$name" 2>&1; then
        echo "phase $name failed"; tail -5 "log.$name"; exit 1
    fi
    t1=$(date +%s.%N)
    echo "phase $name $(echo "$t1 $t0" | awk '{ printf "%.3f", $1 - $2 }')"
done
awk '{ print "peak_kib", $1, $2 }' peaks
grep -q "^Mesh OK" log.checkMesh || { echo "checkMesh: mesh not OK"; grep -i fail log.checkMesh | head -5; exit 1; }
echo "mesh ok $(awk '/^ *cells:/ { print $2; exit }' log.checkMesh)"
