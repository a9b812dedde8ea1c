#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where a sandbox start's CPU goes, by process of its tree and by kind of work.

Reads `perf script` output of a system-wide recording (no inherited
counters: those make every fork of the measured tree slower) made with the
fork and exec tracepoints, follows the process tree down from each exec of
ROOT (the tool's binary name), and charges each cpu-clock sample to its
process (named by its place in the tree: caller, caller.0, caller.1.0, ...)
and to the outermost kernel entry on its stack (a system call, a page
fault) or, for user-space samples, to the object it ran in.

  perf record -a -F 10000 -g -e cpu-clock -e sched:sched_process_fork \\
      -e sched:sched_process_exec -o rf.data -- loop.sh
  perf script -i rf.data -F comm,pid,tid,event,trace,ip,sym,dso > rf.txt
  bench/cpu-by-process.py rf.txt ringfence 200 10000 sh

(the loop as a script of its own, named there instead of sh, keeps another
shell's runs of the same tool on the machine out of the count).

Samples are CPU time of the tree's processes only (other processes on the
machine are left out); sampling itself inflates them by some per cent,
alike for every tool. For notes, never for pass/fail.
"""
import collections
import re
import sys

ENTRY = re.compile(r' (__x64_sys_\w+|__do_sys_\w+|exc_page_fault|ret_from_fork\w*)( |$)')
HEAD = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+(\S+):\s*(.*)')


def kind(entry):
    """The table's row for one sample's outermost entry."""
    e = entry.replace('__x64_sys_', '').replace('__do_sys_', '')
    if e == 'execve' or entry.startswith('user:ld-linux'):
        return 'exec and the dynamic loader'
    if e == 'exc_page_fault':
        return 'page faults'
    if e in ('exit_group', 'exit'):
        return 'exit (address space, namespaces torn down)'
    if e in ('clone', 'clone3', 'unshare', 'setns') or e.startswith('ret_from_fork'):
        return 'clone, unshare (processes, namespaces)'
    if re.search(r'mount|open_tree|fsconfig|fsopen|pivot_root|mkdirat|symlinkat|mknodat', e):
        return 'mounts and mount points'
    if entry.startswith('user:'):
        return 'user space (the program, libc)'
    if entry.startswith('kernel:'):
        return 'kernel, outside a system call (scheduler, interrupts)'
    return 'other system calls'


def main():
    path, root = sys.argv[1], sys.argv[2]
    starts, hz = int(sys.argv[3]), int(sys.argv[4])
    loop = sys.argv[5]  # the name the loop's script ran as: others' runs of root are left out
    parent, kids, execd = {}, collections.defaultdict(list), {}

    def role(tid):
        """The sampled process's place in a tree under an exec of root, now
        (pids are reused: the state is kept as of this sample)."""
        steps, cur = [], tid
        while cur in parent and execd.get(cur) != root:
            steps.append(kids[parent[cur]].index(cur))
            cur = parent[cur]
        if execd.get(cur) != root or execd.get(parent.get(cur)) != loop:
            return None
        name = 'caller' + ''.join('.%d' % i for i in reversed(steps))
        return name + ('(%s)' % execd[tid] if execd.get(tid, root) != root else '')

    by_role, by_kind = collections.Counter(), collections.Counter()
    for block in open(path).read().split('\n\n'):
        lines = block.strip('\n').split('\n')
        m = HEAD.match(lines[0]) if lines else None
        if not m:
            continue
        tid, event, trace = int(m.group(3)), m.group(4), m.group(5)
        if event == 'sched:sched_process_fork':
            child = int(re.search(r'child_pid=(\d+)', trace).group(1))
            parent[child] = tid
            kids[tid].append(child)
            kids[child] = []
            execd.pop(child, None)
        elif event == 'sched:sched_process_exec':
            execd[tid] = re.search(r'filename=(\S+)', trace).group(1).split('/')[-1]
        elif event.startswith('cpu-clock'):
            r = role(tid)
            if not r:
                continue
            entry = None
            for frame in lines[1:]:  # innermost first: keep the outermost match
                e = ENTRY.search(frame)
                entry = e.group(1) if e else entry
            if entry is None:
                first = lines[1] if len(lines) > 1 else ''
                d = re.search(r'\(([^)]*)\)\s*$', first)
                obj = d.group(1).split('/')[-1] if d else '?'
                entry = ('kernel:' if 'kernel' in obj else 'user:') + obj
            by_role[r] += 1
            by_kind[kind(entry)] += 1

    ms = 1000.0 / hz / starts
    print('%s: %.2f ms of CPU a start (%d starts)' % (root, sum(by_role.values()) * ms, starts))
    for r, n in by_role.most_common():
        print('  %-54s %6.2f ms' % (r, n * ms))
    for k, n in by_kind.most_common():
        print('  %-54s %6.2f ms' % (k, n * ms))


if __name__ == '__main__':
    main()
