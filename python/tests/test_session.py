# SPDX-License-Identifier: LGPL-2.1-or-later
"""ringfence.Session: an overlay session reviewed, applied, discarded."""
import os

import pytest

import ringfence


def overlay_run(ws, cmd, **settings):
    cfg = ringfence.Config({"changes": "overlay", "workspace": str(ws), **settings})
    try:
        return ringfence.run(["sh", "-c", cmd], workspace=ws, config=cfg)
    except ringfence.RingfenceError as e:
        pytest.skip(f"overlay not possible here: {e}")


def test_session_diff_apply(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGFENCE_HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    r = overlay_run(ws, "echo two >> a.txt && echo new > b.txt")
    if r.exit_code != 0:
        pytest.skip(f"overlay not possible here: {r.setup_error}")
    sid = r.json["session"]
    assert (ws / "a.txt").read_text() == "one\n"
    assert sid in ringfence.Session.list()
    with ringfence.Session(sid) as s:
        kinds = {c["path"]: c["kind"] for c in s.changes()}
        assert kinds == {"a.txt": "modified", "b.txt": "added"}
        assert "+two" in s.diff()
        report = s.apply()
    assert sorted(report["applied"]) == ["a.txt", "b.txt"]
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    assert (ws / "b.txt").read_text() == "new\n"


def test_session_discard_and_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGFENCE_HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep").write_text("k")
    r = overlay_run(ws, "rm keep")
    if r.exit_code != 0:
        pytest.skip(f"overlay not possible here: {r.setup_error}")
    with ringfence.Session(r.json["session"]) as s:
        s.discard()
    assert (ws / "keep").read_text() == "k"
    with pytest.raises(ringfence.RingfenceError, match="no session"):
        ringfence.Session("0123456789ab")
