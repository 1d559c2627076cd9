#!/usr/bin/env python3
"""One bench/faas function: an HTTP handler on a Unix socket holding a heap.

At start it allocates --heap-mib MiB (half random bytes, half zeros, as
bench/peers' noise does: compressible like real heaps, not entirely) and
writes one byte per page so that every page is resident. Each request to
`/invoke` reads one byte of every page of the heap (a function's state
touched on each call: its working set is its heap) and answers with the
handler's own time in ms, the major faults it took (pages that were
not in DRAM, read from the tier), its minor faults (pages mapped on
touch: in DRAM, in the swap cache, but not mapped), the wall-clock time
the handler began, and the major and minor faults the server took since
its previous answer, before the handler (accepting and parsing the
request: the interpreter's own pages), then the handler's CPU time in ms,
the ms it waited on a run queue, ready but not running (the kernel's
schedstat; -1 where it keeps none), the times it was preempted, and the
ms the server waited on a run queue from accepting the call to the handler
(reading and parsing the request): with no fault, a handler
slower than its CPU time waited for a CPU, and one whose CPU time grew did
more work for the same pages (the kernel's, or the TLB's); `/health`
answers at once. One request at a time,
as a function instance serves one invocation at a time.

  python3 bench/faas/function.py --socket /run/fn0001.sock --heap-mib 48

Runs in a container of the private engine with the socket in a bind-mounted
directory; the invoker connects from the host. Stops on SIGTERM and
removes its socket.
"""
import argparse
import http.server
import os
import resource
import socketserver
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20


def make_heap(mib):
    """`mib` MiB, the first half random, the rest zeros, every page written."""
    heap = bytearray(mib * MIB)
    half = len(heap) // 2
    chunk = 4 * MIB
    for off in range(0, half, chunk):
        n = min(chunk, half - off)
        heap[off:off + n] = os.urandom(n)
    for off in range(half, len(heap), PAGE):
        heap[off] = 1
    return heap


def run_queue_wait_ns():
    """This thread's time so far ready to run but not running, ns (the
    second field of its schedstat); None where the kernel keeps none."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def touch(heap):
    """Reads one byte of every page; returns their sum (so it is not skipped)."""
    return sum(memoryview(heap)[::PAGE])


class Handler(http.server.BaseHTTPRequestHandler):
    heap = bytearray()
    answered = None  # the server's usage when it last answered /invoke

    def setup(self):
        # The server's run-queue wait as it takes the call (its idle poll,
        # every 0.5 s, waits too: counted from here, that is left out).
        self.accepted_wait = run_queue_wait_ns()
        super().setup()

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path == "/health":
            self.answer(200, b"ok\n")
        elif self.path == "/invoke":
            began = time.time()
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            w0 = run_queue_wait_ns()
            c0 = time.thread_time()
            t0 = time.perf_counter()
            touch(self.heap)
            ms = (time.perf_counter() - t0) * 1e3
            cpu_ms = (time.thread_time() - c0) * 1e3
            w1 = run_queue_wait_ns()
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            wait_ms = -1.0 if w0 is None or w1 is None else (w1 - w0) / 1e6
            last = Handler.answered or r0
            pre_wait_ms = -1.0 if w0 is None or self.accepted_wait is None else (w0 - self.accepted_wait) / 1e6
            self.answer(200, f"{ms:.3f} {r1.ru_majflt - r0.ru_majflt} {r1.ru_minflt - r0.ru_minflt} {began:.6f} "
                        f"{r0.ru_majflt - last.ru_majflt} {r0.ru_minflt - last.ru_minflt} "
                        f"{cpu_ms:.3f} {wait_ms:.3f} {r1.ru_nivcsw - r0.ru_nivcsw} {pre_wait_ms:.3f}\n".encode())
            Handler.answered = resource.getrusage(resource.RUSAGE_SELF)
        else:
            self.answer(404, b"unknown path\n")

    def answer(self, code, body):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass  # one line per call would be the noisiest thing in the bench

    def address_string(self):
        return "unix"  # a Unix socket's peer has no host/port


class UnixHTTPServer(socketserver.UnixStreamServer):
    allow_reuse_address = False
    # Calls that come while one is served wait in the socket's backlog, as
    # in a platform's queue for a busy instance (socketserver's default of 5
    # refused the sixth call of a burst at once with EAGAIN).
    request_queue_size = 256


def serve(socket_path, heap_mib):
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    Handler.heap = make_heap(heap_mib)
    try:
        with UnixHTTPServer(socket_path, Handler) as srv:
            os.chmod(socket_path, 0o666)
            srv.serve_forever()
    finally:
        if os.path.exists(socket_path):
            os.unlink(socket_path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", required=True, help="Unix socket to serve on")
    ap.add_argument("--heap-mib", type=int, required=True, help="heap size, MiB (1-4096)")
    a = ap.parse_args(argv)
    if not 1 <= a.heap_mib <= 4096:
        ap.error("--heap-mib: 1 to 4096")
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(a.socket, a.heap_mib)


if __name__ == "__main__":
    main()
