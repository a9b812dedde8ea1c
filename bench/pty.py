#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The terminal's cost (docs/terminal.md): ringfence started on a pty of
# its own, as from a terminal emulator, `run --pty -- true` against
# `run --no-pty -- true` (rounds interleaved, medians), then the relay's
# throughput: 256 MiB of output through the sandbox's pty to the caller's
# terminal, and to a pipe (--pty with no terminal), and the same bytes
# through one bare pty for scale. Then the same start through a warm pool
# (`ringfence serve`, `run --via`): --pty there costs a pty made by the
# ready sandbox's init and its master passed on twice (init to server to
# client).
#
#   bench/pty.py [RINGFENCE] [RUNS]     (default: build/ringfence, 200)
#
# Timings are for notes and comparisons, never for pass/fail.
import os
import statistics
import subprocess
import sys
import tempfile
import time

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RF = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build", "ringfence")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SIZE = 256 << 20


def on_pty(argv):
    """Run argv on a fresh pty as its controlling terminal; drain it; return
    (seconds, bytes read, exit code)."""
    master, slave = os.openpty()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        import fcntl
        import termios
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for i in range(3):
            os.dup2(slave, i)
        os.closerange(3, 256)
        os.execv(argv[0], argv)
    os.close(slave)
    got = 0
    while True:
        try:
            d = os.read(master, 1 << 20)
        except OSError:  # EIO: every slave descriptor closed
            break
        if not d:
            break
        got += len(d)
    _, st = os.waitpid(pid, 0)
    dt = time.perf_counter() - t0
    os.close(master)
    return dt, got, os.waitstatus_to_exitcode(st)


def startup(prefix=(), label="run", pause=0.0):
    modes = {"--no-pty": [], "--pty": []}
    for _ in range(10):
        for m in modes:
            on_pty([RF, "run"] + list(prefix) + [m, "--", "/bin/true"])
    for _ in range(RUNS):
        for m, times in modes.items():
            time.sleep(pause)  # a pool: let its thread build the next sandbox meanwhile
            dt, _, code = on_pty([RF, "run"] + list(prefix) + [m, "--", "/bin/true"])
            if code != 0:
                sys.exit("ringfence run %s %s -- /bin/true exited %d" % (" ".join(prefix), m, code))
            times.append(dt * 1000)
    med = {m: statistics.median(t) for m, t in modes.items()}
    for m, v in med.items():
        print("start  %s %-8s -- true   median %.2f ms  (%d rounds)" % (label, m, v, RUNS))
    print("start  %s: --pty adds %.3f ms" % (label, med["--pty"] - med["--no-pty"]))


def pool_startup():
    """The same through `ringfence serve` (pool of 4) and `run --via`."""
    sock = os.path.join(tempfile.mkdtemp(prefix="rf-bench-"), "pool.sock")
    srv = subprocess.Popen([RF, "serve", "--socket", sock, "--pool-size", "4"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 10
        while not os.path.exists(sock) and time.time() < end:
            time.sleep(0.05)
        time.sleep(0.5)  # the pool filled
        startup(["--via", sock], "run --via", pause=0.03)
    finally:
        srv.terminate()
        srv.wait(10)
        os.rmdir(os.path.dirname(sock))


def throughput():
    cmd = "stty raw -echo; head -c %d /dev/zero" % SIZE
    dt, got, code = on_pty([RF, "run", "--pty", "--", "sh", "-c", cmd])
    print("relay  terminal: %d MiB in %.2f s = %.0f MiB/s (exit %d, %s)" %
          (got >> 20, dt, got / dt / (1 << 20), code, "intact size" if got == SIZE else "SIZE WRONG"))
    t0 = time.perf_counter()
    p = subprocess.run([RF, "run", "--pty", "--", "sh", "-c", cmd], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, check=False)
    dt = time.perf_counter() - t0
    got = len(p.stdout)
    print("relay  pipe:     %d MiB in %.2f s = %.0f MiB/s (exit %d, %s)" %
          (got >> 20, dt, got / dt / (1 << 20), p.returncode, "intact size" if got == SIZE else "SIZE WRONG"))
    dt, got, code = on_pty(["/bin/sh", "-c", cmd])
    print("scale  one bare pty, no ringfence: %.0f MiB/s" % (got / dt / (1 << 20)))


print("bench: pty, as uid %d, kernel %s, %d CPUs" % (os.getuid(), os.uname().release, os.cpu_count()))
startup()
throughput()
pool_startup()
