#!/usr/bin/env python3
"""Every tensor factory in the engine's compute code says where its tensor lives.

On a GPU, a tensor made without device options is made in host memory, and the first
operation that meets a GPU tensor fails (or, for a scalar-sized one, silently copies every
step). So in models/, sampling/, tiling/ and pipelines/, each call of a factory (zeros,
arange, full, tensor, randn, ...) must pass options that name a device (`x.options()`,
a value defined from one, a `.device(...)`; `.device(at::kCPU)` says "on the host, on
purpose"), or carry a comment with `host:` in its statement or just above it, saying why
that tensor belongs in host memory (a schedule table, a picture's pixels, ...). The `_like`
factories follow their argument and need nothing.

Usage: check_tensor_factories.py ENGINE_DIR. Prints each offending call; exits 1 if any.
"""
import pathlib
import re
import sys

FOLDERS = ("models", "sampling", "tiling", "pipelines")
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
FACTORY = re.compile(
    r"\bat::(zeros|ones|full|empty|empty_strided|arange|linspace|logspace|randn|rand|randint|"
    r"normal|tensor|eye|from_blob|scalar_tensor)\(")
DEVICE = re.compile(r"\.options\(\)|\.device\(|\bdevice\b")


def arguments(text, start):
    """The text of the call's arguments, from the '(' at `start` to its partner."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


def marked_host(lines, line_no):
    """`host:` in a comment on the call's line, or above it within the same statement or
    in the comment lines directly before that statement."""
    i = line_no
    if "host:" in lines[i]:
        return True
    while i > 0:
        i -= 1
        prev = lines[i].strip()
        if "host:" in prev:
            return True
        if prev.startswith("//"):
            continue
        code = strip_comments(prev).rstrip()
        if not code or code.endswith((";", "{", "}")):
            return False
    return False


def defined_on_device(code, name, before):
    """True when the last `name = ...;` before `before` takes a tensor's options or names
    a device (`const auto opts = x.options();`)."""
    last = None
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*=\s*([^;]+);", code[:before]):
        last = m.group(1)
    return last is not None and DEVICE.search(last) is not None


def strip_comments(line):
    return line.split("//", 1)[0]


def check(path):
    text = path.read_text()
    lines = text.split("\n")
    code = "\n".join(strip_comments(l) for l in lines)
    found = []
    for m in FACTORY.finditer(code):
        line_no = code.count("\n", 0, m.start())
        here = lines[line_no]
        if marked_host(lines, line_no):
            continue
        args = arguments(code, m.end() - 1)
        if DEVICE.search(args) or any(defined_on_device(code, name, m.start())
                                      for name in IDENT.findall(args)):
            continue
        found.append(f"{path}:{line_no + 1}: at::{m.group(1)} without device options: "
                     f"{here.strip()}")
    return found


def main():
    engine = pathlib.Path(sys.argv[1])
    problems = []
    files = 0
    for folder in FOLDERS:
        for path in sorted((engine / folder).rglob("*.cpp")) + sorted((engine / folder).rglob("*.h")):
            files += 1
            problems += check(path)
    for p in problems:
        print(p)
    print(f"{files} files, {len(problems)} tensor factories without device options")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
