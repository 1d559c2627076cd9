"""The app tier of the web workload (a stand-in for AcmeAir's): HTTP/1.1 on a
Unix socket; GET /item/<k> reads key:<k> from the data store (Redis, over its
Unix socket, one connection per thread) and returns it. Runs inside the
cs-web-app container: python3 app.py APP_SOCKET REDIS_SOCKET."""
import os
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler

LOCAL = threading.local()


def redis_get(key):
    conn = getattr(LOCAL, "conn", None)
    if conn is None:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(sys.argv[2])
        LOCAL.conn, LOCAL.reader = conn, conn.makefile("rb")
    k = key.encode()
    conn.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k))
    head = LOCAL.reader.readline()
    if not head.startswith(b"$"):
        raise RuntimeError(f"redis said {head!r}")
    n = int(head[1:])
    if n < 0:
        return None
    body = LOCAL.reader.read(n + 2)
    return body[:-2]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        parts = self.path.split("/")
        value = redis_get(f"key:{parts[2]}") if len(parts) == 3 and parts[1] == "item" and parts[2].isdigit() else None
        body = value if value is not None else b"not found"
        self.send_response(200 if value is not None else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

    def address_string(self):
        return "unix"


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 256  # the front opens many connections at once


if __name__ == "__main__":
    if os.path.exists(sys.argv[1]):
        os.unlink(sys.argv[1])
    server = Server(sys.argv[1], Handler)
    os.chmod(sys.argv[1], 0o777)
    server.serve_forever()
