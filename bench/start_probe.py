#!/usr/bin/env python3
"""One timed start of a Leasehold server, for bench/start.sh (not meant to be run alone).

    start_probe.py LOG COMMAND...

Runs COMMAND (a server start; the caller adds --leasehold.port=0 --server.port=0 and a fresh
--leasehold.data-dir) with its output in LOG, and measures from just before the process is
created to the first granted Acquire over the protocol: it reads the protocol port from the log
line "Leasehold protocol listening on HOST:PORT (", connects, and sends `A` wait=0 lease=5 until
an `A` (Acquired) comes back. Then it waits (bounded) for Spring's "Started ... in X seconds
(process running for Y)" line, stops the server (SIGTERM, SIGKILL after 20 s) and prints one line:

    grant_s=8.312 started_s=6.4 running_s=7.9

A raw socket rather than bin/leasehold: a second JVM starting beside the server on a 2-core
machine would slow the start it measures, and the CLI's own start would be counted.
"""
import re
import signal
import socket
import struct
import subprocess
import sys
import time

PORT_LINE = re.compile(rb"Leasehold protocol listening on .*:(\d+) \(")
STARTED_LINE = re.compile(rb"Started \S+ in ([0-9.]+) seconds \(process running for ([0-9.]+)\)")
LIMIT_S = 120.0


def acquire_once(port, owner):
    """One `A` wait=0 lease=5 on key bench-start; True when it was granted."""
    frame = b"A" + bytes([0, 5]) + struct.pack(">Q", owner) + b"bench-start\n"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(frame)
        answer = b""
        while len(answer) < 1:
            chunk = s.recv(64)
            if not chunk:
                return False
            answer += chunk
        return answer[:1] == b"A"


def main():
    log_path, command = sys.argv[1], sys.argv[2:]
    with open(log_path, "wb") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        port, grant_s, started = None, None, None
        owner = 0
        while time.monotonic() - t0 < LIMIT_S:
            if proc.poll() is not None:
                sys.exit("server exited with %d; log: %s" % (proc.returncode, log_path))
            with open(log_path, "rb") as f:
                text = f.read()
            if port is None:
                m = PORT_LINE.search(text)
                port = int(m.group(1)) if m else None
            if started is None:
                started = STARTED_LINE.search(text)
            if port is not None and grant_s is None:
                owner += 1
                try:
                    if acquire_once(port, owner):
                        grant_s = time.monotonic() - t0
                except OSError:
                    pass
            if grant_s is not None and started is not None:
                break
            time.sleep(0.005)
        if grant_s is None or started is None:
            sys.exit("no grant or no Started line within %d s; log: %s" % (LIMIT_S, log_path))
        print("grant_s=%.3f started_s=%s running_s=%s" % (grant_s, started.group(1).decode(),
                                                          started.group(2).decode()))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
