#!/usr/bin/env bash
# ringfence plan: one JSON object that says exactly what run would do.
. "$(dirname "$0")/../lib.sh"

expect_exit 0 "plan exits 0" rf plan --expose "$SCRATCH:/data:rw" --env A=1 --timeout 5 -- sh -c true
printf '%s' "$OUT" > "$SCRATCH/plan.json"
py() { python3 -c "import json,sys; p=json.load(open('$SCRATCH/plan.json')); $1"; }
check "plan is valid JSON" py 'pass'
check "backend native" py 'assert p["backend"]=="native"'
check "all namespaces" py 'assert set(p["namespaces"])>={"user","mount","pid","ipc","uts","net","cgroup"}'
check "network none" py 'assert p["network"]=="none"'
check "argv" py 'assert p["argv"]==["sh","-c","true"]'
check "exec resolved to an absolute path" py 'assert p["exec"].startswith("/") and p["exec"].endswith("/sh")'
check "cwd is the workspace" py "assert p['cwd']=='$WS'"
check "workspace bound rw" py "assert any(m['target']=='$WS' and m['mode']=='rw' and m['why']=='workspace' for m in p['mounts'])"
check "expose rule shown" py "assert any(m['source']=='$SCRATCH' and m['target']=='/data' and m['mode']=='rw' for m in p['mounts'] if m['type']=='bind')"
check "/usr read-only" py 'assert any(m["target"]=="/usr" and m["mode"]=="ro" for m in p["mounts"])'
check "fresh /proc" py 'assert any(m["type"]=="proc" and m["target"]=="/proc" for m in p["mounts"])'
check "/proc/sys read-only" py 'assert any(m["type"]=="remount-ro" and m["target"]=="/proc/sys" for m in p["mounts"])'
check "private /tmp" py 'assert any(m["type"]=="tmpfs" and m["target"]=="/tmp" for m in p["mounts"])'
check "no /etc/shadow" py 'assert not any(m["target"] in ("/etc/shadow","/etc/gshadow","/etc/sudoers","/etc/ssh") for m in p["mounts"])'
check "no /sys" py 'assert not any(m["target"]=="/sys" for m in p["mounts"])'
check "env has A=1" py 'assert "A=1" in p["env"]'
check "timeout shown" py 'assert p["limits"]["timeout_seconds"]==5'
check "identity shown" py 'assert "host_uid" in p["identity"]'
if is_root; then
    check "root maps to 65534, never host root" py 'assert p["identity"]["host_uid"]==65534 and "never host root" in p["identity"]["note"]'
else
    check "user maps to itself" py "assert p['identity']['host_uid']==$(id -u)"
fi
expect_exit 0 "network host shown" rf plan --network host -- true
contains "network host" "$OUT" '"network": "host"'
lacks "no net namespace with --network host" "$OUT" '"net"'
# Last rule per target wins.
mkdir -p "$SCRATCH/a" "$SCRATCH/b"
expect_exit 0 "two rules, one target" rf plan --expose "$SCRATCH/a:/t" --expose "$SCRATCH/b:/t:rw" -- true
printf '%s' "$OUT" > "$SCRATCH/plan.json"
check "last rule for a target wins" py "t=[m for m in p['mounts'] if m['target']=='/t']; assert len(t)==1 and t[0]['source']=='$SCRATCH/b' and t[0]['mode']=='rw'"
expect_exit 0 "plan runs nothing" rf plan -- sh -c "touch $WS/should-not-exist"
[ ! -e "$WS/should-not-exist" ] && pass "plan did not run the command" || fail "plan did not run the command"
expect_exit 125 "plan: bad input is an error too" rf plan --expose "$SCRATCH/none" -- true

# Issue 13 item 1: an absent .git/hooks (with .git present) gets a
# read-only placeholder; absent paths at the workspace's top do not, and the
# plan says so by name; once a path exists it is mounted read-only.
mkdir -p "$SCRATCH/absent/.git"
expect_exit 0 "plan in a workspace with .git but no hooks" rf plan --workspace "$SCRATCH/absent" -- true
printf '%s' "$OUT" > "$SCRATCH/plan.json"
check "absent .ringfence.json named in cannot, .git/hooks not (it gets a placeholder)" py "c=[x for x in p['cannot'] if 'do not exist' in x]; assert len(c)==1 and '.git/hooks' not in c[0] and '.ringfence.json' in c[0], c"
check "the absent .git/hooks has a placeholder mount" py "assert any(m['target'].endswith('/.git/hooks') and m.get('placeholder')=='directory' for m in p['mounts'])"
mkdir -p "$SCRATCH/absent/.git/hooks"
expect_exit 0 "plan once .git/hooks exists" rf plan --workspace "$SCRATCH/absent" -- true
printf '%s' "$OUT" > "$SCRATCH/plan.json"
check "an existing .git/hooks is no longer named absent" py "c=[x for x in p['cannot'] if 'do not exist' in x]; assert len(c)==1 and '.git/hooks,' not in c[0] and '.ringfence.json' in c[0], c"
check "... and is mounted read-only" py "assert any(m['target'].endswith('/.git/hooks') and m['why']=='protected' for m in p['mounts'])"

# A weaker switch asked for by name runs without a warning, but the plan,
# the status record and the audit trail's run.start list it, so a reviewer
# sees it without decoding the policy digest. Control: the default lists none.
expect_exit 0 "plan with the default policy" rf plan -- true
printf '%s' "$OUT" > "$SCRATCH/plan.json"
check "the default policy lists no weakening" py "assert p['weakenings']==[], p['weakenings']"
expect_exit 0 "plan with landlock and seccomp off" rf plan --landlock off --seccomp off -- true
printf '%s' "$OUT" > "$SCRATCH/plan.json"
check "... lists both as asked for" py "w=p['weakenings']; assert any(x.startswith('landlock off') for x in w) and any(x.startswith('seccomp off') for x in w) and all('(asked for)' in x for x in w), w"
expect_exit 0 "run with seccomp off" rf run --seccomp off --status-json "$SCRATCH/st.json" -- true
check "... the status record lists it" python3 -c "import json; w=json.load(open('$SCRATCH/st.json'))['weakenings']; assert [x for x in w if x.startswith('seccomp off')], w"
expect_exit 0 "the audit trail's run.start" rf audit show --json --event run.start
check "... lists it too" python3 -c "
import json,sys
last=[json.loads(l) for l in sys.argv[1].splitlines() if l.strip()][-1]
assert any(x.startswith('seccomp off') for x in last['weakenings']), last" "$OUT"
