#!/usr/bin/env python3
"""The kernel-log judge: one title per report of a bug in a guest's logs.

    kernel-log.py [--accel MODE] LOG...     print "N x TITLE" per kind of report

LOG is a console log (kernel messages and the job's output share ttyS0, so a
kernel line may start in the middle of a line of the job) or a kmsg log
(guest/kmsglog: every record of /dev/kmsg, at every level, one per line).
A report is found wherever a "[ seconds.micros] " stamp (with or without a
caller id after it, "[  T123]") is followed by one of the report forms
below; the same report seen in two logs (same stamp and title) counts once.
A log without the kernel's first line ("Linux version"), one whose first
line has no stamp (printk.time=0: no report could be found), or one that
says kmsglog lost records, cannot be judged.

Each title ends with where the report came: "(during NN-name)", the guest
test whose start and end (the lines "mig-test: start NN-name" and
"mig-test: end NN-name" that guest/tests/run.sh writes to /dev/kmsg) hold
its stamp, or that started last if it never ended; "(between tests)"; or
"(during boot)" before the first test started.

Exit status: 0 clean, 1 reports found, 2 the judge could not judge (no
verdict: a caller must not take it as clean).

A boot under multi-threaded TCG (--accel tcg) that died of a stale int3
(QEMU let a vCPU run an int3 that text_poke_bp() had already replaced: the
byte before the trapping address, <..> in the Code: line, is no longer
0xcc) has its logs judged up to that Oops; the Oops and what follows are
QEMU's, said in a first line "stale int3 (QEMU, not the kernel): ...", not
as a report. Under any other accelerator (tcg-single, icount, kvm), or
without --accel, that Oops is a report like any other.
"""
import bisect
import re
import sys

# "[   12.345678] ", or with the caller id of CONFIG_PRINTK_CALLER,
# "[   12.345678][  T123] "
STAMP = re.compile(r'\[ *(\d+\.\d+)\](?:\[ *[CT]\d+\])? ')
# guest/tests/run.sh's marks around each test
MARK = re.compile(r'mig-test: (start|end) (\S+)')

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
    # the comm may have spaces and colons ("jbd2/vda-8 x", "kworker/u8:3")
    (r'INFO: task (.+?):\d+ blocked for more than', r'hung task: \1'),
    (r'INFO: (\S+) (self-)?detected (expedited )?stall', r'RCU stall (\1)'),
    # 6.12: "watchdog: CPU1: Watchdog detected hard LOCKUP on cpu 0"
    (r'(CPU\d+: )?Watchdog detected hard LOCKUP', r'hard lockup'),
    (r'kmemleak: \d+ new suspected memory leaks', r'kmemleak: suspected memory leaks'),
    (r'kmemleak: (Cannot allocate|Kernel memory leak detector disabled)',
     r'kmemleak: \1 (leaks no longer checked)'),
    (r'ODEBUG: (Out of memory)', r'ODEBUG: \1 (objects no longer checked)'),
    (r'EXT4-fs error \(device (\S+)\)', r'EXT4-fs error on \1'),
    (r'Aborting journal on device (\S+)', r'journal aborted on \1'),
    (r'Buffer I/O error on dev (\S+)', r'Buffer I/O error on \1'),
    # the block layer's "I/O error, dev vdb, sector 2048 op 0x1:(WRITE) ..."
    (r'([\w/ ]+) error, dev ([^,\s]+), sector', r'\1 error on \2'),
    (r'EXT4-fs warning \(device (\S+)\): (\w+)', r'EXT4-fs warning on \1: \2'),
    (r'Page cache invalidation failure on direct I/O', r'Page cache invalidation failure on direct I/O'),
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
# What some reports start with: "watchdog: BUG: soft lockup", "rcu: INFO: ...",
# "NMI watchdog: Watchdog detected hard LOCKUP"
PREFIX = re.compile(r'((\w+ )?\w+: )(?=[A-Z])')
STALE_INT3 = re.compile(STAMP.pattern + r'Oops: int3')
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


def marks(lines):
    """(stamp, start|end, test) of the marks of guest/tests/run.sh in these lines."""
    return [(float(m.group(1)), k.group(1), k.group(2))
            for line in lines for m in STAMP.finditer(line)
            for k in [MARK.match(line, m.end())] if k]


def during(boot_marks, stamp):
    """Where a report stamped so came, from the sorted marks of its boot."""
    i = bisect.bisect_right(boot_marks, stamp, key=lambda mark: mark[0])
    if i == 0:
        return 'during boot'
    _, kind, test = boot_marks[i - 1]
    return f'during {test}' if kind == 'start' else 'between tests'


def reports(lines):
    """(stamp, title) of every report in these lines."""
    found = []
    last_report = None          # stamp of the last titled report
    previous = ''               # the kernel line before a stack dump
    for line in lines:
        for m in STAMP.finditer(line):
            stamp = float(m.group(1))
            text = line[m.end():]
            if MARK.match(text):
                continue
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
    accel = None
    if paths[:1] == ['--accel']:
        accel, paths = paths[1], paths[2:]
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
        first = next((line for line in logs[path][:50] if 'Linux version' in line), None)
        if first is None:
            print(f'kernel-log: {path} does not start with the kernel\'s first line',
                  file=sys.stderr)
            return 2
        if not STAMP.search(first):
            print(f'kernel-log: {path} has no printk stamps (printk.time=0?): '
                  'no report in it could be found', file=sys.stderr)
            return 2
    # Every log up to the stale int3, wherever it was seen whole: only under
    # multi-threaded TCG, whose race it is (docs/testbed.md).
    died = None
    if accel == 'tcg':
        died = next(filter(None, map(stale_int3, logs.values())), None)
    if died:
        print(f'stale int3 (QEMU, not the kernel): {died[1]}')
        logs = {path: until(lines, died[0]) for path, lines in logs.items()}
    tests = sorted(set(mark for lines in logs.values() for mark in marks(lines)))
    seen = {}
    for lines in logs.values():
        for stamp, title in reports(lines):
            seen.setdefault(f'{title} ({during(tests, stamp)})', set()).add(stamp)
    for title, stamps in sorted(seen.items(), key=lambda t: min(t[1])):
        print(f'{len(stamps)} x {title}')
    return 1 if seen else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
