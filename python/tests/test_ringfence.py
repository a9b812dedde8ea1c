# SPDX-License-Identifier: LGPL-2.1-or-later
import json
import os
import signal
import subprocess
import time

import pytest

import ringfence


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.fixture
def rf_home(tmp_path):
    d = tmp_path / "rfhome"
    d.mkdir()
    return d


def test_version_matches_library():
    assert ringfence.version().count(".") == 2


def test_run_captures_output_and_exit_code(ws):
    r = ringfence.run(["sh", "-c", "echo out; echo err >&2; exit 3"], workspace=ws)
    assert (r.exit_code, r.exited, r.signal) == (3, True, 0)
    assert r.stdout == "out\n" and r.stderr == "err\n"
    assert r.json["exit_code"] == 3          # the struct layout matches the C one
    assert r.peak_memory_bytes == r.json.get("peak_memory_bytes", r.peak_memory_bytes)


def test_run_bytes_and_input(ws):
    r = ringfence.run("cat", input=b"\x00\xffabc", text=False, workspace=ws)
    assert r.stdout == b"\x00\xffabc"


def test_run_is_confined_to_the_workspace(ws, tmp_path):
    (ws / "inside").write_text("yes")
    outside = tmp_path / "outside"
    outside.write_text("secret")
    r = ringfence.run(["cat", str(ws / "inside")], workspace=ws)
    assert r.stdout == "yes"
    r = ringfence.run(["cat", str(outside)], workspace=ws)
    assert r.exit_code != 0 and "secret" not in r.stdout
    # positive control: the same read works outside the sandbox
    assert subprocess.run(["cat", str(outside)], capture_output=True, text=True).stdout == "secret"


def test_run_writes_land_in_the_workspace(ws):
    r = ringfence.run(["sh", "-c", "echo x > f"], workspace=ws)
    assert r.exit_code == 0 and (ws / "f").read_text() == "x\n"


def test_timeout_and_signal(ws):
    t0 = time.monotonic()
    r = ringfence.run(["sleep", "30"], workspace=ws, timeout=0.5)
    assert r.timed_out and r.exit_code == ringfence.EXIT_TIMEOUT
    assert time.monotonic() - t0 < 20
    r = ringfence.run(["sh", "-c", "kill -TERM $$"], workspace=ws)
    assert r.signal == signal.SIGTERM and r.exit_code == 128 + signal.SIGTERM


def test_env_is_set_and_caller_env_not_leaked(ws, monkeypatch):
    monkeypatch.setenv("RF_PY_SECRET", "leak")
    r = ringfence.run(["sh", "-c", "echo $FOO-$RF_PY_SECRET"], workspace=ws, env={"FOO": "bar"})
    assert r.stdout == "bar-\n"


def test_network_none_has_no_route(ws):
    r = ringfence.run(["sh", "-c", "cat /proc/net/dev"], workspace=ws, network="none")
    assert r.exit_code == 0
    ifaces = [l.split(":")[0].strip() for l in r.stdout.splitlines()[2:]]
    assert ifaces == ["lo"], ifaces


def test_errors_carry_message_and_hint(tmp_path):
    with pytest.raises(ringfence.RingfenceError) as e:
        ringfence.run(["true"], workspace=tmp_path / "missing")
    assert "workspace" in e.value.message
    assert e.value.exit_code == ringfence.EXIT_FAILURE
    with pytest.raises(ringfence.RingfenceError) as e:
        ringfence.Config({"network": "sideways"})
    assert "network" in e.value.message
    with pytest.raises(ringfence.RingfenceError) as e:
        ringfence.run(["/no/such/command"], workspace=tmp_path)
    assert e.value.exit_code == ringfence.EXIT_NOT_FOUND or "no/such" in str(e.value)


def test_config_policy_plan_as_json(ws):
    with ringfence.Config({"workspace": str(ws), "network": "none",
                           "limits": {"memory": "256M"}}) as cfg, cfg.policy() as pol:
        d = pol.to_dict()
        assert d["workspace"] == str(ws)
        with pol.plan(["true"]) as plan:
            pj = plan.to_dict()
            assert plan.backend in ("native", "landlock", "none")
            assert json.dumps(pj)  # plain JSON
            st = plan.run()
            assert st.exit_code == 0


def test_routes_reach_the_plan_without_the_key(ws, monkeypatch):
    monkeypatch.setenv("RF_PY_ROUTE_KEY", "sk-py-route-test-value")
    settings = ringfence._settings(ws, routes={
        "anthropic": "anthropic",
        "api": {"url": "https://api.example.com/v1", "headers": {"x-api-key": "env:RF_PY_ROUTE_KEY"}},
    })
    with ringfence.Policy.from_settings(settings) as pol, pol.plan(["true"]) as plan:
        text = json.dumps(plan.to_dict())
        routes = {r["name"]: r for r in plan.to_dict()["egress"]["routes"]}
        assert routes["api"]["headers"] == {"x-api-key": "env:RF_PY_ROUTE_KEY"}, routes
        assert routes["anthropic"]["url"] == "https://api.anthropic.com", routes
        assert "RINGFENCE_ROUTE_API_URL=http://127.0.0.1:3128/route/api" in plan.to_dict()["env"]
        assert "sk-py-route-test-value" not in text
    with pytest.raises(ringfence.RingfenceError, match="anthropic"):
        ringfence.run(["true"], workspace=ws, routes={"x": "antropic"})


def test_config_files_and_agent(ws, tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"workspace": str(ws), "agents": {"list": [
        {"id": "ro", "tools": {"disabled": ["exec"]}}]}}))
    with ringfence.Config(files=[f], agent="ro") as cfg, cfg.policy() as pol:
        assert "exec" in json.dumps(pol.to_dict()["tools"])
    with pytest.raises(ringfence.RingfenceError):
        with ringfence.Config(files=[f], agent="nobody") as cfg:
            cfg.policy()


def test_spawn_wait_kill(ws):
    with ringfence.Policy.from_settings({"workspace": str(ws)}) as pol, \
            pol.plan(["sleep", "30"]) as plan:
        with plan.spawn() as proc:
            assert proc.pid > 0
            proc.kill(signal.SIGKILL)
            st = proc.wait()
            assert st.signal == signal.SIGKILL


def test_guard(ws):
    with ringfence.Policy.from_settings({"workspace": str(ws)}) as pol, pol.guard() as g:
        assert g.check("ls -la").allowed
        v = g.check("rm -rf /")
        assert not v.allowed and v.result == "blocked_pattern" and v.message
        v = g.check("cat /etc/shadow")
        assert not v.allowed and v.result == "blocked_path"


def test_shell_plan(ws):
    with ringfence.Policy.from_settings({"workspace": str(ws)}) as pol, \
            pol.shell_plan("pwd") as plan:
        assert plan.run().stdout.strip() == str(ws)


def test_instance_create_use_open_remove(ws, rf_home, tmp_path):
    cred = tmp_path / "auth.json"
    cred.write_text('{"token": "t"}')
    os.chmod(cred, 0o644)
    with ringfence.Instance("py1", root=rf_home, credentials=[f"{cred}:data/auth.json"]) as inst:
        assert inst.name == "py1" and os.path.isdir(inst.dir)
        assert inst.to_dict()
        r = inst.run(["sh", "-c", 'echo "$HOME"; stat -c %a "$XDG_DATA_HOME/auth.json"; cat "$XDG_DATA_HOME/auth.json"'],
                     workspace=ws)
        assert r.exit_code == 0, r
        lines = r.stdout.splitlines()
        assert lines[1] == "600" and lines[2] == '{"token": "t"}'
        home = lines[0]
    with ringfence.Instance("py1", root=rf_home, create=False) as inst:
        r = inst.run(["sh", "-c", 'echo "$HOME"'], workspace=ws)
        assert r.stdout.strip() == home       # the same home again
    with pytest.raises(ringfence.RingfenceError):
        ringfence.Instance("py1", root=rf_home)      # exists
    ringfence.Instance.remove("py1", rf_home)
    with pytest.raises(ringfence.RingfenceError):
        ringfence.Instance("py1", root=rf_home, create=False)


def test_instance_stores_network_settings(ws, rf_home):
    net = {"allow_domains": ["example.com"], "publish": ["18090:8090"]}
    with ringfence.Instance("pynet", root=rf_home, network=net) as inst:
        n = inst.to_dict()["network"]
        assert n["mode"] == "allowlist" and n["allow_domains"] == ["example.com"], n
        assert n["publish"] == ["127.0.0.1:18090:8090"], n
        assert inst.to_dict()["identity"]["model"] in ("caller", "root-range")
    ringfence.Instance.remove("pynet", rf_home)


def test_ephemeral_instance_is_removed(ws, rf_home):
    with ringfence.Instance("eph", root=rf_home, ephemeral=True) as inst:
        d = inst.dir
        assert inst.run(["true"], workspace=ws).exit_code == 0
    assert not os.path.exists(d)


def test_instance_popen_long_running(ws, rf_home):
    r, w = os.pipe()
    with ringfence.Instance("srv", root=rf_home, ephemeral=True) as inst:
        proc = inst.popen(["sh", "-c", "echo ready; exec sleep 30"], stdout=w, workspace=ws)
        os.close(w)
        with proc, os.fdopen(r) as f:
            assert f.readline() == "ready\n"
            proc.terminate()
            st = proc.wait()
            assert not st.exited


def test_stream_yields_lines_while_the_command_runs(ws):
    # The command waits for a file we create only after its first line has
    # reached us: without streaming it would never see it and exit 1.
    script = ("echo first; i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
              "[ -e go ] && echo second && echo oops >&2 && printf tail")
    with ringfence.stream(script, workspace=ws) as s:
        it = iter(s)
        assert next(it) == ringfence.Output("stdout", "first\n")
        (ws / "go").touch()
        rest = list(it)
    assert ringfence.Output("stdout", "second\n") in rest
    assert ringfence.Output("stderr", "oops\n") in rest
    assert ringfence.Output("stdout", "tail") in rest
    assert s.result.exit_code == 0 and s.result.stdout is None


def test_stream_bytes_and_input(ws):
    with ringfence.stream(["cat"], workspace=ws, input=b"x\xffy\nz", text=False) as s:
        got = [o.data for o in s]
    assert got == [b"x\xffy\n", b"z"]
    assert s.result.exit_code == 0


def test_stream_left_early_kills_the_sandbox(ws):
    with ringfence.stream("echo up; exec sleep 60", workspace=ws) as s:
        pid = s.pid
        assert next(iter(s)).data == "up\n"
    assert s.result.signal == signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_stream_reports_exit_status(ws):
    with ringfence.stream("echo a; exit 3", workspace=ws) as s:
        assert [o.data for o in s] == ["a\n"]
    assert s.result.exit_code == 3


def test_status_names_backend_and_weakenings(ws):
    plain = ringfence.run(["true"], workspace=ws)
    assert isinstance(plain.backend, str) and plain.weakenings == []
    weak = ringfence.run(["true"], workspace=ws, network="host")
    assert any(w.startswith("network host") and "(asked for)" in w for w in weak.weakenings), weak.weakenings
