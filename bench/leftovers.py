#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a crowd of sandboxes left behind, counted by identity, not by totals.

  bench/leftovers.py before STATE DIR...   the host as it is: its namespaces,
                                           mounts, ringfence-* cgroups, the
                                           kernel's namespace slabs, the
                                           entries of each DIR (a `/` suffix:
                                           the whole tree, else one level and
                                           only our uid's)
  bench/leftovers.py during STATE PID...   the processes below each PID (and
                                           PID itself): their pids, their
                                           namespaces that are not the host's,
                                           the unix sockets they hold
  bench/leftovers.py check STATE           one line: what of it is still there

The machine is shared, so totals (lsns, /proc/net/unix) move with other
people's work; this looks for the very namespaces (inodes under /proc/*/ns
and namespace files held open under /proc/*/fd) and socket inodes ours had,
and for new entries only in the directories named (in /tmp, others of our
uid show up too: names are printed). The namespace slabs
(/proc/slabinfo, root only) are totals: a check on the kernel's side,
noisy on a shared machine. For bench/thousand.sh and bench/serve-inflight.sh.
"""
import json
import os
import re
import sys

NS_SLABS = ("net_namespace", "pid_namespace", "user_namespace", "uts_namespace", "nsproxy")
NS_LINK = re.compile(r"^(cgroup|ipc|mnt|net|pid|time|user|uts):\[(\d+)\]$")


def pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def links(pid, sub):
    """The targets of /proc/PID/SUB/* (ns or fd), those we may read."""
    d = f"/proc/{pid}/{sub}"
    try:
        names = os.listdir(d)
    except OSError:
        return []
    out = []
    for n in names:
        try:
            out.append(os.readlink(f"{d}/{n}"))
        except OSError:
            pass
    return out


def ns_inodes(targets):
    return {int(m.group(2)) for t in targets if (m := NS_LINK.match(t))}


def ticks_now():
    return int(float(open("/proc/uptime").read().split()[0]) * os.sysconf("SC_CLK_TCK"))


def host_namespaces(newer_than=None):
    """Every namespace a process shows or holds open, mounted ones too;
    with newer_than (clock ticks since boot), not those that only processes
    started later show: the kernel reuses a freed namespace's inode number
    for the next one made, by anyone."""
    seen = set()
    for p in pids():
        st = starttime(p) if newer_than is not None else None
        if st is None or int(st) <= newer_than:
            seen |= ns_inodes(links(p, "ns"))
        seen |= ns_inodes(links(p, "fd"))
    try:
        for line in open("/proc/self/mountinfo"):
            m = re.search(r" (?:cgroup|ipc|mnt|net|pid|time|user|uts):\[(\d+)\] ", line)
            if m:
                seen.add(int(m.group(1)))
    except OSError:
        pass
    return seen


def slabs():
    try:
        lines = open("/proc/slabinfo").read().splitlines()
    except OSError:
        return {}
    return {f[0]: int(f[1]) for f in (l.split() for l in lines) if f and f[0] in NS_SLABS}


def cgroups():
    out = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        if root.count("/") > 10:
            dirs[:] = []
        out += [f"{root}/{d}" for d in dirs if d.startswith("ringfence-")]
    return out


def owner(path):
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def entries(spec):
    d, deep = spec.rstrip("/"), spec.endswith("/")
    out = []
    if deep:
        for root, dirs, files in os.walk(d):
            out += [f"{root}/{n}" for n in dirs + files]
    else:
        try:  # a shared directory: only our uid's entries
            out = [f"{d}/{n}" for n in os.listdir(d) if owner(f"{d}/{n}") == os.getuid()]
        except OSError:
            pass
    return out


def unix_inodes():
    try:
        return {int(l.split()[6]) for l in open("/proc/net/unix").read().splitlines()[1:] if len(l.split()) > 6}
    except OSError:
        return set()


def starttime(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None


def before(state, dirs):
    s = {"host_ns": sorted(host_namespaces()), "mounts": len(open("/proc/self/mountinfo").readlines()),
         "cgroups": cgroups(), "slabs": slabs(), "dirs": dirs,
         "files": sorted(set().union(*[entries(d) for d in dirs])) if dirs else [],
         "procs": {}, "ns": [], "sockets": []}
    json.dump(s, open(state, "w"))


def during(state, roots):
    s = json.load(open(state))
    kids = {}
    for p in pids():
        try:
            ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        kids.setdefault(ppid, []).append(p)
    todo, tree = list(roots), []
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += kids.get(p, [])
    host = set(s["host_ns"])
    ns, socks = set(s["ns"]), set(s["sockets"])
    for p in tree:
        st = starttime(p)
        if st:
            s["procs"][str(p)] = st
        ns |= ns_inodes(links(p, "ns")) - host
        socks |= {int(t[8:-1]) for t in links(p, "fd") if t.startswith("socket:[")}
    s["ns"], s["sockets"], s["ticks"] = sorted(ns), sorted(socks), ticks_now()
    json.dump(s, open(state, "w"))


def holders(inode):
    """Who shows or holds namespace INODE: pid, command, how (ns or fd)."""
    out = []
    for p in pids():
        for how in ("ns", "fd"):
            for t in links(p, how):
                m = NS_LINK.match(t)
                if m and int(m.group(2)) == inode:
                    try:
                        comm = open(f"/proc/{p}/comm").read().strip()
                    except OSError:
                        comm = "?"
                    out.append(f"{p} {comm} ({how} {m.group(1)})")
    return ", ".join(out[:3]) or "a mount"


def check(state):
    s = json.load(open(state))
    procs = sum(1 for p, st in s["procs"].items() if starttime(int(p)) == st)
    ours = set(s["ns"])
    ns_left = ours & host_namespaces(s.get("ticks"))
    reused = len(ours & host_namespaces()) - len(ns_left)
    sock_left = set(s["sockets"]) & unix_inodes()
    mounts = len(open("/proc/self/mountinfo").readlines()) - s["mounts"]
    cg = sorted(set(cgroups()) - set(s["cgroups"]))
    files = sorted(set().union(*[entries(d) for d in s["dirs"]]) - set(s["files"])) if s["dirs"] else []
    now = slabs()
    slab = ", ".join(f"{k} {now[k] - v:+d}" for k, v in s["slabs"].items() if k in now)
    print(f"left: processes {procs} (of {len(s['procs'])}), namespaces {len(ns_left)} (of {len(ours)}; "
          f"{reused} numbers reused by newer processes), "
          f"unix sockets {len(sock_left)} (of {len(s['sockets'])}), mounts {mounts:+d}, "
          f"ringfence-* cgroups {len(cg)}, new files {len(files)}" + (f"; slab objects {slab}" if slab else ""))
    for i in sorted(ns_left)[:5]:
        print(f"  namespace {i}: held by {holders(i)}")
    for what, items in (("cgroup", cg), ("file", files)):
        for i in items[:5]:
            print(f"  {what}: {i}")


def main():
    cmd, state, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if cmd == "before":
        before(state, rest)
    elif cmd == "during":
        during(state, [int(p) for p in rest])
    else:
        check(state)


main()
