# SPDX-License-Identifier: LGPL-2.1-or-later
# The terminal, driven as a person would: ringfence runs on the slave of a
# pty of this harness (its controlling terminal, as in a terminal
# emulator); keys are written to the master, the screen is read from it.
# Prints TAP. Usage: terminal.py RINGFENCE WORKSPACE
import fcntl
import hashlib
import os
import re
import select
import signal
import subprocess
import sys
import termios
import time

sys.dont_write_bytecode = True  # nothing written beside the tests (a staged copy is read-only to rftest)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptyharness  # noqa: E402

RF, WS = sys.argv[1], sys.argv[2]
TAP = ptyharness.Tap()
ok = TAP.ok
set_size = ptyharness.set_size
until = ptyharness.until


class Term(ptyharness.Term):
    program = RF


def run(args, **kw):
    return Term(["run", "--"] + args, **kw)


def pids_of(token):
    out = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def bash_job_control():
    t = run(["bash", "--norc", "--noprofile", "-i"])
    ok(t.expect(r"bash-[\d.]+[#$] "), "an interactive bash inside shows its prompt", t.buf)
    ok(b"no job control" not in t.buf and b"cannot set terminal process group" not in t.buf,
       "bash has job control (no 'no job control in this shell')", t.buf)
    t.send("sleep 20\r")
    time.sleep(0.5)
    t0 = time.time()
    t.send("\x03")
    t.send("echo after-$((40+2))\r")
    # The next prompt's output within 10 s: long before the 20 s sleep.
    ok(t.expect(r"after-42", 10), "Ctrl-C ends the foreground sleep, the shell survives (%.2f s)" % (time.time() - t0),
       t.buf)
    t.send("sleep 3; echo slept\r")
    time.sleep(0.5)
    t.send("\x1a")
    ok(t.expect(r"Stopped", 5), "Ctrl-Z stops the foreground job", t.buf)
    t.send("jobs; fg\r")
    ok(t.expect(r"slept", 8), "fg brings it back and it finishes", t.buf)
    t.send("tty; [ -t 0 ] && echo is-a-tty; echo TERM=$TERM\r")
    ok(t.expect(r"/dev/pts/\d+"), "tty names /dev/pts/N", t.buf)
    ok(t.expect(r"TERM=xterm-256color"), "TERM is kept", t.buf)
    t.send("stty size; tput cols\r")
    ok(t.expect(r"30 100\s+100"), "stty size and tput see the caller's window (30x100)", t.buf)
    ok(not t.settings_kept(), "control: the caller's terminal is in raw mode while the command runs")
    t.send("exit 3\r")
    ok(t.wait() == 3, "exit status as today (exit 3)", "status %r" % t.status)
    ok(t.settings_kept(), "the caller's terminal settings are as before after the command exits")
    t.close()


def ctrl_c_kills_tree():
    token = "sleep 20.%d" % os.getpid()
    t = run(["sh", "-c", "echo started; %s; echo ran-on" % token])
    ok(t.expect("started"), "control: sh -c 'sleep 20; echo x' runs", t.buf)
    time.sleep(0.3)
    t0 = time.time()
    t.send("\x03")
    st = t.wait(10)  # long before the 20 s sleep would have ended; how long it took is a note, not a check
    took = time.time() - t0
    ok(st is not None, "Ctrl-C ends sh -c 'sleep 20; echo' at once (%.2f s, exit %r)" % (took, st))
    ok(b"ran-on" not in t.buf, "the shell did not run on", t.buf)
    time.sleep(0.2)
    ok(not pids_of("^" + token), "no process of the sandbox is left")
    ok(t.settings_kept(), "terminal settings restored after Ctrl-C")
    t.close()
    # Sent once the command runs on its pty (the harness terminal raw):
    # before that the key would be the harness terminal's own SIGQUIT.
    quit_token = "sleep 20.%d1" % os.getpid()
    t = run(["sh", "-c", "echo started; exec %s" % quit_token])
    ok(t.expect("started") and until(lambda: pids_of("^" + quit_token) and not t.settings_kept(), 10),
       "control: the command runs, the terminal is raw", t.buf)
    t.send("\x1c")
    ok(t.wait(10) == 131, "Ctrl-\\ quits (exit 131)", "status %r" % t.status)
    t.close()


def window_size():
    script = ("import os, signal, time\n"
              "def winch(sig, frame):\n"
              "    os.write(1, b'size %d %d\\n' % os.get_terminal_size()[::-1])\n"
              "signal.signal(signal.SIGWINCH, winch)\n"
              "os.write(1, b'ready\\n')\n"
              "time.sleep(10)\n")
    t = run(["python3", "-c", script], rows=24, cols=80)
    ok(t.expect("ready"), "control: the resize watcher runs", t.buf)
    # As a terminal emulator does: the new size on its master; the kernel
    # sends SIGWINCH to ringfence, the terminal's foreground job.
    set_size(t.master, 50, 132)
    ok(t.expect(r"size 50 132", 5), "a resize reaches the command: SIGWINCH and the new size (50 132)", t.buf)
    set_size(t.master, 65535, 65535)
    ok(t.expect(r"size 65535 65535", 5), "a huge window size is passed as is", t.buf)
    t.kill()
    t.close()


def dev_tty():
    t = run(["bash", "-c", "echo ready; read -r line </dev/tty; echo \"got:$line\""])
    ok(t.expect("ready"), "control: the reader of /dev/tty started", t.buf)
    t.send("typed-in\r")
    ok(t.expect(r"got:typed-in"), "/dev/tty opens and a read from it gets typed input", t.buf)
    ok(t.wait() == 0, "and the command ends with 0", "status %r" % t.status)
    t.close()


def restored_after_kills():
    token = "sleep 30.%d" % os.getpid()
    t = run(["sh", "-c", "echo up; exec %s" % token])
    ok(t.expect("up") and not t.settings_kept(), "control: raw mode while the command runs", t.buf)
    time.sleep(0.2)
    for p in pids_of("^" + token):
        os.kill(p, signal.SIGKILL)
    st = t.wait(5)
    ok(st == 137, "kill -9 of the command: ringfence exits 137 (%r)" % st)
    ok(t.settings_kept(), "terminal settings restored after kill -9 of the command")
    t.close()
    t = run(["/nonexistent-command"])
    st = t.wait()
    ok(st == 127 and b"not found" in t.buf, "a command not found: 127 as today (%r)" % st, t.buf)
    ok(t.settings_kept(), "terminal settings restored after the exec failed inside")
    t.close()
    t = run(["sh", "-c", "echo up; exec %s" % token])
    ok(t.expect("up"), "control: started again", t.buf)
    os.kill(t.pid, signal.SIGTERM)
    st = t.wait(5)
    ok(st == 143, "SIGTERM to ringfence ends the command (%r)" % st)
    ok(t.settings_kept(), "terminal settings restored after SIGTERM to ringfence")
    t.close()


def hang_up():
    token = "sleep 30.7%d" % os.getpid()
    t = run(["bash", "--norc", "--noprofile", "-i"])
    ok(t.expect(r"bash-[\d.]+[#$] "), "control: an interactive bash runs (hang-up)", t.buf)
    t.send("%s\r" % token)
    time.sleep(0.5)
    ok(bool(pids_of("^" + token)), "control: its foreground job runs")
    os.close(t.master)  # the terminal emulator's window closes
    end = time.time() + 5
    while t.status is None and time.time() < end:
        p, st = os.waitpid(t.pid, os.WNOHANG)
        if p:
            t.status = os.waitstatus_to_exitcode(st)
        time.sleep(0.05)
    ok(t.status is not None, "the caller's terminal hung up: ringfence ends (%r)" % t.status)
    time.sleep(0.2)
    ok(not pids_of("^" + token), "and the hang-up reached the job inside: nothing left")
    t.master = os.open("/dev/null", os.O_RDONLY)  # for close()
    t.close()


PROBE_STI = r"""
import fcntl, os, termios
fds = [0, 1, 2]
try:
    fds.append(os.open("/dev/tty", os.O_RDWR))
except OSError as e:
    print("no /dev/tty", e)
for fd in fds:
    for name, req, arg in (("TIOCSTI", termios.TIOCSTI, b"x"), ("TIOCLINUX", 0x541C, bytes([6, 0]))):
        try:
            fcntl.ioctl(fd, req, arg)
            print(name, fd, "done")
        except OSError as e:
            print(name, fd, "refused", e.errno)
print("probe-end")
"""


def injection(extra, label=None):
    label = " ".join(extra) if label is None else label
    t = Term(["run"] + extra + ["--", "python3", "-c", PROBE_STI])
    ok(t.expect("probe-end"), "the TIOCSTI/TIOCLINUX probe ran inside %s" % label, t.buf)
    t.wait()
    got = t.injected()
    ok(b"x" not in got, "no 'x' reached the caller's terminal input %s" % label, got)
    t.close()
    return t.buf


def injection_tests():
    injection([])
    out = injection(["--seccomp", "off"])
    print("#   with seccomp off, TIOCSTI into the command's own pty: " +
          ("done" if b"TIOCSTI 0 done" in out else "refused"))
    # Control: the check sees what TIOCSTI into the harness terminal leaves.
    m, s = os.openpty()
    try:
        fcntl.ioctl(s, termios.TIOCSTI, b"x")
        t = Term(["--version"])
        t.wait()
        fcntl.ioctl(t.slave, termios.TIOCSTI, b"x")
        ok(b"x" in t.injected(), "control: an 'x' pushed into the caller's terminal is seen by the check")
        t.close()
    except OSError as e:
        ok(True, "control: TIOCSTI from the harness # SKIP not allowed here (%s)" % e)
    os.close(m)
    os.close(s)


def flood():
    data = os.path.join(WS, "flood.bin")
    t = run(["sh", "-c", "stty raw -echo; head -c 64M /dev/urandom | tee %s" % data])
    h = hashlib.sha256()
    got = 0
    end = time.time() + 120
    while time.time() < end:
        r, _, _ = select.select([t.master], [], [], 2)
        if not r:
            p, _ = os.waitpid(t.pid, os.WNOHANG)
            if p:
                t.status = 0
                break
            continue
        try:
            chunk = os.read(t.master, 1 << 20)
        except OSError:
            break
        h.update(chunk)
        got += len(chunk)
    st = t.wait(30)
    want = hashlib.sha256(open(data, "rb").read()).hexdigest() if os.path.exists(data) else "-"
    ok(got == 64 << 20, "64 MiB through the pty: %d bytes arrived" % got)
    ok(h.hexdigest() == want, "and intact (sha256 matches the file written inside)")
    ok(st == 0, "the flood's command exits 0 (%r)" % st)
    os.unlink(data) if os.path.exists(data) else None
    t.close()


def modes():
    t = Term(["run", "--no-pty", "--", "sh", "-c", "tty; echo done"])
    ok(t.expect("done"), "--no-pty runs", t.buf)
    ok(b"not a tty" in t.buf, "--no-pty keeps today's behaviour: no controlling terminal inside ('not a tty')",
       t.buf)
    t.close()
    t = Term(["run", "--", "sh", "-c", "tty; echo done"], background=True)
    st = t.wait()
    ok(st == 0 and b"not a tty" in t.buf, "in the terminal's background, no --pty: today's behaviour, not stopped",
       t.buf)
    ok(t.settings_kept(), "and the terminal's settings untouched")
    t.close()
    path = os.path.join(WS, "out.txt")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    t = run(["sh", "-c", "echo out-line; tty; echo err-line >&2"], stdout=fd)
    os.close(fd)
    st = t.wait()
    text = open(path).read()
    ok(st == 0 and "out-line" in text, "run -- cmd > file with a terminal on stdin: the output is in the file",
       text)
    ok(re.search(r"/dev/pts/\d+", text) is not None, "and stdin is the pty inside", text)
    ok(b"err-line" in t.buf and b"out-line" not in t.buf, "stderr still reaches the terminal, stdout does not",
       t.buf)
    t.close()
    p = subprocess.run([RF, "run", "--pty", "--", "sh", "-c", "tty; cat"], input=b"piped-line\n",
                       capture_output=True, timeout=20)
    ok(p.returncode == 0 and re.search(rb"/dev/pts/\d+", p.stdout) and b"piped-line" in p.stdout,
       "--pty with no terminal: the command gets a pty relayed to pipes, EOF passed on", p)
    # The command ends with its last 100 KB still on the way (the pty, the
    # relay's buffer, a full pipe) and the reader comes back 2.5 s later.
    p = subprocess.Popen([RF, "run", "--pty", "--", "sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    time.sleep(2.5)
    data = p.stdout.read()
    p.wait(20)
    ok(len(data) == 100000 and data == b"a" * 100000,
       "output waits for a slow reader after the command ended (%d of 100000 bytes)" % len(data))
    t = Term(["run", "--pty", "--backend", "none", "--", "true"])
    st = t.wait()
    ok(st == 125 and b"--backend native" in t.buf, "--pty with another backend is refused, naming the fix", t.buf)
    t.close()
    t = Term(["run", "--backend", "none", "--", "sh", "-c", "tty"])
    st = t.wait()
    ok(st == 0 and b"not a tty" not in t.buf, "another backend with a terminal and no --pty: today's behaviour",
       t.buf)
    t.close()


# ── Through a warm pool (ringfence serve, run --via) ─────────────────────
# The server makes the pty in a ready sandbox and passes its master to the
# client, which relays as the one-shot run does. The server is started
# with TERM=dumb: a pty's terminal type must be the client's.
SOCK = os.path.join(os.path.dirname(WS), "pool.sock")
SERVER = None


def via(args, extra=(), **kw):
    return Term(["run", "--via", SOCK] + list(extra) + ["--"] + args, **kw)


def fds_of(pid):
    """What the process's descriptors point at."""
    out = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return out


def pool_bash():
    t = via(["bash", "--norc", "--noprofile", "-i"])
    ok(t.expect(r"bash-[\d.]+[#$] "), "pool: an interactive bash inside shows its prompt", t.buf)
    ok(b"no job control" not in t.buf and b"cannot set terminal process group" not in t.buf,
       "pool: bash has job control", t.buf)
    t.send("sleep 20\r")
    time.sleep(0.4)
    t0 = time.time()
    t.send("\x03")
    t.send("echo after-$((40+2))\r")
    ok(t.expect(r"after-42", 10),
       "pool: Ctrl-C ends the foreground sleep, the shell survives (%.2f s)" % (time.time() - t0),
       t.buf)
    t.send("sleep 2; echo slept\r")
    time.sleep(0.4)
    t.send("\x1a")
    ok(t.expect(r"Stopped", 5), "pool: Ctrl-Z stops the foreground job", t.buf)
    t.send("fg\r")
    ok(t.expect(r"slept", 6), "pool: fg brings it back and it finishes", t.buf)
    t.send("tty; echo TERM=$TERM; stty size\r")
    ok(t.expect(r"/dev/pts/\d+"), "pool: tty names /dev/pts/N", t.buf)
    ok(t.expect(r"TERM=xterm-256color"), "pool: TERM is the client's (xterm-256color), not the server's (dumb)",
       t.buf)
    ok(t.expect(r"30 100"), "pool: stty size sees the client's window (30x100)", t.buf)
    ok(not t.settings_kept(), "pool: control: the caller's terminal is in raw mode while the command runs")
    # Meanwhile: the server passed the master on and kept no copy, and
    # another client's command sees only its own pty in its devpts.
    held = [f for f in fds_of(SERVER.pid) if "ptmx" in f or "/dev/pts" in f]
    ok(not held, "pool: the server holds no pty descriptor while a pty command runs", held)
    p = subprocess.run([RF, "run", "--via", SOCK, "--pty", "--", "sh", "-c", "ls /dev/pts | tr '\\n' ' '"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    ok(p.returncode == 0 and p.stdout.split() == [b"0", b"ptmx"],
       "pool: a second client's command sees only its own pty (/dev/pts: %r)" % p.stdout, p)
    t.send("exit 3\r")
    ok(t.wait() == 3, "pool: exit status as without the pool (exit 3)", "status %r" % t.status)
    ok(t.settings_kept(), "pool: the caller's terminal settings are as before after the command exits")
    t.close()


def pool_signals():
    token = "sleep 20.3%d" % os.getpid()
    t = via(["sh", "-c", "echo started; %s; echo ran-on" % token])
    ok(t.expect("started"), "pool: control: sh -c 'sleep 20; echo x' runs", t.buf)
    time.sleep(0.3)
    t0 = time.time()
    t.send("\x03")
    st = t.wait(10)  # long before the 20 s sleep would have ended
    took = time.time() - t0
    ok(st is not None and b"ran-on" not in t.buf,
       "pool: Ctrl-C ends sh -c 'sleep 20; echo' at once (%.2f s, exit %r)" % (took, st), t.buf)
    ok(not pids_of("^" + token), "pool: no process of the sandbox is left")
    t.close()
    script = ("import os, signal, time\n"
              "signal.signal(signal.SIGWINCH, lambda s, f: os.write(1, b'size %d %d\\n' % "
              "os.get_terminal_size()[::-1]))\n"
              "os.write(1, b'ready %d %d\\n' % os.get_terminal_size()[::-1])\n"
              "time.sleep(10)\n")
    t = via(["python3", "-c", script], rows=24, cols=80)
    ok(t.expect("ready 24 80"), "pool: the window size at the start is the client's (24 80)", t.buf)
    set_size(t.master, 50, 132)
    ok(t.expect(r"size 50 132", 5), "pool: a resize reaches the command: SIGWINCH and the new size", t.buf)
    set_size(t.master, 65535, 65535)
    ok(t.expect(r"size 65535 65535", 5), "pool: a huge window size is passed as is", t.buf)
    t.close()
    t = via(["sh", "-c", "echo up; exec %s" % token])
    ok(t.expect("up") and not t.settings_kept(), "pool: control: raw mode while the command runs", t.buf)
    time.sleep(0.2)
    for p in pids_of("^" + token):
        os.kill(p, signal.SIGKILL)
    st = t.wait(5)
    ok(st == 137, "pool: kill -9 of the command: ringfence exits 137 (%r)" % st)
    ok(t.settings_kept(), "pool: terminal settings (stty -g) restored after kill -9 of the command")
    t.close()


PROBE_FDS = r"""
import os
for fd in (0, 1, 2):
    st = os.fstat(fd)
    print("fd%d=%d:%d" % (fd, st.st_dev, st.st_rdev))
print("fds-end")
"""


def pool_terminal_outside():
    out = injection(["--via", SOCK], "(pool)")
    ok(b"probe-end" in out and b"no /dev/tty" not in out, "pool: /dev/tty opens inside (the pty)", out)
    m, s = os.openpty()  # a terminal like the harness's: the host's devpts
    st = os.fstat(s)
    os.close(m)
    os.close(s)
    for extra, want in ((["--pty"], False), (["--no-pty"], True)):
        t = via(["python3", "-c", PROBE_FDS], extra)
        ok(t.expect("fds-end"), "pool: the descriptor probe ran inside %s" % extra[0], t.buf)
        mine = os.fstat(t.slave)
        seen = ("%d:%d" % (mine.st_dev, mine.st_rdev)).encode() in t.buf
        if want:
            ok(seen, "pool: control: with --no-pty the command holds the caller's terminal (the check sees it)", t.buf)
        else:
            ok(not seen and ("=%d:" % st.st_dev).encode() not in t.buf,
               "pool: with a pty no descriptor of the command is the caller's terminal, nor of its devpts", t.buf)
        t.close()


def pool_client_gone():
    token = "sleep 30.4%d" % os.getpid()
    mark = os.path.join(WS, "hup-%d" % os.getpid())
    t = via(["sh", "-c", "trap 'echo hup > %s; exit 1' HUP; echo up; %s & wait" % (mark, token)])
    t.expect("up")
    end = time.time() + 5
    while not pids_of("^" + token) and time.time() < end:  # its child starts after the "up"
        time.sleep(0.05)
    ok(t.expect("up", 0) and bool(pids_of("^" + token)), "pool: control: the command and its child run", t.buf)
    os.kill(t.pid, signal.SIGKILL)  # the client dies mid-run
    end = time.time() + 5
    while pids_of("^" + token) and time.time() < end:
        time.sleep(0.05)
    ok(not pids_of("^" + token), "pool: the client killed mid-run: nothing of its sandbox is left")
    ok(os.path.exists(mark), "pool: and the sandbox was hung up first (the command's SIGHUP trap ran)")
    t.close()
    t = via(["bash", "--norc", "--noprofile", "-i"])
    ok(t.expect(r"bash-[\d.]+[#$] "), "pool: control: an interactive bash runs (hang-up)", t.buf)
    t.send("%s\r" % token)
    time.sleep(0.4)
    os.close(t.master)  # the terminal emulator's window closes
    end = time.time() + 5
    while t.status is None and time.time() < end:
        p, st = os.waitpid(t.pid, os.WNOHANG)
        if p:
            t.status = os.waitstatus_to_exitcode(st)
        time.sleep(0.05)
    ok(t.status is not None, "pool: the caller's terminal hung up: ringfence ends (%r)" % t.status)
    time.sleep(0.2)
    ok(not pids_of("^" + token), "pool: and the hang-up reached the job inside: nothing left")
    t.master = os.open("/dev/null", os.O_RDONLY)
    t.close()


def pool_tests():
    global SERVER
    SERVER = subprocess.Popen([RF, "serve", "--socket", SOCK, "--pool-size", "2"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, TERM="dumb"))
    end = time.time() + 10
    while not os.path.exists(SOCK) and time.time() < end and SERVER.poll() is None:
        time.sleep(0.05)
    if not ok(os.path.exists(SOCK), "pool: ringfence serve starts"):
        SERVER.kill()
        print("#   " + SERVER.communicate()[1].decode(errors="replace")[-1000:])
        return
    try:
        for test in (pool_bash, pool_signals, pool_terminal_outside, pool_client_gone):
            try:
                test()
            except Exception as e:
                ok(False, "%s raised %r" % (test.__name__, e))
    finally:
        SERVER.terminate()
        SERVER.wait(10)


TESTS = (bash_job_control, ctrl_c_kills_tree, window_size, dev_tty, restored_after_kills, hang_up, injection_tests,
         flood, modes, pool_tests)
ONLY = os.environ.get("RF_TERMINAL_ONLY", "").split()  # e.g. "pool_tests": one part while working on it
for test in TESTS:
    if ONLY and test.__name__ not in ONLY:
        continue
    try:
        test()
    except Exception as e:  # a crash of the harness is a failure, not a pass
        ok(False, "%s raised %r" % (test.__name__, e))
TAP.done()
