# SPDX-License-Identifier: LGPL-2.1-or-later
"""Output of a running sandbox, line by line, as it comes (ringfence.stream).

The sandbox writes into two pipes; one selector loop here reads both, so a
command that fills stderr while we wait on stdout cannot stall either. Lines
are yielded in the order the reads returned them; a last line without a
newline is yielded at end of file. Leaving the loop early (break, an
exception, close()) kills the sandbox's whole tree and waits for it.
"""
from __future__ import annotations

import codecs
import os
import selectors
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:  # pragma: no cover
    from . import Plan, Process, Result, Status


@dataclass
class Output:
    """One line of output: which stream, and the line (with its newline if
    it had one; str, or bytes with text=False)."""
    stream: str  # "stdout" or "stderr"
    data: str | bytes


class _Lines:
    """Split one pipe's bytes into lines, decoding UTF-8 incrementally when
    text (a character split across two reads is not mangled)."""

    def __init__(self, text: bool) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace") if text else None
        self.pending: str | bytes = "" if text else b""

    def feed(self, data: bytes, final: bool = False) -> list:
        chunk = self.decoder.decode(data, final) if self.decoder else data
        buf = self.pending + chunk
        nl = "\n" if self.decoder else b"\n"
        lines = buf.split(nl)
        self.pending = lines.pop()
        out = [line + nl for line in lines]
        if final and self.pending:
            out.append(self.pending)
            self.pending = "" if self.decoder else b""
        return out


class Stream:
    """A running sandbox whose output is read line by line: iterate it for
    Output items; after the loop, .result is the Result (its stdout and
    stderr are None: the lines went to you). Use it as a context manager so
    an early exit kills the sandbox."""

    def __init__(self, plan: "Plan", input: str | bytes | None, text: bool,
                 make_result: Callable[["Status"], "Result"],
                 writer: Callable[[int, bytes], threading.Thread]) -> None:
        self.result: Result | None = None
        self._make_result = make_result
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
        try:
            self._proc: Process | None = plan.spawn(in_r, out_w, err_w)
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        if input is not None:
            data = input.encode() if isinstance(input, str) else input
            writer(in_w, data)
        self._fds = {out_r: ("stdout", _Lines(text)), err_r: ("stderr", _Lines(text))}
        self._iter = self._lines()

    @property
    def pid(self) -> int:
        """The sandbox's pid (its init) while it runs."""
        return self._proc.pid if self._proc else 0

    def __iter__(self) -> Iterator[Output]:
        return self

    def __next__(self) -> Output:
        return next(self._iter)

    def _lines(self) -> Iterator[Output]:
        sel = selectors.DefaultSelector()
        for fd in self._fds:
            sel.register(fd, selectors.EVENT_READ)
        try:
            while sel.get_map():
                for key, _ in sel.select():
                    name, lines = self._fds[key.fd]
                    data = os.read(key.fd, 65536)
                    if not data:
                        sel.unregister(key.fd)
                    for line in lines.feed(data, final=not data):
                        yield Output(name, line)
            self._finish()
        finally:
            sel.close()
            self.close()

    def _finish(self) -> None:
        if self._proc is not None:
            with self._proc as proc:
                self.result = self._make_result(proc.wait())
            self._proc = None

    def close(self) -> None:
        """Kill the sandbox if it still runs, wait for it, close the pipes."""
        if self._proc is not None:
            self._proc.kill()
            self._finish()
        for fd in list(self._fds):
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        self._iter.close()
        self.close()
