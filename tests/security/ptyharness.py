# SPDX-License-Identifier: LGPL-2.1-or-later
# A person at a terminal, for the tests: a program runs on the slave of a
# fresh pty (its controlling terminal, as in a terminal emulator); keys are
# written to the master and the screen is read from it. TAP output too.
# Shared by terminal.py and ask-tty.py.
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time


class Tap:
    def __init__(self, diag_chars=1500):
        self.n = self.failed = 0
        self.diag_chars = diag_chars

    def ok(self, cond, desc, diag=""):
        self.n += 1
        print(("ok" if cond else "not ok") + " %d - %s" % (self.n, desc))
        if not cond:
            self.failed += 1
            for line in str(diag)[-self.diag_chars:].splitlines():
                print("#   " + line)
        sys.stdout.flush()
        return cond

    def done(self):
        print("1..%d" % self.n)
        sys.exit(1 if self.failed else 0)


def until(pred, seconds):
    """pred() once it is true, polled for up to `seconds`; else its last value."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    return pred()


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Term:
    """`program ARGS` on a terminal of its own; stdout may go elsewhere.
    A subclass names the program, and may set the directory, the
    environment and how long wait() waits by default."""

    program = None
    cwd = None
    env = {"TERM": "xterm-256color"}
    wait_timeout = 10

    def __init__(self, args, rows=30, cols=100, stdout=None, env=None, background=False):
        self.master, self.slave = os.openpty()
        set_size(self.master, rows, cols)
        self.before = termios.tcgetattr(self.slave)
        self.buf = b""
        e = dict(os.environ, **self.env)
        e.update(env or {})
        self.pid = os.fork()
        if self.pid == 0:
            os.setsid()
            fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
            for i in range(3):
                os.dup2(self.slave, i)
            if stdout is not None:
                os.dup2(stdout, 1)
            os.closerange(3, 256)
            if self.cwd:
                os.chdir(self.cwd)
            if background:  # a job of this terminal, not its foreground one (run -- cmd &)
                job = os.fork()
                if job:
                    os._exit(os.waitstatus_to_exitcode(os.waitpid(job, 0)[1]) & 0xff)
                os.setpgid(0, 0)
            os.execve(self.program, [self.program] + args, e)
        self.status = None

    def send(self, data):
        os.write(self.master, data if isinstance(data, bytes) else data.encode())

    def pump(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if r:
            try:
                self.buf += os.read(self.master, 65536)
            except OSError:
                return False
        return bool(r)

    def text(self):
        return self.buf.decode(errors="replace")

    def expect(self, pattern, timeout=10):
        end = time.time() + timeout
        rx = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        while time.time() < end:
            m = rx.search(self.buf)
            if m:
                return m
            self.pump(min(0.2, max(0.0, end - time.time())))
        return rx.search(self.buf)

    def wait(self, timeout=None):
        end = time.time() + (self.wait_timeout if timeout is None else timeout)
        while self.status is None and time.time() < end:
            p, st = os.waitpid(self.pid, os.WNOHANG)
            if p:
                self.status = os.waitstatus_to_exitcode(st)
                break
            self.pump(0.05)
        while self.pump(0.05):
            pass
        return self.status

    def kill(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.wait(5)

    def settings_kept(self):
        return termios.tcgetattr(self.slave) == self.before

    def injected(self):
        """What waits in the harness terminal's input queue (TIOCSTI's target)."""
        saved = termios.tcgetattr(self.slave)
        raw = termios.tcgetattr(self.slave)
        raw[3] &= ~(termios.ICANON | termios.ECHO)
        raw[6][termios.VMIN] = 0
        raw[6][termios.VTIME] = 0
        termios.tcsetattr(self.slave, termios.TCSANOW, raw)
        got = b""
        r, _, _ = select.select([self.slave], [], [], 0.3)
        if r:
            got = os.read(self.slave, 4096)
        termios.tcsetattr(self.slave, termios.TCSANOW, saved)
        return got

    def close(self):
        self.kill()
        os.close(self.master)
        os.close(self.slave)
