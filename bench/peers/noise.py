#!/usr/bin/env python3
"""The noise of bench/peers that really wakes: one process per container, run
inside it (mounted read-only), logging each operation as a JSON line to OUT.

  noise.py burst OUT HEAP_MIB SCHEDULE PERIOD_S START_EPOCH SEED [HEAP [AFTER [LOCK]]]
      holds a heap and sleeps; at each wake re-touches all of it (one write per
      page) and logs the touch's time as a `wake`. AFTER: `keep` (the default)
      leaves the heap as it is between wakes; `pageout` pages it out itself
      (madvise MADV_PAGEOUT) once filled and at the end of every touch, the
      bench's `oracle` mode: a controller that knows the instant each sleep
      starts and uses the kernel's cheapest page-out; `pageout-willneed` also
      reads the heap back in bulk (madvise MADV_WILLNEED, counted in the
      wake's time) before each touch: the cheapest swap-in too. LOCK: a
      file every container of the cell shares: each wake holds an exclusive
      lock on it (flock) while it reads back, touches and pages out, so wakes
      are served one at a time (flock's order); the wake's time counts from
      when it was due, the wait for the lock included. SCHEDULE:
        cron     wakes at START + k*PERIOD, whatever the last wake took (a slot
                 missed while a wake ran is skipped, as cron does);
        jitter   the next wake PERIOD after the last scheduled one, +-25% uniform;
        poisson  exponential gaps of mean PERIOD.
  noise.py grow OUT PEAK_MIB RAMP_S WORK_S PAUSE_S SEED [HEAP]
      a batch job, again and again: allocate up to PEAK over RAMP seconds (16 MiB
      steps), work on it for WORK seconds (re-touching all of it once a second),
      free it, pause. Logs each job's duration as a `job` (nominal RAMP + WORK).

HEAP: `private` (the default), private anonymous memory as a program's heap
is (malloc, a runtime's heap); `shared`, a shared anonymous mapping (shmem:
swapped and faulted back through the page cache, as a database's shared
buffers are). Python's own mmap(-1, n) default is shared.

The heap's pages are half random bytes, half zeros (compressible about 2x, like
real heaps; all-zero pages would flatter the compressed tiers)."""
import contextlib
import fcntl
import json
import mmap
import os
import random
import sys
import time

PAGE = 4096
MIB = 1 << 20


def pattern():
    """1 MiB of pages, each 2 KiB of random bytes then 2 KiB of zeros."""
    half = PAGE // 2
    return b"".join(os.urandom(half) + bytes(half) for _ in range(MIB // PAGE))


def fill(m, start, end, pat):
    for off in range(start, end, MIB):
        n = min(MIB, end - off)
        m[off:off + n] = pat[:n]


def touch(m, end):
    """One write per page of m[:end]; seconds taken."""
    t = time.monotonic()
    for off in range(0, end, PAGE):
        m[off] = (m[off] + 1) & 0xFF
    return time.monotonic() - t


def log(out, **rec):
    out.write(json.dumps({"t": round(time.time(), 3), **rec}) + "\n")
    out.flush()


HEAPS = {"private": mmap.MAP_PRIVATE, "shared": mmap.MAP_SHARED}
AFTERS = ("keep", "pageout", "pageout-willneed")
# Linux's MADV_PAGEOUT (5.4); Python 3.11's mmap module does not name it.
MADV_PAGEOUT = getattr(mmap, "MADV_PAGEOUT", 21)


def heap(size, kind="private"):
    """An anonymous mapping of `size` bytes, private or shared (HEAPS)."""
    if kind not in HEAPS:
        raise ValueError(f"heap {kind!r} is not private or shared")
    return mmap.mmap(-1, size, flags=HEAPS[kind])


def settle(m, after):
    """Between wakes: leave the heap (`keep`) or page it out now (`pageout`,
    `pageout-willneed`)."""
    if after in ("pageout", "pageout-willneed"):
        m.madvise(MADV_PAGEOUT)


def wake(m, size, after):
    """A wake: the heap read back in bulk first (`pageout-willneed`), then
    touched; seconds taken, the read-back included."""
    t = time.monotonic()
    if after == "pageout-willneed":
        m.madvise(mmap.MADV_WILLNEED)
    touch(m, size)
    return time.monotonic() - t


@contextlib.contextmanager
def one_at_a_time(lock):
    """Holds an exclusive flock on file `lock` (None: no lock) meanwhile."""
    if lock is None:
        yield
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # the lock goes with its last descriptor


def burst(out, heap_mib, schedule, period, start, seed, kind="private", after="keep", lock=None):
    if schedule not in ("cron", "jitter", "poisson"):
        raise ValueError(f"schedule {schedule!r} is not cron, jitter or poisson")
    if after not in AFTERS:
        raise ValueError(f"after {after!r} is not keep, pageout or pageout-willneed")
    rng = random.Random(seed)
    size = heap_mib * MIB
    m = heap(size, kind)
    fill(m, 0, size, pattern())
    settle(m, after)
    log(out, op="ready", heap=size)
    k, due = 0, start
    while True:
        if schedule == "cron":
            k = max(k + 1, int((time.time() - start) // period) + 1)
            due = start + k * period
        elif schedule == "jitter":
            due = max(due + period * rng.uniform(0.75, 1.25), time.time())
        else:
            due = time.time() + rng.expovariate(1.0 / period)
        time.sleep(max(0.0, due - time.time()))
        t = time.monotonic()  # the wake is due now
        with one_at_a_time(lock):  # its page-out too: the next wake's read-back does not race it
            wake(m, size, after)
            lat = time.monotonic() - t
            settle(m, after)
        log(out, op="wake", lat=round(lat, 6), schedule=schedule)


def grow(out, peak_mib, ramp, work, pause, seed, kind="private"):
    rng = random.Random(seed)
    pat = pattern()
    time.sleep(rng.uniform(0, ramp + work))  # the jobs of a cell do not start in step
    step = 16 * MIB
    while True:
        t0 = time.monotonic()
        size = peak_mib * MIB
        m = heap(size, kind)
        steps = max(1, size // step)
        for i in range(steps):
            fill(m, i * step, min(size, (i + 1) * step), pat)
            time.sleep(max(0.0, t0 + ramp * (i + 1) / steps - time.monotonic()))
        end = time.monotonic() + work
        while time.monotonic() < end:
            touch(m, size)
            time.sleep(max(0.0, min(1.0, end - time.monotonic())))
        m.close()
        log(out, op="job", lat=round(time.monotonic() - t0, 3), nominal=ramp + work)
        time.sleep(pause)


def main(argv):
    if len(argv) < 2 or argv[1] not in ("burst", "grow"):
        sys.exit(__doc__)
    with open(argv[2], "a") as out:
        try:
            kind = argv[8] if len(argv) > 8 else "private"
            if argv[1] == "burst":
                after = argv[9] if len(argv) > 9 else "keep"
                lock = argv[10] if len(argv) > 10 else None
                burst(out, int(argv[3]), argv[4], float(argv[5]), float(argv[6]), int(argv[7]), kind, after, lock)
            else:
                grow(out, int(argv[3]), float(argv[4]), float(argv[5]), float(argv[6]), int(argv[7]), kind)
        except ValueError as e:
            sys.exit(f"noise.py: {e}\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv)
