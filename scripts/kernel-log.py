#!/usr/bin/env python3
"""The kernel-log judge: one title per report of a bug in a guest's logs.

    kernel-log.py LOG...     print "N x TITLE" per kind of report

LOG is a console log (kernel messages and the job's output share ttyS0, so a
kernel line may start in the middle of a line of the job) or a kmsg log
(guest/kmsglog: every record of /dev/kmsg, at every level, one per line).
A report is found wherever a "[ seconds.micros] " stamp is followed by one of
the report forms below; the same report seen in two logs (same stamp and
title) counts once.  A log without the kernel's first line ("Linux
version"), or one that says kmsglog lost records, cannot be judged.

Exit status: 0 clean, 1 reports found, 2 the judge could not judge (no
verdict: a caller must not take it as clean).

A boot that died of a stale int3 (QEMU's multi-threaded TCG let a vCPU run
an int3 that text_poke_bp() had already replaced: the byte before the
trapping address, <..> in the Code: line, is no longer 0xcc) has its logs
judged up to that Oops; the Oops and what follows are QEMU's, said in a
first line "stale int3 (QEMU, not the kernel): ...", not as a report.
"""
import re
import sys

STAMP = re.compile(r'\[ *(\d+\.\d+)\] ')

# (form, title): the first form that matches the text after a stamp makes the
# title of a report; \g<n> takes groups of the form.
REPORTS = [
    # WARN(): "WARNING: CPU: 1 PID: 42 at mm/migrate.c:123 func+0x1/0x2 [mod]"
    (r'WARNING: CPU: \d+ PID: \d+ at (\S+) ([^+ ]+)', r'WARNING at \1 \2'),
    (r'WARNING: (.*)', r'WARNING: \1'),        # lockdep, RCU, ...
    (r'BUG: KASAN: (\S+) in ([^+ ]+)', r'BUG: KASAN: \1 in \2'),
    (r'BUG: KFENCE: (\S+) in ([^+ ]+)', r'BUG: KFENCE: \1 in \2'),
    (r'BUG: (Bad page \w+)', r'BUG: \1'),
    (r'BUG: (soft lockup)', r'BUG: \1'),
    (r'BUG: (.*)', r'BUG: \1'),
    (r'BUG (\S+) \([^)]*\): (.*)', r'BUG \1: \2'),  # SLUB debug
    (r'kernel BUG at (\S+)!', r'kernel BUG at \1'),
    (r'UBSAN: (\S+) in (\S+)', r'UBSAN: \1 in \2'),
    (r'Oops: (.*?): ', r'Oops: \1'),
    (r'Internal error: (.*?): ', r'Internal error: \1'),          # arm64
    (r'Unable to handle kernel (.*?) at virtual address', r'Unable to handle kernel \1'),
    (r'general protection fault', r'general protection fault'),
    (r'Kernel panic - not syncing: (.*)', r'Kernel panic: \1'),
    (r'INFO: task (\S+?):\d+ blocked for more than', r'hung task: \1'),
    (r'INFO: (\S+) (self-)?detected (expedited )?stall', r'RCU stall (\1)'),
    (r'Watchdog detected hard LOCKUP', r'hard lockup'),
    (r'kmemleak: \d+ new suspected memory leaks', r'kmemleak: suspected memory leaks'),
    (r'kmemleak: (Cannot allocate|Kernel memory leak detector disabled)',
     r'kmemleak: \1 (leaks no longer checked)'),
    (r'ODEBUG: (Out of memory)', r'ODEBUG: \1 (objects no longer checked)'),
    (r'EXT4-fs error \(device (\S+)\)', r'EXT4-fs error on \1'),
    (r'Aborting journal on device (\S+)', r'journal aborted on \1'),
    (r'Buffer I/O error on dev (\S+)', r'Buffer I/O error on \1'),
    (r'Out of memory: Killed process \d+ \((\S+)\)', r'OOM kill of \1'),
    (r'(\S+)\[\d+\]: segfault at', r'segfault of \1'),
    (r'(\S+)\[\d+\]: unhandled exception: ', r'segfault of \1'),    # arm64
    (r'kmsglog: \d+ records lost', r'kmsglog lost records (the log is incomplete)'),
    (r'list_(add|del) corruption', r'list_\1 corruption'),
    (r'Call [Tt]race:', None),  # a stack (arm64: "Call trace:"): part of the report before it, if any
]
REPORTS = [(re.compile(form), title) for form, title in REPORTS]
# A stack dump within this many seconds of a report belongs to it.
STACK_OF_REPORT = 5.0

NUMBERS = re.compile(r'0x[0-9a-f]+|(?<![A-Za-z0-9])\d+')
SOURCE = re.compile(r'\S+\.[chS]:\d+(:\d+)?')   # file:line, kept as it is
# What some reports start with: "watchdog: BUG: soft lockup", "rcu: INFO: ..."
PREFIX = re.compile(r'(\w+: )(?=[A-Z])')
STALE_INT3 = re.compile(r'\[ *(\d+\.\d+)\] Oops: int3')
# What dump_stack() prints before a stack: not what the stack is about.
DUMP_HEADER = re.compile(r'(CPU: \d+ |Hardware name: |Tainted: |<TASK>|</TASK>|'
                         r'Workqueue: |Call [Tt]race:| )')
CODE_BEFORE_TRAP = re.compile(r' Code: .* ([0-9a-f]{2}) <([0-9a-f]{2})>')


def normal(text):
    """Numbers (CPU, PID, pfn, seconds) differ from one report of a bug to
    the next: one title for one kind of report.  Source lines stay."""
    return ' '.join(w if SOURCE.fullmatch(w) else NUMBERS.sub('N', w)
                    for w in text.split())


def title_of(text):
    """The title of the report this text starts, "" for a stack dump, or None."""
    p = PREFIX.match(text)
    for form, title in REPORTS:
        m = form.match(text) or (p and form.match(text, p.end()))
        if m:
            if title is None:
                return ''
            return normal(m.expand(title))
    return None


def stale_int3(lines):
    """(stamp, text) of the Oops of a stale int3 in these lines, or None."""
    for i, line in enumerate(lines):
        m = STALE_INT3.search(line)
        if m:
            for code in lines[i:i + 60]:
                c = CODE_BEFORE_TRAP.search(code)
                if c:
                    if c.group(1) == 'cc':
                        return None
                    return float(m.group(1)), line[line.find('Oops'):].strip()
            return None
    return None


def until(lines, stamp):
    """The lines before the first one stamped at or after stamp."""
    for i, line in enumerate(lines):
        m = STAMP.search(line)
        if m and float(m.group(1)) >= stamp:
            return lines[:i]
    return lines


def reports(lines):
    """(stamp, title) of every report in these lines."""
    found = []
    last_report = None          # stamp of the last titled report
    previous = ''               # the kernel line before a stack dump
    for line in lines:
        for m in STAMP.finditer(line):
            stamp = float(m.group(1))
            text = line[m.end():]
            title = title_of(text)
            if title == '':
                if last_report is None or stamp - last_report > STACK_OF_REPORT:
                    found.append((stamp, 'stack dump after: ' +
                                  normal(previous)[:80]))
                    last_report = stamp
            elif title is not None:
                found.append((stamp, title))
                last_report = stamp
            elif not DUMP_HEADER.match(text):
                previous = text.strip()
    return found


def main(paths):
    if not paths:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    logs = {}
    for path in paths:
        try:
            with open(path, errors='replace') as f:
                logs[path] = f.read().split('\n')
        except OSError as e:
            print(f'kernel-log: cannot read {path}: {e.strerror}', file=sys.stderr)
            return 2
        if not any('Linux version' in line for line in logs[path][:50]):
            print(f'kernel-log: {path} does not start with the kernel\'s first line',
                  file=sys.stderr)
            return 2
    # Every log up to the stale int3, wherever it was seen whole.
    died = next(filter(None, map(stale_int3, logs.values())), None)
    if died:
        print(f'stale int3 (QEMU, not the kernel): {died[1]}')
    seen = {}
    for lines in logs.values():
        for stamp, title in reports(until(lines, died[0]) if died else lines):
            seen.setdefault(title, set()).add(stamp)
    for title, stamps in sorted(seen.items(), key=lambda t: min(t[1])):
        print(f'{len(stamps)} x {title}')
    return 1 if seen else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
