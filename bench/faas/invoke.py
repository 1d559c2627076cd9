"""The invoker's side of a bench/faas function: HTTP over its Unix socket,
one deadline per call."""
import collections
import http.client
import socket
import time


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        # A full backlog answers EAGAIN at once: the caller waits for room
        # within its deadline, as a blocking connect would.
        deadline = time.monotonic() + self.timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(self.path)
                self.sock = s
                return
            except BlockingIOError:
                s.close()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.path}: backlog full for {self.timeout} s") from None
                time.sleep(0.005)


def call(socket_path, what="/invoke", timeout=30.0):
    """GETs `what`; returns (status, body text, seconds from connect to the
    last byte). Raises OSError (incl. a timeout) when the function is not
    there or does not answer within `timeout`."""
    t0 = time.perf_counter()
    conn = UnixConnection(socket_path, timeout)
    try:
        conn.request("GET", what)
        r = conn.getresponse()
        body = r.read().decode()
        return r.status, body, time.perf_counter() - t0
    finally:
        conn.close()


# A function's answer to /invoke: the handler's ms, its major and minor
# faults, the wall-clock time (epoch s) it began, the major and minor
# faults the server took before it since its previous answer, and the
# handler's CPU ms, its ms waiting on a run queue, its preemptions, and
# the server's ms waiting on a run queue from accepting the call to the
# handler (the waits None where the kernel keeps no schedstat). A field a
# function does not report is None.
Answer = collections.namedtuple("Answer",
                                "ms majflt minflt began pre_majflt pre_minflt cpu_ms wait_ms preempted pre_wait_ms",
                                defaults=(None,) * 8)


def parse_answer(body):
    """Reads an answer to /invoke (2, 3, 6 or 10 fields); ValueError if it is not one."""
    f = body.split()
    if len(f) not in (2, 3, 6, 10):
        raise ValueError(f"not an answer to /invoke: {body!r}")
    rest = () if len(f) < 6 else (float(f[3]), int(f[4]), int(f[5]))
    if len(f) == 10:
        wait, pre_wait = float(f[7]), float(f[9])
        rest += (float(f[6]), None if wait < 0 else wait, int(f[8]), None if pre_wait < 0 else pre_wait)
    return Answer(float(f[0]), *map(int, f[1:3]), *rest)


def wait_ready(socket_path, within=30.0):
    """Waits until the function answers /health (its heap is allocated)."""
    deadline = time.monotonic() + within
    while True:
        try:
            if call(socket_path, "/health", timeout=1.0)[0] == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{socket_path}: no answer within {within} s")
        time.sleep(0.05)
