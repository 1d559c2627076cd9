#!/usr/bin/env python3
"""Does this VM's disk I/O alone cost Redis work per CPU-second?  Redis
(loopback, 8 redis-benchmark clients GETting) alone, and beside a reader of a
file on the same virtual disk (O_DIRECT, 32 KiB random reads, no memory
pressure, the reader at nice 19) paced at R MB/s.  Rotated rounds; per run:
requests/s, Redis's CPU-seconds, requests per Redis CPU-second, the reader's
CPU.  redis_io.py FILE ROUNDS SECONDS RATE..."""
import mmap, os, random, re, subprocess, sys, time, statistics as st
path, rounds, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rates = [0] + [int(x) for x in sys.argv[4:]]
TCK = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK

def reader(rate):
    os.nice(19)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    size = os.fstat(fd).st_size
    buf = mmap.mmap(-1, 32768)
    rnd, t0, n = random.Random(7), time.time(), 0
    while True:
        os.preadv(fd, [buf], rnd.randrange(size // 32768) * 32768)
        n += 32768
        due = n / (rate * 1e6) - (time.time() - t0)
        if due > 0:
            time.sleep(due)

srv = subprocess.Popen(["redis-server", "--port", "6399", "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"],
                       stdout=subprocess.DEVNULL)
time.sleep(1)
subprocess.run(["redis-benchmark", "-p", "6399", "-t", "set", "-n", "200000", "-r", "200000", "-d", "512", "-q"],
               stdout=subprocess.DEVNULL)
res = {r: [] for r in rates}
try:
    for k in range(rounds):
        for rate in rates[k % len(rates):] + rates[:k % len(rates)]:
            rd = None
            if rate:
                rd = os.fork()
                if rd == 0:
                    reader(rate)
                    os._exit(0)
                time.sleep(1)
            c0, rc0, t0 = cpu(srv.pid), cpu(rd) if rd else 0, time.time()
            out = subprocess.run(["redis-benchmark", "-p", "6399", "-t", "get", "-c", "8", "-r", "200000",
                                  "-n", str(60000 * secs), "-q"], capture_output=True, text=True, timeout=secs * 10).stdout
            el, c1, rc1 = time.time() - t0, cpu(srv.pid), cpu(rd) if rd else 0
            if rd:
                os.kill(rd, 9); os.waitpid(rd, 0)
            reqs = 60000 * secs
            res[rate].append((reqs / el, (c1 - c0), reqs / (c1 - c0), rc1 - rc0))
finally:
    srv.terminate(); srv.wait()
base = st.median(x[0] for x in res[0]); wb = st.median(x[2] for x in res[0])
for rate in rates:
    v = res[rate]
    m = lambda i: st.median(x[i] for x in v)
    print(f"reader {rate:4d} MB/s: {m(0):9,.0f} req/s ({m(0)/base:.2f}x) | Redis CPU {m(1):.1f} s | "
          f"{m(2):9,.0f} req per CPU-s ({m(2)/wb:.2f}x) | reader CPU {m(3):.2f} s | runs {len(v)}: "
          + ", ".join(f"{x[0]:,.0f}" for x in v))
