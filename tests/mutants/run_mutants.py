#!/usr/bin/python3
"""run_mutants.py - mutation testing of the code that decides money and safety: applies each
mutant of tests/mutants/mutants.txt to a copy of the source tree (never the working tree), builds
it without assert() (-DNDEBUG: the tests must catch the mutant, not the code's own checks), runs
only the tests that cover it, and fails when one survives. Run through scripts/mutants; the list's
format and the ways to run it are in docs/TESTING.md ("Mutation testing").

Usage: run_mutants.py [--all | --list | --check] [--no-baseline] [NAME...]
  (no argument)   the CI subset: the mutants marked `ci: yes`
  --all           every mutant              NAME...  these mutants
  (a mutant marked `pending:` is left out while a test it names is not in the tree)
  --list          print the mutants (name, ci, file, tests) and exit
  --check         check the list against the tree (each `from` found exactly once, each test
                  present) without building anything: what ctest's mutants.list runs
  --no-baseline   skip running the covering tests on the unmutated copy first (scripts/test
                  does: its ctest pass just ran them on the same sources)
Environment: EM_MUTANTS_BUILD_DIR (default ROOT/build-mutants: tree/ is the copy, build/ its
build), EM_MUTANTS_JOBS (ctest -j and the build's -j, default the number of CPUs).
Exit: 0 every mutant run was killed; 1 one survived, did not build, or the list is stale;
2 usage.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "tests", "mutants", "mutants.txt")
FIELDS = {"why", "file", "from", "to", "tests", "ci", "pending"}
TEST_TIMEOUT_S = 600


class ListError(Exception):
    pass


class Mutant:
    def __init__(self, name, where):
        self.name, self.where = name, where
        self.why = ""
        self.file = None
        self.edits = []  # [(from, to)], applied in order
        self.tests = []
        self.ci = False
        self.pending = None


def unescape(text, where):
    """The list's escapes: \\n a line break, \\t a tab, \\\\ a backslash; nothing else."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1:i + 2]
            if nxt not in ("n", "t", "\\"):
                raise ListError(f"{where}: unknown escape '\\{nxt}' (\\n, \\t and \\\\ only)")
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[nxt])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_list(path=LIST):
    """Sections `--- NAME` of `key: value` lines; `from:`/`to:` come in pairs, in order."""
    mutants, cur, pending_from = [], None, None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            where = f"{os.path.relpath(path, ROOT)}:{n}"
            if line.startswith("--- "):
                if pending_from is not None:
                    raise ListError(f"{cur.where}: 'from:' without its 'to:'")
                cur = Mutant(line[4:].strip(), where)
                if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", cur.name):
                    raise ListError(f"{where}: mutant name '{cur.name}' must be lower-case letters, digits, '.', '-'")
                if any(m.name == cur.name for m in mutants):
                    raise ListError(f"{where}: mutant '{cur.name}' is listed twice")
                mutants.append(cur)
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if cur is None:
                raise ListError(f"{where}: text before the first '--- NAME' line")
            key, sep, value = line.partition(":")
            if not sep or key not in FIELDS:
                raise ListError(f"{where}: expected 'KEY: value' with KEY one of {', '.join(sorted(FIELDS))}")
            value = value[1:] if value.startswith(" ") else value
            if key == "from":
                if pending_from is not None:
                    raise ListError(f"{where}: two 'from:' lines without a 'to:' between them")
                pending_from = unescape(value, where)
                if not pending_from:
                    raise ListError(f"{where}: empty 'from:'")
            elif key == "to":
                if pending_from is None:
                    raise ListError(f"{where}: 'to:' without a 'from:' before it")
                cur.edits.append((pending_from, unescape(value, where)))
                pending_from = None
            elif key == "tests":
                cur.tests += value.split()
            elif key == "ci":
                if value not in ("yes", "no"):
                    raise ListError(f"{where}: ci: must be 'yes' or 'no'")
                cur.ci = value == "yes"
            elif key == "file":
                cur.file = value.strip()
            elif key == "why":
                cur.why = (cur.why + " " + value).strip()
            else:
                cur.pending = value.strip()
    if pending_from is not None:
        raise ListError(f"{cur.where}: 'from:' without its 'to:'")
    for m in mutants:
        for what, ok in (("file:", m.file), ("from:/to:", m.edits), ("tests:", m.tests), ("why:", m.why)):
            if not ok:
                raise ListError(f"{m.where}: mutant '{m.name}' has no {what}")
    return mutants


def tree_tests(root):
    """ctest's names, from the files CMakeLists.txt turns into tests."""
    names = set()
    for pattern, prefix, strip in (("tests/unit/test_*.c", "unit.", ""), ("tests/cases/*.case", "case.", ""),
                                   ("tests/sim/test_*.py", "sim.", ""), ("tests/fuzz/fuzz_*.c", "fuzz.", "fuzz_")):
        for p in glob.glob(os.path.join(root, pattern)):
            base = os.path.splitext(os.path.basename(p))[0]
            names.add(prefix + base[len(strip):])
    return names


def mutate(text, m):
    """text with m's edits, each `from` found exactly once in the text as edited so far."""
    for old, new in m.edits:
        count = text.count(old)
        if count != 1:
            raise ListError(f"{m.where}: mutant '{m.name}': {m.file} has {count} copies of {old!r} "
                            f"(must be exactly 1: the code changed, update the mutant)")
        text = text.replace(old, new)
    return text


def check(mutants, root):
    """Problems of the list against the tree at root: (name, message) pairs."""
    problems, tests = [], tree_tests(root)
    for m in mutants:
        path = os.path.join(root, m.file)
        if not os.path.isfile(path):
            problems.append((m.name, f"{m.where}: no file '{m.file}'"))
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            if mutate(text, m) == text:
                problems.append((m.name, f"{m.where}: mutant '{m.name}' changes nothing"))
        except ListError as e:
            problems.append((m.name, str(e)))
        missing = [t for t in m.tests if t not in tests]
        if missing and not m.pending:
            problems.append((m.name, f"{m.where}: mutant '{m.name}': no test {', '.join(missing)} in this tree"))
    return problems


def targets_for(tests):
    """The build targets the tests run."""
    t = set()
    for name in tests:
        kind, _, base = name.partition(".")
        if kind == "unit":
            t.add(base)
        elif kind == "fuzz":
            t.add("replay_fuzz_" + base)
        elif kind == "case":
            t.update(("ebsmigrate", "ledger_fixture"))
    return sorted(t)


def source_files(root):
    """The tree's files as the working tree has them (tracked and untracked, not ignored)."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], check=True,
                             capture_output=True, text=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            raise OSError("not the top of a git work tree")
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"], check=True,
                             capture_output=True).stdout
        return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not (d == root and (x.startswith("build") or x == ".git"))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return sorted(files)


def sync_tree(root, copy):
    """Makes copy hold root's files. A file is rewritten only when its bytes differ, so it gets a
    new mtime exactly then: make rebuilds what changed (a mutant left by an interrupted run
    included) and nothing else."""
    os.makedirs(copy, exist_ok=True)
    want = set()
    for rel in source_files(root):
        src, dst = os.path.join(root, rel), os.path.join(copy, rel)
        if os.path.islink(src) or not os.path.isfile(src):
            continue
        want.add(rel)
        with open(src, "rb") as f:
            data = f.read()
        same = False
        if os.path.isfile(dst) and not os.path.islink(dst):
            with open(dst, "rb") as f:
                same = f.read() == data
        if not same:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.unlink(dst)
            with open(dst, "wb") as f:
                f.write(data)
        mode = os.stat(src).st_mode & 0o777
        if os.stat(dst).st_mode & 0o777 != mode:
            os.chmod(dst, mode)
    for d, dirs, names in os.walk(copy, topdown=False):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), copy)
            if rel not in want:
                os.unlink(os.path.join(d, n))
        if d != copy and not os.listdir(d):
            os.rmdir(d)


def run(cmd, log, **kw):
    with open(log, "ab") as f:
        f.write(("\n$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw).returncode


def ctest(build, tests, jobs, log):
    """Runs exactly these tests; returns (rc, failed names, names ctest could not run, how many ran)."""
    regex = "^(" + "|".join(re.escape(t) for t in tests) + ")$"
    env = dict(os.environ)
    env.pop("EM_SIGV4_SUITE", None)  # the copy has no ../shared: the project's own tests must do
    env["TMPDIR"] = os.path.join(os.path.dirname(build), "tmp")  # the cases' files, away from /tmp's
    os.makedirs(env["TMPDIR"], exist_ok=True)
    start = os.path.getsize(log) if os.path.exists(log) else 0
    rc = run(["ctest", "--test-dir", build, "-R", regex, "-j", str(jobs), "--timeout", str(TEST_TIMEOUT_S),
              "--output-on-failure"], log, env=env)
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        out = f.read()
    # "The following tests FAILED:" lists "NN - name (Failed|Timeout|SEGFAULT|Not Run|...)"
    listed = re.findall(r"^\s*\d+ - (\S+) \(([^)]*)\)", out.split("The following tests FAILED:")[-1], re.M)
    failed = [name for name, status in listed if status != "Not Run"]
    not_run = [name for name, status in listed if status == "Not Run"]
    ran = re.search(r"tests passed, \d+ tests failed out of (\d+)", out)
    return rc, failed, not_run, int(ran.group(1)) if ran else 0


def split_waiting(mutants, tests):
    """(to run, waiting): a pending mutant waits while a test it names is not in the tree, and runs
    like any other once they all are (the branch with them merged)."""
    waiting = [m for m in mutants if m.pending and not all(t in tests for t in m.tests)]
    return [m for m in mutants if m not in waiting], waiting


def print_check(mutants):
    """--check: the list against the source tree; 1 on any problem."""
    problems = check(mutants, ROOT)
    for _, msg in problems:
        print(f"error: {msg}", file=sys.stderr)
    tests = tree_tests(ROOT)
    for m in mutants:
        if m.pending and all(t in tests for t in m.tests):
            print(f"# pending: {m.name}: its tests are in the tree now, so it runs: its 'pending:' line can go")
        elif m.pending:
            print(f"# pending: {m.name}: {m.pending}")
    print(f"{len(mutants)} mutants, {len(problems)} problems")
    return 1 if problems else 0


def run_mutants(chosen, pending, baseline):
    """Copies the tree, builds it, runs the baseline, then each mutant; 1 unless all were killed."""
    top = os.environ.get("EM_MUTANTS_BUILD_DIR") or os.path.join(ROOT, "build-mutants")
    tree, build = os.path.join(top, "tree"), os.path.join(top, "build")
    jobs = int(os.environ.get("EM_MUTANTS_JOBS") or os.cpu_count() or 1)
    log = os.path.join(top, "mutants.log")
    os.makedirs(top, exist_ok=True)
    open(log, "w").close()
    t0 = time.time()
    sync_tree(ROOT, tree)
    all_tests = sorted({t for m in chosen for t in m.tests})
    print(f"== {len(chosen)} mutants, {len(all_tests)} tests; copy and build in {top} (log: {log})", flush=True)
    # RelWithDebInfo as shipped, with -DNDEBUG spelled out: no assert() may be what catches a mutant.
    if run(["cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g -DNDEBUG", "-DEM_SANITIZE=OFF", "-DEM_FUZZ=OFF",
            "-DEM_WERROR=OFF"], log) != 0:
        print(f"error: cmake failed on the copy (see {log})", file=sys.stderr)
        return 1

    def build_for(tests):
        return run(["cmake", "--build", build, "-j", str(jobs), "--target"] + targets_for(tests), log) == 0

    if not build_for(all_tests):
        print(f"error: the unmutated copy does not build (see {log})", file=sys.stderr)
        return 1
    print(f"   built in {time.time() - t0:.0f} s", flush=True)
    if baseline:
        t1 = time.time()
        rc, failed, not_run, _ = ctest(build, all_tests, jobs, log)
        if rc != 0:
            print(f"error: without any mutant these tests fail: {', '.join(failed + not_run) or '(see log)'} "
                  f"(see {log}); a mutant they 'kill' proves nothing", file=sys.stderr)
            return 1
        print(f"   baseline: {len(all_tests)} tests pass unmutated ({time.time() - t1:.0f} s)", flush=True)

    bad = 0
    for m in chosen:
        t1 = time.time()
        path = os.path.join(tree, m.file)
        with open(path, encoding="utf-8") as f:
            original = f.read()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutate(original, m))
            if not build_for(m.tests):
                result, bad = f"ERROR: the mutant does not build (see {log})", bad + 1
            else:
                rc, failed, not_run, ran = ctest(build, m.tests, jobs, log)
                if not_run:
                    result, bad = f"ERROR: ctest could not run {', '.join(not_run)} (see {log})", bad + 1
                elif rc != 0 and ran:
                    result = "killed by " + (", ".join(failed) if failed else "ctest (see log)")
                else:
                    result, bad = "SURVIVED: " + m.why, bad + 1
        finally:
            with open(path, "w", encoding="utf-8") as f:  # a new mtime: the next build recompiles it
                f.write(original)
        print(f"{m.name:44} {time.time() - t1:5.0f} s  {result}", flush=True)
    for m in pending:
        print(f"{m.name:44}     -    PENDING (not run): {m.pending}")
    print(f"== {len(chosen) - bad} of {len(chosen)} mutants killed in {time.time() - t0:.0f} s"
          + (f"; {len(pending)} pending" if pending else ""))
    return 1 if bad else 0


def main(argv):
    names = [a for a in argv if not a.startswith("--")]
    opts = {a for a in argv if a.startswith("--")}
    if opts - {"--all", "--list", "--check", "--no-baseline"} or ("--all" in opts and names):
        print("usage: scripts/mutants [--all | --list | --check] [--no-baseline] [NAME...]", file=sys.stderr)
        return 2
    try:
        mutants = parse_list()
    except ListError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if "--list" in opts:
        for m in mutants:
            state = "pending" if m.pending else ("ci" if m.ci else "all")
            print(f"{m.name:44} {state:8} {m.file:22} {' '.join(m.tests)}")
        return 0
    if "--check" in opts:
        return print_check(mutants)
    if names:
        by_name = {m.name: m for m in mutants}
        missing = [a for a in names if a not in by_name]
        if missing:
            print(f"error: no mutant named {', '.join(repr(a) for a in missing)} (scripts/mutants --list)",
                  file=sys.stderr)
            return 2
        chosen = [by_name[a] for a in names]
    elif "--all" in opts:
        chosen = mutants
    else:
        chosen = [m for m in mutants if m.ci]
    chosen, waiting = split_waiting(chosen, tree_tests(ROOT))
    problems = check(chosen, ROOT)
    if problems:
        for _, msg in problems:
            print(f"error: {msg}", file=sys.stderr)
        return 1
    return run_mutants(chosen, waiting, "--no-baseline" not in opts)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
