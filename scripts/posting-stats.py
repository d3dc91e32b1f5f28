#!/usr/bin/env python3
"""The bars of a posting, from build/linux: for each posting of patches/,
its patches, the changed lines of its whole diff, the sum of its patches'
changed lines and their ratio (churn: 1.00 means no patch rewrites what an
earlier one of the posting added), and its largest patch. Changed lines:
'+' and '-' lines of the diffs, commit messages excluded. Markdown table
on stdout. Usage: scripts/posting-stats.py"""
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(TOP, 'build', 'linux')


def git(*args):
    return subprocess.run(['git', '-C', TREE] + list(args), check=True,
                          capture_output=True, text=True).stdout


def changed(diff):
    return sum(1 for line in diff.splitlines()
               if line[:1] in '+-' and not line.startswith(('+++ ', '--- ')))


def main():
    names = sorted(d for d in os.listdir(os.path.join(TOP, 'patches'))
                   if os.path.isdir(os.path.join(TOP, 'patches', d)))
    print('| posting | patches | changed lines | sum of patches | churn | largest patch |')
    print('|---|---:|---:|---:|---:|---|')
    start = 'base'
    for i, name in enumerate(names):
        end = 'HEAD' if i == len(names) - 1 else 'posting/' + name
        commits = git('rev-list', '--reverse', '%s..%s' % (start, end)).split()
        whole = changed(git('diff', start, end))
        sizes = [(changed(git('show', '--format=', c)), j + 1)
                 for j, c in enumerate(commits)]
        total = sum(n for n, _ in sizes)
        big = max(sizes) if sizes else (0, 0)
        print('| %s | %d | %d | %d | %.2f | %d (patch %d) |' % (
            name, len(commits), whole, total, total / whole if whole else 0,
            big[0], big[1]))
        start = end
    return 0


if __name__ == '__main__':
    sys.exit(main())
