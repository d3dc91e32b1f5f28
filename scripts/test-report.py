#!/usr/bin/env python3
"""make test's verdict: the boots' KTAP as one document, which the kernel's
own KTAP parser (tools/testing/kunit/kunit_parser.py) reads back.

    test-report.py --kunit DIR --results DIR --skips FILE [--arch ARCH] [--harness KTAP] JUDGE_KTAP BOOT...

JUDGE_KTAP is the judge's self-test (scripts/test-judge.sh), KTAP of
--harness that of the runner and the report (scripts/test-harness.sh);
each BOOT is
the name of a boot of scripts/test.sh, whose files in the results directory
are NAME.out (the guest's KTAP, guest/tests/run.sh), NAME.reports (the
kernel-log judge's verdict, scripts/run-guest.sh) and NAME.boot (the tests
it was to run, its accelerator, how it ended, the boot that ran again what
it had not).

Writes test.ktap: the self-tests, then each boot with its tests (and
their sub-checks), "guest finished its job" and "kernel log clean".  A
kernel report that the judge found during a test ("... (during NN-name)")
fails that test as well as "kernel log clean".  Prints
the failures with their failing sub-checks and kernel report titles and,
last, "N passed, N failed[, N skipped]" over the top-level results of the
boots, each self-test counting as one.  A skip, of a test or of a sub-check
(TEST/SUB-CHECK), fails unless the skips file allows it (a pattern after
"[ARCH] " on the guest architecture ARCH only, x86_64 or arm64: --arch, or
for a BOOT in a subdirectory of the results, DIR/NAME, the part of DIR
before its first '-', as arm64-4k/test of make test); the harness's own
skips (tests a stale int3 of QEMU, an early-boot hang or a crash of QEMU
kept from running, run again in a retry boot) are allowed, in a boot under
multi-threaded TCG (accel=tcg) only: under any other accelerator those
deaths fail.  test.json has the summary and the
tree as the kernel's parser read it (test.parse.log: its account), and
the records a dashboard takes (KernelCI's kcidb schema, its field names):
"run" (id, origin, start time, the kernel's and the testbed's commits,
--commit and --testbed-commit) and "tests", one per self-test, test and
sub-check: id, origin, build_id, a dot-separated path (boot.test[.sub-check],
each name with its dots and spaces made '_'), status (PASS, FAIL, SKIP,
ERROR for a test past its time limit, MISS for one that did not report),
start_time and duration (a test's, from its "# start=" and "# time="
lines; a sub-check has its test's start), architecture
(environment.misc.arch), kernel_commit.  Exit status 1 on a failure.
"""
import argparse
import datetime
import fnmatch
import json
import os
import re
import signal
import sys

RESULT = re.compile(r'^(\s*)(not ok|ok) (\d+) ([^#]*?)\s*(?:# (.*))?$')
DURING = re.compile(r' \(during (\S+)\)$')     # a kernel report's test
CONTROL = re.compile(r'[\x00-\x08\x0b-\x1f\x7f]')
START = re.compile(r'^# start=(\S+)$')      # guest/tests/run.sh's, per test
TIME = re.compile(r'^# time=(\d+)s$')
INDENT = '    '


def read_lines(path):
    """The lines of a file, '\n' only; other control characters (a test's
    carriage returns) would let a reader split a line in two."""
    with open(path, errors='replace') as f:
        return [CONTROL.sub(' ', l) for l in f.read().split('\n')]


class Result:
    """A top-level result of a boot, with what the summary needs."""
    def __init__(self, name, ok, why='', block=(), harness_skip=False, reports=()):
        self.name, self.ok, self.why = name, ok, why
        self.block = list(block)            # its nested KTAP and diagnostics
        self.skip = ok and why.startswith('SKIP')
        self.harness_skip = harness_skip
        self.reports = list(reports)        # kernel reports that fail it
        # when it started and how long it ran (guest/tests/run.sh)
        self.start = self.duration = None
        for l in self.block:
            if START.match(l):
                self.start = START.match(l).group(1)
            elif TIME.match(l):
                self.duration = int(TIME.match(l).group(1))
        # the sub-checks that failed or skipped: (ok, name, directive)
        self.subs = [(m.group(2) == 'ok', m.group(4), m.group(5) or '')
                     for m in map(RESULT.match, self.block) if m and m.group(1)]

    def blame(self, reports):
        """The kernel made these reports while the test ran: it fails."""
        why = 'the kernel reported during it'
        self.why = f'{self.why}; {why}' if self.why and not self.skip else why
        self.ok = self.skip = self.harness_skip = False
        self.block += ['# ' + r for r in reports]
        self.reports = reports

    def line(self, i):
        return f'{"ok" if self.ok else "not ok"} {i} {self.name}' + \
            (f' # {self.why}' if self.why else '')


def guest_results(path):
    """The guest's top-level results by number: (name, ok, why, block)."""
    found, block = {}, []
    try:
        lines = read_lines(path)
    except OSError:
        return found
    for line in lines:
        m = RESULT.match(line)
        if m and not m.group(1):
            found.setdefault(int(m.group(3)),
                             (m.group(4), m.group(2) == 'ok', m.group(5) or '', block))
            block = []
        elif not line.startswith(('KTAP version', '1..')):
            block.append(line)
    return found


def boot_results(results, name):
    """The top-level results of one boot."""
    meta = {}
    with open(os.path.join(results, name + '.boot')) as f:
        for line in f:
            key, _, value = line.rstrip('\n').partition('=')
            meta[key] = value
    try:
        reports = [r for r in read_lines(os.path.join(results, name + '.reports'))
                   if r.strip()]
    except OSError:
        reports = ['the kernel logs were not judged']
    # the emulator's deaths are excused under multi-threaded TCG only
    mttcg = meta.get('accel') == 'tcg'
    int3 = [r for r in reports if r.startswith('stale int3')] if mttcg else []
    reports = [r for r in reports if r not in int3]
    retry = meta.get('retry')
    # an early-boot hang (before init) or a crash of QEMU is the emulator's,
    # like a stale int3, as long as the console up to it is clean
    ended = meta.get('ended', '')
    emulator = mttcg and ended.startswith(('stopped before its init started',
                                           'was lost to a QEMU crash'))
    if emulator and not reports:
        int3 = [ended]
    blamed = {}
    for r in reports:
        m = DURING.search(r)
        if m:
            blamed.setdefault(m.group(1), []).append(r)
    reported = guest_results(os.path.join(results, name + '.out'))
    out = []
    for i, test in enumerate(meta.get('tests', '').split(), 1):
        got = reported.get(i)
        if got and got[0] == test:
            out.append(Result(test, got[1], got[2], got[3]))
        elif int3 and retry and test not in blamed:
            why = ended if emulator else 'died of a stale int3 (QEMU TCG)'
            out.append(Result(test, True, f'SKIP the guest {why}; run again in {retry}',
                              harness_skip=True))
        else:
            out.append(Result(test, False, 'did not report: the guest died, '
                              'stalled or timed out'))
        if test in blamed:
            out[-1].blame(blamed[test])
    if int3:
        out.append(Result('guest finished its job', True, f'SKIP {int3[0]}; ' +
                          (f'the tests it had not run went to {retry}' if retry
                           else 'it was not run again'), harness_skip=True))
    else:
        out.append(Result('guest finished its job', 'finished' in meta,
                          '' if 'finished' in meta else meta.get('ended', '')))
    out.append(Result('kernel log clean', not reports, '',
                      ['# ' + r for r in reports], reports=reports))
    return out


def subtest(name, results):
    """KTAP lines of a test made of these results (indented one level)."""
    lines = ['KTAP version 1', f'# Subtest: {name}', f'1..{len(results)}']
    for i, r in enumerate(results, 1):
        lines += r.block + [r.line(i)]
    return [INDENT + l if l else l for l in lines]


def parse(doc, kunit, log_path, seconds=60):
    """The kernel's parser's tree of the document (None if it got stuck)."""
    sys.path.insert(0, kunit)
    import kunit_parser
    import kunit_printer

    def stuck(*_):
        raise TimeoutError
    signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        with open(log_path, 'w') as log:
            kunit_parser.stdout = kunit_printer.Printer(log)
            return kunit_parser.parse_run_tests(doc)
    except TimeoutError:
        return None
    finally:
        signal.alarm(0)


def component(name):
    """A name as one component of a dot-separated path (kcidb's): no dots,
    no spaces."""
    return re.sub(r'[^A-Za-z0-9_+-]+', '_', name).strip('_') or '_'


def status(r, failed):
    """kcidb's status of a top-level result that the summary counts as
    failed or not."""
    if not failed:
        return 'SKIP' if r.skip else 'PASS'
    if r.why.startswith('TIMEOUT'):
        return 'ERROR'
    if r.why.startswith('did not report'):
        return 'MISS'
    return 'FAIL'


class Records:
    """test.json's records of each test and sub-check, as a dashboard
    (KernelCI's kcidb) takes them: unique ids, origin, a dot-separated
    path, status, start time, duration, architecture, kernel commit."""
    def __init__(self, origin, run, commit):
        self.origin, self.run, self.commit = origin, run, commit
        self.tests, self.paths = [], set()

    def add(self, path, st, arch, name, start=None, duration=None, why=''):
        base, i = path, 1
        while path in self.paths:       # two sub-checks of one name
            i += 1
            path = f'{base}_{i}'
        self.paths.add(path)
        t = {'id': f'{self.origin}:{self.run}:{arch}:{path}', 'origin': self.origin,
             'build_id': f'{self.origin}:{self.run}:{arch}', 'path': path,
             'status': st, 'start_time': start, 'duration': duration,
             'environment': {'misc': {'arch': arch}}, 'kernel_commit': self.commit,
             'misc': {'name': name}}
        if why:
            t['misc']['why'] = why
        self.tests.append(t)

    def result(self, prefix, r, st, arch):
        path = f'{prefix}.{component(r.name)}'
        self.add(path, st, arch, r.name, r.start, r.duration, r.why)
        for ok, sub, why in r.subs:
            sst = 'SKIP' if why.startswith('SKIP') else 'PASS' if ok else 'FAIL'
            self.add(f'{path}.{component(sub)}', sst, arch, sub, r.start)


def tree_json(test):
    return {'name': test.name, 'status': test.status.name, 'log': test.log,
            'subtests': [tree_json(t) for t in test.subtests]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kunit', required=True)
    ap.add_argument('--results', required=True)
    ap.add_argument('--skips', required=True)
    ap.add_argument('--arch', default='x86_64')
    ap.add_argument('--harness')
    ap.add_argument('--origin', default='migtestbed')
    ap.add_argument('--commit', default=None, help='the kernel tree\'s commit')
    ap.add_argument('--testbed-commit', default=None)
    ap.add_argument('judge')
    ap.add_argument('boots', nargs='*')
    a = ap.parse_args()

    # "[ARCH] PATTERN" allows a skip on that architecture only
    patterns = []
    with open(a.skips) as f:
        for p in (l.split('#')[0].strip() for l in f):
            m = re.match(r'\[(\w+)\]\s*(.*)', p)
            arch, p = (m.group(1), m.group(2)) if m else (None, p)
            if p:
                patterns.append((arch, p))

    def allowed(name, arch):
        return any(fnmatch.fnmatchcase(name, p) for a, p in patterns
                   if a in (None, arch))

    selftests = [('kernel-log judge', a.judge)] + \
        ([('harness', a.harness)] if a.harness else [])
    doc = ['KTAP version 1', f'1..{len(selftests) + len(a.boots)}']
    passed = failed = skipped = 0
    failures, skips = [], []
    started = datetime.datetime.now(datetime.timezone.utc)
    run = started.strftime('%Y%m%dT%H%M%SZ') + (f'-{a.commit[:12]}' if a.commit else '')
    records = Records(a.origin, run, a.commit)
    for n, (name, path) in enumerate(selftests, 1):
        lines = read_lines(path)
        ok = any(l.startswith('# ') and ' 0 failed' in l for l in lines) and \
            not any(RESULT.match(l) and l.startswith('not ok') for l in lines)
        doc += [INDENT + l for l in lines[:1] + [f'# Subtest: {name}'] + lines[1:] if l]
        doc.append(f'{"ok" if ok else "not ok"} {n} {name}')
        records.add(f'selftest.{component(name)}', 'PASS' if ok else 'FAIL', 'host', name)
        if ok:
            passed += 1
        else:
            failed += 1
            bad = [l for l in lines if l.startswith('not ok')]
            ran = sum(1 for l in lines if RESULT.match(l))
            failures.append(f'{name}: its self-test fails (results/{os.path.basename(path)}): ' +
                            ('; '.join(bad) if bad else f'it stopped after {ran} cases'))
    for n, boot in enumerate(a.boots, len(selftests) + 1):
        results = boot_results(a.results, boot)
        arch = boot.split('/')[0].split('-')[0] if '/' in boot else a.arch
        boot_ok = True
        for r in results:
            name = f'{boot}/{r.name}'
            bad = [f'failed: {s}' for ok, s, why in r.subs if not ok] + \
                [f'skipped, not allowed: {s}' for ok, s, why in r.subs
                 if ok and why.startswith('SKIP') and not allowed(f'{r.name}/{s}', arch)]
            if r.skip and (r.harness_skip or allowed(r.name, arch)) and not bad:
                skipped += 1
                skips.append(f'{name} ({r.why})')
                records.result(component(boot), r, status(r, False), arch)
            elif r.ok and not r.skip and not bad:
                passed += 1
                records.result(component(boot), r, status(r, False), arch)
            else:
                failed += 1
                records.result(component(boot), r, status(r, True), arch)
                boot_ok = False
                why = 'skipped, and no skip of it is allowed (guest/tests/skips): ' \
                    if r.skip else ''
                failures.append(f'{name} ({why}{r.why})' if r.why else name)
                failures += ['  ' + b for b in bad]
                failures += ['  ' + report for report in r.reports]
        doc += subtest(boot, results)
        doc.append(f'{"ok" if boot_ok else "not ok"} {n} {boot}')

    ktap = os.path.join(a.results, 'test.ktap')
    with open(ktap, 'w') as f:
        f.write('\n'.join(doc) + '\n')
    tree = parse(doc, a.kunit, os.path.join(a.results, 'test.parse.log'))
    if tree is None:
        failed += 1
        failures.append('the kernel\'s KTAP parser got stuck on results/test.ktap')
    with open(os.path.join(a.results, 'test.json'), 'w') as f:
        json.dump({'summary': {'passed': passed, 'failed': failed, 'skipped': skipped},
                   'failures': failures, 'skips': skips,
                   'run': {'id': f'{a.origin}:{run}', 'origin': a.origin,
                           'start_time': started.isoformat(timespec='seconds'),
                           'kernel_commit': a.commit, 'testbed_commit': a.testbed_commit},
                   'tests': records.tests,
                   'tree': tree_json(tree) if tree else None}, f, indent=1)

    print(f'results: {os.path.relpath(ktap)} (KTAP), test.json')
    for s in skips:
        print(f'skipped: {s}')
    for s in failures:
        print(s if s.startswith('  ') else f'not ok: {s}')
    summary = f'{passed} passed, {failed} failed'
    if skipped:
        summary += f', {skipped} skipped'
    print(summary)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
