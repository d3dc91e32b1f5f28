#!/usr/bin/env python3
"""make test's verdict: the boots' KTAP as one document, parsed with the
kernel's own KTAP parser (tools/testing/kunit/kunit_parser.py).

    test-report.py --kunit DIR --results DIR --skips FILE JUDGE_KTAP BOOT...

JUDGE_KTAP is the judge's self-test (scripts/test-judge.sh); each BOOT is
the name of a boot of scripts/test.sh, whose files in the results directory
are NAME.out (the guest's KTAP, guest/tests/run.sh), NAME.reports (the
kernel-log judge's verdict, scripts/run-guest.sh) and NAME.boot (the tests
it was to run, how it ended).  Writes test.ktap (the document), test.json
(the parsed tree) and test.parse.log (the parser's own account); prints the
failures, the kernel reports and, last, "N passed, N failed[, N skipped]"
over the top-level results of each boot.  A skip that the skips file does
not allow is a failure.  Exit status 1 if anything failed.
"""
import argparse
import fnmatch
import json
import os
import re
import sys

RESULT = re.compile(r'^(not ok|ok) (\d+) ([^#]*?)\s*(#.*)?$')
INDENT = '    '


def boot_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip('\n').partition('=')
            meta[key] = value
    return meta


def guest_results(path):
    """The guest's top-level results: {test: (result line, lines before it)}."""
    found, block = {}, []
    try:
        with open(path, errors='replace') as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        m = RESULT.match(line)
        if m:
            found[m.group(3)] = (line, block)
            block = []
        elif line.startswith(('KTAP version', '1..')):
            continue
        else:
            block.append(line)
    return found


def boot_block(results, name, why):
    """The KTAP lines of one boot, as a subtest of the whole run; why gets
    the directive of each of its results, which the parser does not keep."""
    meta = boot_meta(os.path.join(results, name + '.boot'))
    tests = meta.get('tests', '').split()
    reported = guest_results(os.path.join(results, name + '.out'))
    try:
        with open(os.path.join(results, name + '.reports')) as f:
            reports = [r for r in f.read().splitlines() if r.strip()]
    except OSError:
        reports = ['the kernel logs were not judged']
    int3 = [r for r in reports if r.startswith('stale int3')]
    reports = [r for r in reports if not r.startswith('stale int3')]
    retry = meta.get('retry', '')

    out = [f'# Subtest: {name}', f'# {meta.get("ended", "")}']
    lines = []

    def result(i, test, ok, directive=''):
        why[(name, test)] = directive
        lines.append(f'{"ok" if ok else "not ok"} {i} {test}' +
                     (f' # {directive}' if directive else ''))
    for i, test in enumerate(tests, 1):
        if test in reported:
            line, block = reported[test]
            m = RESULT.match(line)
            lines.extend(block)
            result(i, test, m.group(1) == 'ok', (m.group(4) or '#')[1:].strip())
        elif int3:
            # The harness's own skip: not for the allow-list to decide.
            result(i, test, True, f'SKIP the guest died of a stale int3 '
                   f'(QEMU TCG); run again in {retry}')
            why[(name, test, 'harness')] = True
        else:
            result(i, test, False, 'did not report: the guest died, stalled '
                   'or timed out')
    n = len(tests)
    if int3:
        result(n + 1, 'guest finished its job', True,
               f'SKIP {int3[0]}; the tests it had not run went to {retry}')
        why[(name, 'guest finished its job', 'harness')] = True
    else:
        result(n + 1, 'guest finished its job', meta.get('finished') == 'yes',
               meta.get('ended', ''))
    lines.extend('# ' + r for r in reports)
    result(n + 2, 'kernel log clean', not reports)
    return ['KTAP version 1'] + out + [f'1..{n + 2}'] + lines


def to_json(test, allowed_skip):
    status = test.status.name
    return {'name': test.name, 'status': status,
            'allowed_skip': allowed_skip(test) if status == 'SKIPPED' else None,
            'log': test.log,
            'subtests': [to_json(t, allowed_skip) for t in test.subtests]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kunit', required=True)
    ap.add_argument('--results', required=True)
    ap.add_argument('--skips', required=True)
    ap.add_argument('judge')
    ap.add_argument('boots', nargs='*')
    a = ap.parse_args()
    sys.path.insert(0, a.kunit)
    import kunit_parser  # the kernel's own KTAP parser
    import kunit_printer

    with open(a.skips) as f:
        patterns = [l.split('#')[0].strip() for l in f]
    patterns = [p for p in patterns if p]

    # The document: the judge's self-test, then one subtest per boot.
    doc = ['KTAP version 1', f'1..{1 + len(a.boots)}']
    with open(a.judge) as f:
        judge = f.read().splitlines()
    judge_ok = judge and not any(l.startswith('not ok') for l in judge) and \
        any(l.startswith('# ') and ' 0 failed' in l for l in judge)
    doc += [INDENT + l for l in judge[:1] + ['# Subtest: kernel-log judge'] + judge[1:]]
    doc.append(f'{"ok" if judge_ok else "not ok"} 1 kernel-log judge')
    why = {}
    for i, name in enumerate(a.boots, 2):
        doc += [INDENT + l for l in boot_block(a.results, name, why)]
        doc.append(f'ok {i} {name}')   # the parser takes the boot's status from its results
    ktap = os.path.join(a.results, 'test.ktap')
    with open(ktap, 'w') as f:
        f.write('\n'.join(doc) + '\n')

    with open(os.path.join(a.results, 'test.parse.log'), 'w') as log:
        kunit_parser.stdout = kunit_printer.Printer(log)
        tree = kunit_parser.parse_run_tests(doc)

    def allowed_skip(name):
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    passed = failed = skipped = 0
    failures, skips = [], []
    for boot in tree.subtests:
        top = boot.subtests if boot.subtests else [boot]
        for t in top:
            name = f'{boot.name}/{t.name}' if boot.subtests else t.name
            st = t.status
            reason = why.get((boot.name, t.name), '')
            if st == kunit_parser.TestStatus.SKIPPED:
                if allowed_skip(t.name) or (boot.name, t.name, 'harness') in why:
                    skipped += 1
                    skips.append(f'{name} ({reason})')
                else:
                    failed += 1
                    failures.append(f'{name}: skipped, and no skip of it is allowed '
                                    f'(guest/tests/skips)')
                continue
            bad_subs = [s for s in t.subtests
                        if s.status != kunit_parser.TestStatus.SUCCESS and
                        not (s.status == kunit_parser.TestStatus.SKIPPED and
                             allowed_skip(f'{t.name}/{s.name}'))]
            if st == kunit_parser.TestStatus.SUCCESS and not bad_subs:
                passed += 1
                continue
            failed += 1
            failures.append(name + (f' ({reason})' if reason else ''))
            for s in bad_subs:
                what = 'skipped, not allowed' if s.status.name == 'SKIPPED' else 'failed'
                failures.append(f'  {what}: {s.name}')
            if t.name == 'kernel log clean':
                failures += ['  ' + l.strip()[2:] for l in t.log
                             if l.strip().startswith('# ')]

    def allowed_json(test):
        return allowed_skip(test.name)
    with open(os.path.join(a.results, 'test.json'), 'w') as f:
        json.dump({'summary': {'passed': passed, 'failed': failed, 'skipped': skipped},
                   'failures': failures, 'skips': skips,
                   'tree': to_json(tree, allowed_json)}, f, indent=1)

    print(f'results: {ktap}, test.json (parsed by the kernel\'s kunit_parser)')
    for s in skips:
        print(f'skipped: {s}')
    for s in failures:
        print(f'not ok: {s}' if not s.startswith('  ') else s)
    summary = f'{passed} passed, {failed} failed'
    if skipped:
        summary += f', {skipped} skipped'
    print(summary)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
