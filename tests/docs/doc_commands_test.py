#!/usr/bin/env python3
"""The docs cannot drift: runs the marked command blocks of README.md and docs/*.md and checks
their key output lines, and checks that no doc names a file outside the repository.

usage: python3 tests/docs/doc_commands_test.py TPUSIM   (from the repository root)

A block is tested when the line before its opening fence is `<!-- doc-test -->`, or
`<!-- doc-test: PREFIX ... -->` to check only the expected lines that start with one of the
PREFIXes. In the block, a line `$ COMMAND` is run with bash from the repository root (`build/tpusim`
replaced by TPUSIM); the lines after it, up to the next `$ `, are its expected output. Each expected
line (spaces collapsed) must appear, in order, among the lines of the command's stdout + stderr;
`...` alone skips, and a line ending in `...` matches any line that starts with what precedes it.

Outside-the-repository check: a Markdown link to a local file must resolve inside the repository
and exist; no doc, and no chip config (configs/*.yaml), may name `../shared`, an absolute path
under /work or /home, or the design brief's DESIGN.md / STYLE.md (not in the repository).
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.getcwd()


def norm(line):
    return " ".join(line.split())


def blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"<!--\s*doc-test(?::\s*(.*?))?\s*-->\s*$", lines[i].strip())
        if m and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            prefixes = m.group(1).split() if m.group(1) else None
            body, j = [], i + 2
            while j < len(lines) and not lines[j].startswith("```"):
                body.append(lines[j])
                j += 1
            yield i + 1, prefixes, body
            i = j
        i += 1


def run_block(path, lineno, prefixes, body, tpusim):
    failures = []
    cmds = []
    for line in body:
        if line.startswith("$ "):
            cmds.append([line[2:], []])
        elif cmds:
            cmds[-1][1].append(line)
    for cmd, expected in cmds:
        real = cmd.replace("build/tpusim", tpusim)
        p = subprocess.run(["bash", "-c", real], cwd=ROOT, capture_output=True, text=True, timeout=600)
        got = [norm(l) for l in (p.stdout + p.stderr).split("\n")]
        pos = 0
        for want in expected:
            w = norm(want)
            if not w or w == "...":
                continue
            if prefixes is not None and not any(w.startswith(pf) for pf in prefixes):
                continue
            prefix = w[:-3].rstrip() if w.endswith("...") else None
            k = pos
            while k < len(got) and not (got[k].startswith(prefix) if prefix is not None else got[k] == w):
                k += 1
            if k == len(got):
                failures.append(f"{path}:{lineno}: `{cmd}`: expected line not in the output:\n"
                                f"    {want}\n  output:\n    " + "\n    ".join(got[:60]))
                break
            pos = k + 1
    return failures, len(cmds)


def outside_refs(path):
    text = open(path, encoding="utf-8").read()
    bad = []
    # The design brief's files (DESIGN.md, STYLE.md) lie beside the clone, not in it.
    for m in re.finditer(r"\.\./shared|/work/|/home/|\bDESIGN\.md|\bSTYLE\.md", text):
        line = text.count("\n", 0, m.start()) + 1
        bad.append(f"{path}:{line}: names a file outside the repository ({m.group(0)}...)")
    for m in re.finditer(r"\]\(([^)#\s]+)(#[^)]*)?\)", text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        full = os.path.normpath(os.path.join(os.path.dirname(path), target))
        line = text.count("\n", 0, m.start()) + 1
        if os.path.relpath(full, ROOT).startswith(".."):
            bad.append(f"{path}:{line}: links outside the repository: {target}")
        elif not os.path.exists(full):
            bad.append(f"{path}:{line}: links a missing file: {target}")
    return bad


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tpusim = os.path.abspath(sys.argv[1])
    docs = ["README.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("benchmarks/*.md")) + \
        sorted(glob.glob("tests/**/*.md", recursive=True))
    failures, ran = [], 0
    # The chip configs cite their sources too: by public reference, never a file beside the clone.
    for c in sorted(glob.glob("configs/*.yaml")):
        failures += outside_refs(c)
    for d in docs:
        failures += outside_refs(d)
        for lineno, prefixes, body in blocks(d):
            f, n = run_block(d, lineno, prefixes, body, tpusim)
            failures += f
            ran += n
    for f in failures:
        print("FAIL:", f)
    print(f"{ran} documented commands run from {len(docs)} docs; {len(failures)} failures")
    if ran == 0:
        print("FAIL: no marked command block found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
