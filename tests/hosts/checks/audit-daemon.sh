# SPDX-License-Identifier: LGPL-2.1-or-later
# Host debian12-root: the system audit log as the package sets it up, under
# systemd as pid 1: debian/'s socket unit and its hardened service
# (ProtectSystem=strict, no capabilities, PrivateTmp...), started on the
# first record by socket activation, a managed boundary that requires it,
# root's and alice's records stamped with their own uids, alice unable to
# read the log, and a run refused once the daemon is gone. The guest's disk
# is a snapshot: /etc and /usr/local are put back as they were at the end
# anyway, since later checks of this host run in the same boot.
. "$(dirname "$0")/lib.bash"

if [ "$(id -u)" != 0 ] || [ ! -d /run/systemd/system ]; then
    skip "the system audit daemon under systemd" "needs root and systemd as pid 1"
    exit 0
fi
src=${RF_SOURCE_DIR:?}/debian
bin=/usr/local/bin/ringfence
units=/etc/systemd/system
boundary=/etc/ringfence/managed.yaml
check "control: no managed boundary on this host yet" test ! -e "$boundary"
cleanup() {
    systemctl stop ringfence-audit.socket ringfence-audit.service 2>/dev/null
    rm -rf "$units/ringfence-audit.socket" "$units/ringfence-audit.service" \
        "$units/ringfence-audit.service.d" "$boundary" "$bin"
    systemctl daemon-reload
}
# shellcheck disable=SC2064 # lib.sh's own exit trap, kept after ours
trap "cleanup; $(trap -p EXIT | sed "s/^trap -- '//; s/' EXIT\$//")" EXIT

# The package's units as shipped; only ExecStart points at this build (the
# stage lies in /tmp, which the service's PrivateTmp hides: /usr/local).
install -m 755 "$RINGFENCE" "$bin"
cp "$src/ringfence-audit.socket" "$src/ringfence-audit.service" "$units/"
mkdir -p "$units/ringfence-audit.service.d"
printf '[Service]\nExecStart=\nExecStart=%s audit-daemon\n' "$bin" >"$units/ringfence-audit.service.d/build.conf"
systemctl daemon-reload
check "the socket unit starts" systemctl start ringfence-audit.socket
check "...and listens at /run/ringfence/audit.sock" test -S /run/ringfence/audit.sock
check "control: the service itself is not running yet (started on demand)" \
    sh -c '! systemctl is-active --quiet ringfence-audit.service'

mkdir -p /etc/ringfence
printf 'system_audit: { required: true }\n' >"$boundary"
chmod 644 "$boundary"
token="rf-sysaudit-$$-$RANDOM"
expect_exit 0 "root's run with the system log required" rf run -- echo "root-$token"
check "the socket started the hardened service" systemctl is-active --quiet ringfence-audit.service
alice_ws=$(runuser -u alice -- mktemp -d)
expect_exit 0 "alice's run with the system log required" \
    runuser -u alice -- env -u RINGFENCE_HOME "$RINGFENCE" run --workspace "$alice_ws" -- echo "alice-$token"

expect_exit 0 "audit show --system --json" "$RINGFENCE" audit show --system --json
printf '%s' "$OUT" >"$SCRATCH/sys.jsonl"
uid_of() { # the peer uid of the run.start whose command ends with $1
    python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("event") == "run.start" and r.get("command", [""])[-1] == sys.argv[2]:
        print(r["peer"]["uid"])' "$SCRATCH/sys.jsonl" "$1" | head -1
}
is "root's run.start is in the system log, stamped uid 0" "$(uid_of "root-$token")" 0
is "alice's run.start is in the system log, stamped her uid" "$(uid_of "alice-$token")" "$(id -u alice)"
expect_exit 0 "audit verify --system: the chain holds" "$RINGFENCE" audit verify --system
is "the log is root's, mode 0600" "$(stat -c '%U %a' /var/log/ringfence/audit.log)" "root 600"
check "alice cannot read the system log" sh -c '! runuser -u alice -- cat /var/log/ringfence/audit.log 2>/dev/null'

systemctl stop ringfence-audit.socket ringfence-audit.service
check "control: the daemon is stopped" sh -c '! systemctl is-active --quiet ringfence-audit.service'
expect_exit 125 "with the daemon gone, a required system log refuses the run" rf run -- true
contains "...naming the socket" "$ERR" "/run/ringfence/audit.sock"
contains "...and how to start it" "$ERR" "systemctl enable --now ringfence-audit.socket"
