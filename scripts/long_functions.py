#!/usr/bin/env python3
"""List the functions longer than a limit (default 150 lines) in C++ sources (issue 19: "no function
over ~150 lines in compiler/ and sim/").

    scripts/long_functions.py [--limit N] DIR_OR_FILE...

A function is a definition at namespace scope (a signature starting in column 0 whose body closes
with '}' in column 0, as clang-format writes it) or inside a class or struct body (one indentation
level deeper per class); lambdas and local classes count in their function. Prints
"lines path:line name", longest first; exits 0.
"""
import argparse
import pathlib
import re

SKIP = re.compile(r"^(#|//|}|namespace\b|enum\b|union\b|using\b|template\s*<[^>]*>\s*$)")
SCOPE = re.compile(r"^(class|struct)\b[^;(]*{\s*$")


def functions(path):
    """(line, length, name) of every function defined at namespace scope or in a class body."""
    lines = path.read_text(errors="replace").split("\n")
    yield from scan(lines, 0, len(lines), "")


def scan(lines, i, end, indent):
    while i < end:
        line = lines[i]
        if not line.startswith(indent) or line[len(indent):][:1].isspace() or not line.strip():
            i += 1
            continue
        body = line[len(indent):]
        if SCOPE.match(body):  # a class body: its inline member functions, one level deeper
            k = i + 1
            while k < end and not lines[k].startswith(indent + "}"):
                k += 1
            yield from scan(lines, i + 1, k, indent + "  ")
            i = k + 1
            continue
        if SKIP.match(body) or "(" not in body or body.startswith(("public:", "private:")):
            i += 1
            continue
        # The signature runs to the first line ending in '{' (a definition) or ';' (a declaration).
        j = i
        while j < end and not lines[j].rstrip().endswith(("{", ";", "}")):
            j += 1
        if j >= end or not lines[j].rstrip().endswith("{") or "=" in body.split("(")[0]:
            i = j + 1
            continue
        k = j + 1
        while k < end and not lines[k].startswith(indent + "}"):
            k += 1
        name = re.sub(r"\s+", " ", body.split("(")[0]).split(" ")[-1]
        yield i + 1, k - i + 1, name
        i = k + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    found = []
    for p in args.paths:
        p = pathlib.Path(p)
        files = sorted(p.rglob("*.cc")) + sorted(p.rglob("*.h")) if p.is_dir() else [p]
        for f in files:
            for line, n, name in functions(f):
                if n > args.limit:
                    found.append((n, f"{f}:{line}", name))
    for n, where, name in sorted(found, key=lambda x: (-x[0], x[1])):
        print(f"{n:5d} {where} {name}")


if __name__ == "__main__":
    main()
