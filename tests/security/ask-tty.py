# SPDX-License-Identifier: LGPL-2.1-or-later
# --ask tty under a real terminal: ringfence runs on the slave of a pty of
# this harness (its controlling terminal); the question appears on the
# master, the answer is typed there. Prints TAP.
# Usage: ask-tty.py RINGFENCE WORKSPACE SCRATCH
import functools, http.server, os, re, sys, threading, time

sys.dont_write_bytecode = True  # nothing written beside the tests (a staged copy is read-only to rftest)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptyharness  # noqa: E402

RF, WS, SCRATCH = sys.argv[1], sys.argv[2], sys.argv[3]
XDG = os.path.join(SCRATCH, "xdg-tty")
TAP = ptyharness.Tap(diag_chars=1200)
ok = TAP.ok


class Term(ptyharness.Term):
    program, cwd, wait_timeout = RF, WS, 15
    env = {"TERM": "xterm", "XDG_CONFIG_HOME": XDG}


www = os.path.join(SCRATCH, "www-tty")
os.makedirs(www, exist_ok=True)
with open(os.path.join(www, "hello.txt"), "w") as f:
    f.write("tty-asked-content\n")
http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=www)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
PORT = srv.server_address[1]
URL = "http://t.test:%d/hello.txt" % PORT
# Answers are typed as soon as the prompt shows; a generous timeout keeps a
# loaded machine from turning a typed answer into silence. The silence
# check gets a short one of its own.
BASE = ["run", "--pty", "--ask", "tty", "--ask-timeout", "30", "--add-host", "t.test:127.0.0.1", "--"]
SHORT = ["--ask-timeout", "3"]
PROMPT = r"asks to connect to t\.test:%d" % PORT


def asked(key, cmd=None, extra=()):
    t = Term(BASE[:-1] + list(extra) + ["--"] + (cmd or ["curl", "-fsS", URL]))
    shown = t.expect(PROMPT)
    if shown and key:
        os.write(t.master, key)
    rc = t.wait()
    t.close()
    return t, shown, rc


t, shown, rc = asked(b"y")
ok(shown, "the question names the host and port", t.text())
ok("command: curl -fsS" in t.text(), "the question names the sandbox's command line", t.text())
ok(re.search(r"process: curl \(pid \d+ in the sandbox\)", t.text()), "the question names the process inside",
   t.text())
ok(rc == 0 and "tty-asked-content" in t.text(), "y: curl gets through", "exit %s\n%s" % (rc, t.text()))

# --ask alone: the terminal's question, as --ask tty.
t = Term(["run", "--pty", "--ask", "--ask-timeout", "30", "--add-host", "t.test:127.0.0.1", "--", "curl", "-fsS", URL])
shown = t.expect(PROMPT)
if shown:
    t.send(b"y")
rc = t.wait()
t.close()
ok(shown and rc == 0 and "tty-asked-content" in t.text(), "--ask alone asks on the terminal; y: curl gets through",
   "exit %s\n%s" % (rc, t.text()))

# A process names itself with escape sequences (clear the screen, set the
# title): the question shows them as '?', the terminal never gets them.
evil = ("import ctypes, os, urllib.request\n"
        "ctypes.CDLL(None).prctl(15, b'\\x1b[2J\\x1b]0;pwn\\x07', 0, 0, 0)\n"
        "urllib.request.urlopen('%s').read()\n" % URL)
t, shown, rc = asked(b"y", ["python3", "-c", evil])
ok(shown and b"process: ?[2J?]0;pwn? (pid" in t.buf and b"\x1b[2J" not in t.buf and b"\x1b]0;" not in t.buf,
   "a process's name with escape sequences reaches the terminal as '?'", "exit %s\n%r" % (rc, t.buf))

t, shown, rc = asked(b"n")
ok(shown and rc == 22, "n: curl is refused", "exit %s\n%s" % (rc, t.text()))

start = time.time()
t, shown, rc = asked(None, extra=SHORT)
took = time.time() - start
ok(shown and rc == 22 and "no answer: refused" in t.text(), "silence: refused after the timeout",
   "exit %s\n%s" % (rc, t.text()))
ok(3 <= took < 30, "silence: it waited the 3 s, then gave up (%.1f s)" % took)

t, shown, rc = asked(b"a")
ok(shown and rc == 0, "a: allowed always", "exit %s\n%s" % (rc, t.text()))
answers = os.path.join(XDG, "ringfence", "answers.yaml")
text = open(answers).read() if os.path.exists(answers) else ""
ok('"t.test:%d"' % PORT in text, "a: written to the user's answers.yaml", text)
t = Term(BASE + ["curl", "-fsS", URL])
rc = t.wait()
t.close()
ok(rc == 0 and not re.search(PROMPT.encode(), t.buf), "a: the next run connects without a question",
   "exit %s\n%s" % (rc, t.text()))
os.unlink(answers)

# The command tries to answer its own question: 'y' to /dev/tty and pushed
# into its terminal's input with TIOCSTI, while curl's question is up.
forge = ("import fcntl, os, subprocess, sys, termios, time\n"
         "p = subprocess.Popen(['curl', '-fsS', '%s'])\n"
         "time.sleep(1)\n"
         "fd = os.open('/dev/tty', os.O_RDWR)\n"
         "os.write(fd, b'y\\r\\ny')\n"
         "try:\n"
         "    fcntl.ioctl(fd, termios.TIOCSTI, b'y')\n"
         "except OSError as e:\n"
         "    print('tiocsti', e.errno)\n"
         "sys.exit(p.wait())\n" % URL)
t, shown, rc = asked(None, ["python3", "-c", forge], extra=SHORT)
ok(shown and rc == 22 and "no answer: refused" in t.text(),
   "the command cannot answer its own question (/dev/tty, TIOCSTI)", "exit %s\n%s" % (rc, t.text()))

t = Term(["run", "--no-pty", "--ask", "tty", "--", "true"])
rc = t.wait()
t.close()
ok(rc not in (0, None) and "would share the terminal" in t.text(), "--ask tty without a pty is refused",
   "exit %s\n%s" % (rc, t.text()))
srv.shutdown()
TAP.done()
