#!/usr/bin/python3
"""count_assertions.py - how many things the test suite checks, so that making it faster can be
shown not to have made it check less (docs/TESTING.md, "How long the tests take").

Usage: count_assertions.py [--source SRC] [--build BUILD]

What counts as one assertion, per layer:
  unit   each CHECK executed: the `ok N` / `not ok N` lines in the unit tests' output in
         BUILD/Testing/Temporary/LastTest.log (so a full ctest run must come first; the unit tests
         missing from that log are named). A skipped test (77) counts what it ran before skipping.
  cases  per case file: its exit code (1), each line of `stdout`, each line of its golden
         `stdout-file`, each line of the four `*-contains` sections, each command line of `check`
         (every line there must succeed; comments and blank lines do not count).
  sim    each self.assert*/self.fail call and each bare `assert` in tests/sim/test_*.py (static).
  fuzz   each input the replays feed: files under tests/fuzz/corpus/ and tests/fuzz/regressions/.
  mutants  each mutant of tests/mutants/mutants.txt (a test that must fail on it).
Prints one line per layer and the total. Exit 0.
"""
import argparse
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def count_unit(build):
    log = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(log):
        return None, "no %s (run ctest first)" % log
    seen, checks, current = set(), 0, None
    for line in open(log, encoding="utf-8", errors="replace"):
        m = re.match(r"\d+/\d+ Test: (\S+)", line)
        if m:
            current = m.group(1)
            if current.startswith("unit."):
                seen.add(current)
            continue
        if current and current.startswith("unit.") and re.match(r"(not )?ok \d+ ", line):
            checks += 1
    return checks, seen


def unit_names(src):
    return {"unit." + os.path.basename(p)[:-2] for p in glob.glob(os.path.join(src, "tests", "unit", "test_*.c"))}


def case_sections(path):
    sections, name, lines = {}, None, []
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if line.startswith("--- "):
            if name is not None:
                sections[name] = lines
            name, lines = line[4:].strip(), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        sections[name] = lines
    return sections


def count_case(path):
    s = case_sections(path)
    n = 1  # the exit code
    n += len([l for l in s.get("stdout", []) if l.strip()])
    if "stdout-file" in s:
        golden = os.path.join(os.path.dirname(path), "".join(s["stdout-file"]).strip())
        if os.path.exists(golden):
            n += sum(1 for _ in open(golden, encoding="utf-8", errors="replace"))
    for sec in ("stdout-contains", "stderr-contains", "stdout-not-contains", "stderr-not-contains"):
        n += len([l for l in s.get(sec, []) if l.strip()])
    n += len([l for l in s.get("check", []) if l.strip() and not l.strip().startswith("#")])
    return n


def count_sim(src):
    n = 0
    for p in glob.glob(os.path.join(src, "tests", "sim", "test_*.py")):
        text = open(p, encoding="utf-8").read()
        n += len(re.findall(r"\bself\.(assert\w*|fail)\(", text))
        n += len(re.findall(r"^\s*assert\b", text, re.M))
    return n


def count_fuzz(src):
    n = 0
    for d in ("corpus", "regressions"):
        for root, _, files in os.walk(os.path.join(src, "tests", "fuzz", d)):
            n += len([f for f in files if not f.endswith(".md")])
    return n


def count_mutants(src):
    path = os.path.join(src, "tests", "mutants", "mutants.txt")
    return sum(1 for l in open(path, encoding="utf-8") if l.startswith("--- ")) if os.path.exists(path) else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--build", default=None)
    a = ap.parse_args()
    build = a.build or os.path.join(a.source, "build")
    cases = sorted(glob.glob(os.path.join(a.source, "tests", "cases", "*.case")))
    rows = []
    unit, seen = count_unit(build)
    if unit is None:
        rows.append(("unit", "?", seen))
    else:
        missing = sorted(unit_names(a.source) - seen)
        rows.append(("unit", unit, "CHECKs run by %d unit tests%s" % (
            len(seen), "; not in the log: " + ", ".join(missing) if missing else "")))
    rows.append(("cases", sum(count_case(c) for c in cases), "exit codes, output lines and check lines of %d cases"
                 % len(cases)))
    rows.append(("sim", count_sim(a.source), "assertions in tests/sim/test_*.py"))
    rows.append(("fuzz", count_fuzz(a.source), "inputs the fuzz replays feed"))
    rows.append(("mutants", count_mutants(a.source), "mutants a named test must kill"))
    total = sum(r[1] for r in rows if isinstance(r[1], int))
    for name, n, what in rows:
        print("%-8s %7s  %s" % (name, n, what))
    print("%-8s %7d" % ("total", total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
