#!/usr/bin/python3
"""test_run_mutants.py - the mutants runner's own checks (ctest mutants.selftest): the list's
format is read as docs/TESTING.md says, a stale or ambiguous edit and a missing test are refused,
a mutant's edits apply in order, and the tree copy is rewritten only where bytes differ."""
import os
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_mutants as rm  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class ListAndCheck(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        write(os.path.join(self.root, "src", "x.c"), "int f(int a)\n{\n\tif (a <= 170)\n\t\treturn 1;\n"
              "\treturn c == '\\t';\n}\nint g(void) { return 0; }\nint h(void) { return 0; }\n")
        write(os.path.join(self.root, "tests", "unit", "test_x.c"), "")
        write(os.path.join(self.root, "tests", "cases", "0001-a.case"), "")
        self.list = os.path.join(self.root, "mutants.txt")

    def tearDown(self):
        self.dir.cleanup()

    def parse(self, text):
        write(self.list, text)
        return rm.parse_list(self.list)

    def test_good_mutant_with_escapes_and_pairs_in_order(self):
        ms = self.parse("# comment\n--- x.edge\nwhy: w\nfile: src/x.c\nfrom: if (a <= 170)\\n\\t\\treturn 1;\n"
                        "to: if (a < 170)\\n\\t\\treturn 1;\nfrom: a < 170\nto: a < 171\n"
                        "from: c == '\\\\t'\nto: c == ' '\ntests: unit.test_x\ntests: case.0001-a\nci: yes\n")
        self.assertEqual(len(ms), 1)
        m = ms[0]
        self.assertTrue(m.ci)
        self.assertEqual(m.tests, ["unit.test_x", "case.0001-a"])
        self.assertEqual(rm.check(ms, self.root), [])
        with open(os.path.join(self.root, "src", "x.c"), encoding="utf-8") as f:
            out = rm.mutate(f.read(), m)
        self.assertIn("\tif (a < 171)\n\t\treturn 1;\n", out)
        self.assertIn("return c == ' ';", out)
        self.assertEqual(rm.targets_for(m.tests), ["ebsmigrate", "ledger_fixture", "test_x"])

    def test_stale_ambiguous_and_missing_test_are_problems(self):
        ms = self.parse("--- a.gone\nwhy: w\nfile: src/x.c\nfrom: a >= 334\nto: a > 334\ntests: unit.test_x\n"
                        "--- a.twice\nwhy: w\nfile: src/x.c\nfrom: return 0;\nto: return 1;\ntests: unit.test_x\n"
                        "--- a.untested\nwhy: w\nfile: src/x.c\nfrom: a <= 170\nto: a < 170\ntests: unit.test_y\n"
                        "--- a.nofile\nwhy: w\nfile: src/y.c\nfrom: a\nto: b\ntests: unit.test_x\n"
                        "--- a.noop\nwhy: w\nfile: src/x.c\nfrom: a <= 170\nto: a <= 170\ntests: unit.test_x\n"
                        "--- a.pending\nwhy: w\nfile: src/x.c\nfrom: a <= 170\nto: a < 170\ntests: case.9999-z\n"
                        "pending: its test is on another branch\n")
        problems = dict(rm.check(ms, self.root))
        self.assertEqual(sorted(problems), ["a.gone", "a.nofile", "a.noop", "a.twice", "a.untested"])
        self.assertIn("has 0 copies of 'a >= 334'", problems["a.gone"])
        self.assertIn("has 2 copies of 'return 0;'", problems["a.twice"])
        self.assertIn("no test unit.test_y in this tree", problems["a.untested"])
        self.assertIn("changes nothing", problems["a.noop"])

    def test_pending_waits_only_while_its_tests_are_missing(self):
        ms = self.parse("--- a.waits\nwhy: w\nfile: src/x.c\nfrom: a <= 170\nto: a < 170\n"
                        "tests: unit.test_x case.9999-z\npending: on another branch\n"
                        "--- a.runs\nwhy: w\nfile: src/x.c\nfrom: a <= 170\nto: a < 170\ntests: case.0001-a\n"
                        "pending: merged now\n"
                        "--- a.plain\nwhy: w\nfile: src/x.c\nfrom: a <= 170\nto: a < 170\ntests: unit.test_x\n")
        run, waiting = rm.split_waiting(ms, rm.tree_tests(self.root))
        self.assertEqual([m.name for m in run], ["a.runs", "a.plain"])
        self.assertEqual([m.name for m in waiting], ["a.waits"])

    def test_format_errors_name_the_line(self):
        bad = {
            "--- x\nwhy: w\nfile: f\nfrom: a\\q\nto: b\ntests: t\n": "mutants.txt:4: unknown escape '\\q'",
            "--- x\nwhy: w\nfile: f\nfrom: a\nfrom: b\n": "mutants.txt:5: two 'from:' lines",
            "--- x\nwhy: w\nfile: f\nto: b\n": "mutants.txt:4: 'to:' without a 'from:'",
            "--- x\nwhy: w\nfile: f\nfrom: a\n": "'from:' without its 'to:'",
            "--- x\nwhy: w\nfile: f\nfrom: a\nto: b\n": "mutant 'x' has no tests:",
            "--- x\nwhy: w\nfile: f\nfrom: a\nto: b\ntests: t\n--- x\n": "mutants.txt:7: mutant 'x' is listed twice",
            "--- X y\n": "mutant name 'X y' must be",
            "why: w\n": "mutants.txt:1: text before the first",
            "--- x\nwho: w\n": "mutants.txt:2: expected 'KEY: value'",
            "--- x\nci: maybe\n": "mutants.txt:2: ci: must be 'yes' or 'no'",
        }
        for text, want in bad.items():
            with self.assertRaises(rm.ListError, msg=text) as e:
                self.parse(text)
            self.assertIn(want, str(e.exception), text)


class SyncTree(unittest.TestCase):
    def test_rewrites_only_what_differs_and_removes_the_rest(self):
        with tempfile.TemporaryDirectory() as d:
            src, copy = os.path.join(d, "src"), os.path.join(d, "copy")
            write(os.path.join(src, "a.c"), "a\n")
            write(os.path.join(src, "sub", "b.c"), "b\n")
            os.chmod(os.path.join(src, "sub", "b.c"), 0o755)
            rm.sync_tree(src, copy)
            a, b = os.path.join(copy, "a.c"), os.path.join(copy, "sub", "b.c")
            self.assertEqual(open(b).read(), "b\n")
            self.assertEqual(os.stat(b).st_mode & 0o777, 0o755)
            old = time.time() - 1000
            os.utime(a, (old, old))
            os.utime(b, (old, old))
            write(b, "mutated\n")  # what an interrupted run leaves behind
            os.utime(b, (old, old))
            write(os.path.join(copy, "stale", "c.c"), "c\n")
            rm.sync_tree(src, copy)
            self.assertEqual(os.stat(a).st_mtime, old)  # same bytes: untouched, not rebuilt
            self.assertEqual(open(b).read(), "b\n")
            self.assertGreater(os.stat(b).st_mtime, old)  # restored with a new mtime: rebuilt
            self.assertFalse(os.path.exists(os.path.join(copy, "stale")))


class TheList(unittest.TestCase):
    def test_the_projects_list_fits_the_tree(self):
        ms = rm.parse_list()
        self.assertGreaterEqual(len(ms), 30)
        self.assertEqual(rm.check(ms, rm.ROOT), [])
        families = {m.name.split(".")[0] for m in ms}
        for f in ("planner", "eligibility", "money", "cost", "apply", "report", "sigv4"):
            self.assertIn(f, families)


if __name__ == "__main__":
    unittest.main()
