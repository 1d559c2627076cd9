"""Every Nth `memext status --json` sample of a bench/peers run (statsampler
output, gzipped): per context its class and state, and usage, working set,
target and limit in MiB. Usage: python3 statusgrow.py SAMPLES.gz [N]"""
import gzip, json, sys

text = gzip.open(sys.argv[1], "rt").read()
every = int(sys.argv[2]) if len(sys.argv) > 2 else 3
for block in text.split("# ")[1:][::every]:
    at, _, body = block.partition("\n")
    try:
        rows = json.loads(body)
    except ValueError:
        continue
    cells = [f"{r['class'][0]}:{r['state'][:4]} u{(r['usage_bytes'] or 0) >> 20} ws{(r['working_set_bytes'] or 0) >> 20}"
             f" t{(r['target_bytes'] or 0) >> 20} l{(r['limit_bytes'] or 0) >> 20}"
             for r in sorted(rows, key=lambda r: r["class"])]
    print(at.strip(), " | ".join(cells))
