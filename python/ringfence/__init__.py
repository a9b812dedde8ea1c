# SPDX-License-Identifier: LGPL-2.1-or-later
"""ringfence: run the processes an AI agent starts inside a Linux sandbox.

A thin binding over libringfence (config -> policy -> plan -> run); every
policy decision is the C library's, none is made here. See docs/python.md.
"""
from __future__ import annotations

import ctypes
import json
import os
import threading
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Mapping, Sequence

from . import _lib
from ._lib import cstr, lib, strv, take_string
from ._stream import Output, Stream

__all__ = [
    "RingfenceError", "Config", "Policy", "Plan", "Process", "Status", "Result",
    "Verdict", "Guard", "Instance", "Session", "Output", "Stream", "run", "stream", "version",
]

EXIT_TIMEOUT = 124
EXIT_FAILURE = 125
EXIT_CANNOT_EXEC = 126
EXIT_NOT_FOUND = 127


class RingfenceError(Exception):
    """An error from libringfence: its message ("what: why"), its hint (the
    fix, or None), the errno behind it and the exit code the CLI would use."""

    def __init__(self, message: str, hint: str | None = None, errno: int = 0,
                 exit_code: int = EXIT_FAILURE):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.errno = errno
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message + (f"\nhint: {self.hint}" if self.hint else "")


class _Err:
    """An rf_error ** out-parameter; raise() turns it into RingfenceError."""

    def __init__(self) -> None:
        self.ptr = ctypes.c_void_p()

    @property
    def ref(self):
        return ctypes.byref(self.ptr)

    def exception(self, fallback: str) -> RingfenceError:
        e = self.ptr
        if not e:
            return RingfenceError(fallback)
        try:
            msg = lib.rf_error_message(e)
            hint = lib.rf_error_hint(e)
            return RingfenceError(
                msg.decode("utf-8", "replace") if msg else fallback,
                hint.decode("utf-8", "replace") if hint else None,
                lib.rf_error_errno(e), lib.rf_error_exit_code(e))
        finally:
            lib.rf_error_free(e)
            self.ptr = ctypes.c_void_p()


def version() -> str:
    """libringfence's version, e.g. "0.1.0"."""
    return lib.rf_version().decode()


class _Handle:
    """An owned C handle, freed once by close() or when collected."""
    _free: Any = None

    def __init__(self, ptr: int | None):
        self._ptr = ptr

    def _live(self) -> int:
        if not self._ptr:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._ptr

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr:
            type(self)._free(ptr)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Config(_Handle):
    """Layers of settings in ringfence's schema (docs/config.md); later
    layers win. Config({"network": "none"}) is one layer."""
    _free = staticmethod(lib.rf_config_free)

    def __init__(self, settings: Mapping[str, Any] | None = None, *,
                 files: Iterable[str | os.PathLike[str]] = (), agent: str | None = None):
        super().__init__(lib.rf_config_new())
        if not self._ptr:
            raise MemoryError("rf_config_new")
        for f in files:
            self.load_file(f)
        if settings is not None:
            self.add(settings)
        if agent is not None:
            err = _Err()
            if lib.rf_config_select_agent(self._live(), cstr(agent), err.ref) < 0:
                raise err.exception("selecting the agent failed")

    def add(self, settings: Mapping[str, Any] | str, origin: str = "python") -> "Config":
        text = settings if isinstance(settings, str) else json.dumps(settings)
        err = _Err()
        if lib.rf_config_add_json(self._live(), cstr(origin), text.encode(), err.ref) < 0:
            raise err.exception("adding the settings failed")
        return self

    def load_file(self, path: str | os.PathLike[str]) -> "Config":
        err = _Err()
        if lib.rf_config_load_file(self._live(), cstr(path), err.ref) < 0:
            raise err.exception(f"loading {path} failed")
        return self

    def policy(self) -> "Policy":
        err = _Err()
        ptr = lib.rf_policy_resolve(self._live(), None, err.ref)
        if not ptr:
            raise err.exception("resolving the policy failed")
        return Policy(ptr)


class Policy(_Handle):
    """The merged config, substituted, checked and with defaults filled."""
    _free = staticmethod(lib.rf_policy_free)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None = None, **kw) -> "Policy":
        with Config(settings, **kw) as cfg:
            return cfg.policy()

    def to_dict(self) -> dict:
        return json.loads(take_string(lib.rf_policy_to_json(self._live())) or "null")

    def plan(self, argv: Sequence[str | os.PathLike[str]]) -> "Plan":
        if isinstance(argv, (str, bytes)) or not argv:
            raise ValueError("argv must be a non-empty list of arguments")
        err = _Err()
        ptr = lib.rf_plan_build(self._live(), strv(list(argv)), err.ref)
        if not ptr:
            raise err.exception("building the plan failed")
        return Plan(ptr)

    def shell_plan(self, command: str, timeout: float = 0) -> "Plan":
        """The exec tool's plan: /bin/sh -c COMMAND in the workspace."""
        err = _Err()
        ptr = lib.rf_plan_build_shell(self._live(), command.encode(), float(timeout), err.ref)
        if not ptr:
            raise err.exception("building the plan failed")
        return Plan(ptr)

    def guard(self, shell: bool = False) -> "Guard":
        err = _Err()
        fn = lib.rf_guard_new_for_shell if shell else lib.rf_guard_new_for_policy
        ptr = fn(self._live(), err.ref)
        if not ptr:
            raise err.exception("building the guard failed")
        return Guard(ptr)

    def use_instance(self, instance: "Instance") -> "Policy":
        err = _Err()
        if lib.rf_policy_use_instance(self._live(), instance._live(), err.ref) < 0:
            raise err.exception("using the instance failed")
        return self

    @property
    def instance_root(self) -> str:
        return os.fsdecode(lib.rf_policy_instance_root(self._live()))


@dataclass
class Status:
    """How a sandbox ended (rf_status)."""
    exit_code: int
    signal: int
    exited: bool
    timed_out: bool
    oom_killed: bool
    pids_limit_hit: bool
    wall_seconds: float
    peak_memory_bytes: int
    setup_error: str | None
    setup_hint: str | None
    network: dict | None
    json: dict = field(repr=False)

    @property
    def backend(self) -> str | None:
        """The backend that ran it ("native", "landlock", "bwrap", ...)."""
        return self.json.get("backend")

    @property
    def weakenings(self) -> list[str]:
        """Every way this sandbox was weaker than the usual one: accepted
        (a contained root) or asked for by name ("seccomp off: ... (asked for)")."""
        return list(self.json.get("weakenings") or [])


@dataclass
class Result(Status):
    """A Status plus the captured output (str, or bytes with text=False)."""
    stdout: str | bytes | None = None
    stderr: str | bytes | None = None


def _status(st: _lib.RfStatus) -> Status:
    def s(p):
        return ctypes.string_at(p).decode("utf-8", "replace") if p else None
    net = s(st.network_json)
    return Status(st.exit_code, st.signal, st.exited, st.timed_out, st.oom_killed,
                  st.pids_limit_hit, st.wall_seconds, st.peak_memory_bytes,
                  s(st.setup_error), s(st.setup_hint), json.loads(net) if net else None,
                  json.loads(take_string(lib.rf_status_to_json(ctypes.byref(st))) or "{}"))


def _fd(f: int | IO | None) -> int:
    if f is None:
        return -1
    return f if isinstance(f, int) else f.fileno()


class Process(_Handle):
    """A running sandbox (rf_proc). wait() returns its Status; closing a
    process that still runs kills its whole tree."""
    _free = staticmethod(lib.rf_proc_free)

    @property
    def pid(self) -> int:
        return lib.rf_proc_pid(self._live())

    def kill(self, sig: int = 9) -> None:
        lib.rf_proc_kill(self._live(), sig)

    def terminate(self) -> None:
        lib.rf_proc_terminate(self._live())

    def wait(self) -> Status:
        st = _lib.RfStatus()
        err = _Err()
        try:
            if lib.rf_proc_wait(self._live(), ctypes.byref(st), err.ref) < 0:
                raise err.exception("waiting for the sandbox failed")
            return _status(st)
        finally:
            lib.rf_status_clear(ctypes.byref(st))


class Plan(_Handle):
    """What will happen, concretely (rf_plan)."""
    _free = staticmethod(lib.rf_plan_free)

    def to_dict(self) -> dict:
        return json.loads(take_string(lib.rf_plan_to_json(self._live())) or "null")

    @property
    def backend(self) -> str:
        return lib.rf_plan_backend(self._live()).decode()

    def spawn(self, stdin: int | IO | None = None, stdout: int | IO | None = None,
              stderr: int | IO | None = None) -> Process:
        """Start the sandbox; None inherits the caller's stream. The sandbox
        dies with the thread that spawned it (PR_SET_PDEATHSIG)."""
        io = _lib.RfStdio(_fd(stdin), _fd(stdout), _fd(stderr))
        err = _Err()
        ptr = lib.rf_spawn(self._live(), ctypes.byref(io), err.ref)
        if not ptr:
            raise err.exception("starting the sandbox failed")
        return Process(ptr)

    def run(self, input: str | bytes | None = None, capture: bool = True,
            text: bool = True) -> Result:
        """Run to the end; capture stdout and stderr unless capture=False."""
        return _run_plan(self, input, capture, text)

    def stream(self, input: str | bytes | None = None, text: bool = True) -> Stream:
        """Start the sandbox and return a Stream of its output lines."""
        return Stream(self, input, text, lambda st: Result(**st.__dict__), _writer)


def _reader(fd: int, chunks: list) -> threading.Thread:
    def pump():
        with os.fdopen(fd, "rb") as f:
            chunks.append(f.read())
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t


def _writer(fd: int, data: bytes) -> threading.Thread:
    def pump():
        with os.fdopen(fd, "wb") as f:
            try:
                f.write(data)
            except BrokenPipeError:
                pass
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t


def _run_plan(plan: Plan, input, capture: bool, text: bool) -> Result:
    parent: list[int] = []   # our ends, handed to the pump threads
    child: list[int] = []    # the sandbox's ends, closed once it started
    in_fd = out_fd = err_fd = -1
    if input is not None:
        r, w = os.pipe()
        in_fd, child, parent = r, child + [r], parent + [w]
    else:
        in_fd = os.open(os.devnull, os.O_RDONLY)
        child.append(in_fd)
    if capture:
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        out_fd, err_fd = w1, w2
        child += [w1, w2]
        parent += [r1, r2]
    try:
        proc = plan.spawn(in_fd, out_fd, err_fd)
    except BaseException:
        for fd in child + parent:
            os.close(fd)
        raise
    for fd in child:
        os.close(fd)
    threads, out, errb = [], [], []
    if input is not None:
        data = input.encode() if isinstance(input, str) else input
        threads.append(_writer(parent.pop(0), data))
    if capture:
        threads += [_reader(parent[0], out), _reader(parent[1], errb)]
    with proc:
        status = proc.wait()
    for t in threads:
        t.join()
    res = Result(**status.__dict__)
    if capture:
        o, e = out[0] if out else b"", errb[0] if errb else b""
        res.stdout = o.decode("utf-8", "replace") if text else o
        res.stderr = e.decode("utf-8", "replace") if text else e
    return res


@dataclass
class Verdict:
    """The guard's answer: allowed, or why not."""
    allowed: bool
    result: str  # "allowed", "blocked_pattern" or "blocked_path"
    message: str | None
    pattern: str | None
    detail: str | None


_GUARD_RESULTS = {0: "allowed", 1: "blocked_pattern", 2: "blocked_path"}


class Guard(_Handle):
    """Seed 001's exec guard for a policy: a seatbelt, not the wall."""
    _free = staticmethod(lib.rf_guard_free)

    def check(self, command: str) -> Verdict:
        v = _lib.RfGuardVerdict()
        err = _Err()
        if lib.rf_guard_check(self._live(), command.encode(), ctypes.byref(v), err.ref) < 0:
            raise err.exception("the command could not be checked (treat it as blocked)")
        try:
            def s(b):
                return b.decode("utf-8", "replace") if b else None
            return Verdict(v.result == 0, _GUARD_RESULTS.get(v.result, str(v.result)),
                           s(v.message), s(v.pattern), s(v.detail))
        finally:
            lib.rf_guard_verdict_clear(ctypes.byref(v))


def _routes(routes: Mapping[str, Any]) -> dict:
    """network.routes from routes={NAME: URL | PRESET | {url, headers, ...}}:
    a string with "://" is the upstream's URL, another string a preset."""
    out = {}
    for name, r in routes.items():
        if isinstance(r, str):
            out[name] = {"url": r} if "://" in r else {"preset": r}
        else:
            out[name] = dict(r)
    return out


def _settings(workspace=None, network=None, allow_domains=None, limits=None,
              timeout=None, env=None, backend=None, routes=None) -> dict:
    s: dict[str, Any] = {}
    if workspace is not None:
        s["workspace"] = os.fspath(os.path.abspath(workspace))
    if allow_domains is not None:
        s["network"] = {"mode": network or "allowlist", "allow_domains": list(allow_domains)}
    elif network is not None:
        s["network"] = network
    if routes:
        # Credential routes: keys stay outside (docs/network.md).
        net = s.get("network")
        net = {"mode": net} if isinstance(net, str) else dict(net or {})
        net["routes"] = _routes(routes)
        s["network"] = net
    lim = dict(limits or {})
    if timeout is not None:
        lim["timeout"] = timeout
    if lim:
        s["limits"] = lim
    if env:
        s["env"] = {"set": dict(env)}
    if backend is not None:
        s["backend"] = backend
    return s


class Instance(_Handle):
    """A home of its own for an agent, a chat or a server (docs/instances.md),
    shaped like seed 002's OpencodeServer:

        with ringfence.Instance("chat-1", credentials=["~/.auth.json:auth.json"],
                                ephemeral=True) as inst:
            inst.run(["opencode", "--version"])

    create=True makes it (an error if it exists), False opens an existing one.
    Closing it ends the handle; an ephemeral instance is then removed."""
    _free = staticmethod(lib.rf_instance_close)

    def __init__(self, name: str, *, root: str | os.PathLike[str] | None = None,
                 create: bool = True, target: str | None = None,
                 credentials: Sequence[str] = (), copies: Sequence[str] = (),
                 ephemeral: bool = False, profile: str | None = None,
                 own_identity: bool = False, network: Mapping[str, Any] | None = None):
        if root is None:
            with Policy.from_settings({}) as p:
                root = p.instance_root
        self.root = os.fspath(root)
        err = _Err()
        if create:
            opts = _lib.RfInstanceOptions()
            lib.rf_instance_options_init(ctypes.byref(opts))
            keep = [strv([os.path.expanduser(c) for c in credentials]) if credentials else None,
                    strv([os.path.expanduser(c) for c in copies]) if copies else None]
            opts.credentials, opts.copies = keep[0], keep[1]
            opts.target, opts.profile = cstr(target), cstr(profile)
            opts.ephemeral = ephemeral
            # own_identity: an unprivileged caller's instance gets an id of its
            # own from /etc/subuid; network: settings stored with it (the
            # config's `network` object), which later runs may only narrow.
            opts.own_identity = own_identity
            net = Policy.from_settings({"network": dict(network)}) if network else None
            try:
                opts.network_of = net._live() if net else None
                ptr = lib.rf_instance_create(cstr(self.root), cstr(name), ctypes.byref(opts), err.ref)
            finally:
                if net:
                    net.close()
        else:
            ptr = lib.rf_instance_open(cstr(self.root), cstr(name), err.ref)
        if not ptr:
            raise err.exception(f"instance {name} could not be opened")
        super().__init__(ptr)

    @property
    def name(self) -> str:
        return os.fsdecode(lib.rf_instance_name(self._live()))

    @property
    def dir(self) -> str:
        return os.fsdecode(lib.rf_instance_dir(self._live()))

    def to_dict(self) -> dict:
        return json.loads(take_string(lib.rf_instance_to_json(self._live())) or "null")

    def policy(self, settings: Mapping[str, Any] | None = None) -> Policy:
        p = Policy.from_settings(settings or {})
        try:
            return p.use_instance(self)
        except BaseException:
            p.close()
            raise

    def run(self, cmd: Sequence[str], **kw) -> Result:
        """ringfence.run inside this instance (same keywords)."""
        return run(cmd, _instance=self, **kw)

    def stream(self, cmd: Sequence[str] | str, **kw) -> Stream:
        """ringfence.stream inside this instance (same keywords)."""
        return stream(cmd, _instance=self, **kw)

    def popen(self, cmd: Sequence[str], stdin=None, stdout=None, stderr=None,
              **kw) -> Process:
        """Start a long-running process (a server) in the instance; stop it
        with terminate() and wait()."""
        with self.policy(_settings(**kw)) as p, p.plan(cmd) as plan:
            return plan.spawn(stdin, stdout, stderr)

    @staticmethod
    def remove(name: str, root: str | os.PathLike[str], force: bool = False) -> None:
        err = _Err()
        if lib.rf_instance_remove(cstr(root), cstr(name), force, err.ref) < 0:
            raise err.exception(f"instance {name} could not be removed")


def _with_plan(cmd: Sequence[str] | str, settings: dict, config: Config | None,
               instance: Instance | None, use: Callable[[Plan], Any]) -> Any:
    """Config (the one given, or a fresh one) + settings -> policy -> plan
    for cmd (a list, or a str for /bin/sh -c); use(plan); free them all."""
    cfg = config if config is not None else Config()
    try:
        if settings:
            cfg.add(settings, "ringfence.run")
        with cfg.policy() as policy:
            if instance is not None:
                policy.use_instance(instance)
            argv = ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
            with policy.plan(argv) as plan:
                return use(plan)
    finally:
        if config is None:
            cfg.close()


def run(cmd: Sequence[str] | str, *, workspace: str | os.PathLike[str] | None = None,
        network: str | None = None, allow_domains: Sequence[str] | None = None,
        limits: Mapping[str, Any] | None = None, timeout: float | None = None,
        env: Mapping[str, str] | None = None, backend: str | None = None,
        config: Config | None = None, input: str | bytes | None = None,
        capture: bool = True, text: bool = True, _instance: Instance | None = None,
        routes: Mapping[str, Any] | None = None) -> Result:
    """Run cmd (a list, or a str for /bin/sh -c) in a fresh sandbox under the
    default policy plus the settings given, and wait for it. The output is
    captured (str unless text=False); a setup failure is a RingfenceError.

    routes: credential routes, the key read outside and never inside, e.g.
    routes={"anthropic": "anthropic"} (a preset) or {"api": {"url":
    "https://api.example.com", "headers": {"x-api-key": "env:API_KEY"},
    "allow": ["POST /v1/*"]}}; inside, RINGFENCE_ROUTE_<NAME>_URL."""
    settings = _settings(workspace, network, allow_domains, limits, timeout, env, backend, routes)
    return _with_plan(cmd, settings, config, _instance,
                      lambda plan: plan.run(input=input, capture=capture, text=text))


def stream(cmd: Sequence[str] | str, *, workspace: str | os.PathLike[str] | None = None,
           network: str | None = None, allow_domains: Sequence[str] | None = None,
           limits: Mapping[str, Any] | None = None, timeout: float | None = None,
           env: Mapping[str, str] | None = None, backend: str | None = None,
           config: Config | None = None, input: str | bytes | None = None,
           text: bool = True, _instance: Instance | None = None,
           routes: Mapping[str, Any] | None = None) -> Stream:
    """Like run, but returns at once: iterate the Stream for Output lines as
    the command writes them (stdout and stderr, each line tagged); after the
    loop, stream.result is the Result. Use `with ringfence.stream(...) as s:`
    so leaving early kills the sandbox.

        with ringfence.stream(["make", "test"], workspace=".") as s:
            for out in s:
                print(out.stream, out.data, end="")
        print(s.result.exit_code)
    """
    settings = _settings(workspace, network, allow_domains, limits, timeout, env, backend, routes)
    return _with_plan(cmd, settings, config, _instance,
                      lambda plan: plan.stream(input=input, text=text))


_CHANGE_KINDS = ("added", "modified", "mode", "deleted", "renamed", "refused")


def _paths(v) -> list[str]:
    out = []
    i = 0
    while v and v[i] is not None:
        out.append(os.fsdecode(v[i]))
        i += 1
    return out


class Session(_Handle):
    """An overlay session (docs/changes.md): what commands run with
    changes="overlay" did to the workspace, kept aside until applied.

        r = ringfence.run(["make"], config=ringfence.Config({"changes": "overlay"}))
        with ringfence.Session(r.json["session"]) as s:
            print(s.diff())
            s.apply()            # or s.discard()

    A later run continues it with Config({"session": s.id})."""
    _free = staticmethod(lib.rf_session_free)

    def __init__(self, id: str, *, root: str | os.PathLike[str] | None = None):
        if root is None:
            with Policy.from_settings({}) as p:
                root = p.instance_root
        self.root = os.fspath(root)
        err = _Err()
        ptr = lib.rf_session_open(cstr(self.root), cstr(id), err.ref)
        if not ptr:
            raise err.exception(f"session {id} could not be opened")
        super().__init__(ptr)

    @staticmethod
    def list(root: str | os.PathLike[str] | None = None) -> list[str]:
        """The ids of the sessions under the instance root, oldest first."""
        if root is None:
            with Policy.from_settings({}) as p:
                root = p.instance_root
        err = _Err()
        v = lib.rf_session_list(cstr(root), err.ref)
        if not v:
            raise err.exception("sessions could not be listed")
        try:
            return _paths(v)
        finally:
            lib.rf_session_list_free(v)

    @property
    def id(self) -> str:
        return os.fsdecode(lib.rf_session_id(self._live()))

    @property
    def workspace(self) -> str:
        return os.fsdecode(lib.rf_session_workspace(self._live()))

    def _each(self, fn):
        err = _Err()
        cs = lib.rf_session_diff(self._live(), err.ref)
        if not cs:
            raise err.exception("the changes could not be read")
        try:
            return [fn(lib.rf_changeset_get(cs, i)) for i in range(lib.rf_changeset_count(cs))]
        finally:
            lib.rf_changeset_free(cs)

    def changes(self) -> list[dict]:
        """Each change: path, kind, type, modes, sizes (and old_path, refused)."""
        def one(p):
            c = p.contents
            d = {"path": os.fsdecode(c.path), "kind": _CHANGE_KINDS[c.kind], "type": c.type.decode(),
                 "old_mode": c.old_mode, "new_mode": c.new_mode, "old_size": c.old_size,
                 "new_size": c.new_size}
            if c.old_path:
                d["old_path"] = os.fsdecode(c.old_path)
            if c.refused:
                d["refused"] = c.refused.decode()
            return d
        return self._each(one)

    def diff(self, color: bool = False) -> str:
        """The whole changeset as one unified diff (git's format)."""
        def one(p):
            err = _Err()
            text = take_string(lib.rf_change_diff(self._live(), p, color, None, None, err.ref))
            if text is None:
                raise err.exception("diff failed")
            return text
        return "".join(self._each(one))

    def apply(self, only: Sequence[str] | None = None, force: bool = False) -> dict:
        """Write the changes into the workspace (each file atomically; a file
        changed there since the session began is a conflict unless force).
        Returns {"applied", "conflicts", "refused", "failed"}: lists of paths."""
        rep = _lib.RfApplyReport()
        err = _Err()
        arr = strv(list(only)) if only else None
        if lib.rf_session_apply(self._live(), arr, force, ctypes.byref(rep), err.ref) < 0:
            raise err.exception("apply failed")
        try:
            return {k: _paths(getattr(rep, k)) for k in ("applied", "conflicts", "refused", "failed")}
        finally:
            lib.rf_apply_report_clear(ctypes.byref(rep))

    def discard(self) -> None:
        """Delete the session; the workspace stays as it is."""
        err = _Err()
        if lib.rf_session_discard(self._live(), err.ref) < 0:
            raise err.exception("discard failed")
