#!/usr/bin/python3
"""test_checksrc.py - scripts/checksrc's own test (ctest: checksrc.selftest).

Usage: test_checksrc.py SOURCE_DIR [BUILD_DIR]

1. The real tree is clean: checksrc over SOURCE_DIR (with BUILD_DIR's object files for calls)
   prints nothing and exits 0.
2. A small tree with one deliberate violation per rule (its map, sources compiled here so the
   call rules have object files, a Markdown file with a dead link, a git history for the format
   check) is checked, and exactly the expected findings are reported, exit 1; the exceptions
   the map accepts and the look-alikes (a banned name in a comment or a string, fork() in
   proc.c) are not.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = sys.argv[2] if len(sys.argv) > 2 else None
CHECKSRC = os.path.join(SRC, "scripts", "checksrc")
failures = []


def check(cond, what):
    print("%s - %s" % ("ok" if cond else "not ok", what))
    if not cond:
        failures.append(what)


ARCH = """# Architecture

```layers
L2 high.c            # the upper layer
L1 a.c b.c c.c d.c   # a circle (a, b) and an accepted one (c, d)
   gone.c sub/deep.c tabled.c
   sp.c sp_more.c sp_internal.h sq.c sq_half.c sq_internal.h  # two split modules
L0 low.c low2.c proc.c util.h fmt.c
```

```accepted
circle c.c d.c          # accepted: must not be reported
circle x.c y.c          # a circle that does not exist (stale)
upward low.c -> a.c     # an upward edge that does not exist (stale)
allow sleep nowhere.c   # allows nothing (stale)
allow banned low2.c     # low2.c may call strcat: its finding is left out
states low.c:state_names   # the state names
upward b.c -> high.c
```
"""

FILES = {
    "docs/ARCHITECTURE.md": ARCH,
    "README.md": "See [the map](docs/ARCHITECTURE.md) and [nothing](docs/nowhere.md).\n",
    "include/ebsmigrate/high.h": "int high_fn(void);\n",
    "include/ebsmigrate/low.h": "int low_fn(const char *s);\n",
    "include/ebsmigrate/stray.h": "/* belongs to no module of the map */\n",
    "src/util.h": "#define UTIL 1\n",
    "src/sub/deep.c": '#include "deep.h"\n#include "../util.h"\n#include "ebsmigrate/high.h"\nint deep_fn(void) { return 0; }\n',
    "src/sub/deep.h": "int deep_fn(void);\n",
    "src/sub/tabled.c": "int tabled_fn(void) { return 0; }\n",  # a bare name found at any depth
    "src/sub/stray.c": "int stray_fn(void) { return 0; }\n",
    "src/sub/notes.txt": "not C, still a file of src/ the table must place\n",
    "src/high.c": """#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include "ebsmigrate/high.h"
void *cJSON_CreateObject(void);
/* strcpy(x, y) in a comment is not a call; neither is "gmtime(" in a string */
int high_fn(void)
{
	char b[8];
	const char *s = "gmtime(";
	sprintf(b, "%d", 1);
	sleep(1);
	(void)cJSON_CreateObject();
	if (fork() == 0)
		return 1;
	return strcmp(s, "completed") == 0 || strcmp(s, "other") == 0 || b[0];
}
""",
    "src/low.c": """#include "ebsmigrate/low.h"
#include "ebsmigrate/high.h"
static const char *const state_names[] = {"planned", "completed"};
int low_fn(const char *s)
{
	return s == state_names[0];
}
""",
    "src/low2.c": """#include <string.h>
int high_fn(void);
int low2_fn(char *d)
{
	strcat(d, "x");
	return high_fn();
}
""",
    "src/a.c": "int b_fn(void);\nint a_fn(void) { return b_fn(); }\n",
    "src/b.c": "int a_fn(void);\nint high_fn(void);\nint b_fn(void) { return a_fn() + high_fn(); }\n",
    "src/c.c": "int d_fn(void);\nint c_fn(void) { return d_fn(); }\n",
    "src/d.c": "int c_fn(void);\nint d_fn(void) { return c_fn(); }\n",
    "src/proc.c": "#include <unistd.h>\nint proc_fn(void) { return fork(); }\n",
    "src/fmt.c": "int fmt_fn(void)\n{\n\treturn 1;\n}\n",
    "src/orphan.c": "int orphan_fn(void) { return 0; }\n",
    # a module split in files sharing a private header: includes both ways, calls one way (no circle)
    "include/ebsmigrate/sp.h": "int sp_fn(void);\nint sp_more_fn(void);\n",
    "src/sp_internal.h": '#include "ebsmigrate/sp.h"\n',
    "src/sp.c": '#include "sp_internal.h"\nint sp_fn(void) { return sp_more_fn(); }\n',
    "src/sp_more.c": '#include "ebsmigrate/sp.h"\n#include "sp_internal.h"\nint sp_more_fn(void) { return 2; }\n',
    # the same shape, but the halves call each other: still a circle
    "include/ebsmigrate/sq.h": "int sq_fn(int);\nint sq_half_fn(int);\n",
    "src/sq_internal.h": '#include "ebsmigrate/sq.h"\n',
    "src/sq.c": '#include "sq_internal.h"\nint sq_fn(int n) { return n ? sq_half_fn(n - 1) : 0; }\n',
    "src/sq_half.c": '#include "ebsmigrate/sq.h"\n#include "sq_internal.h"\nint sq_half_fn(int n) { return sq_fn(n); }\n',
}

EXPECTED = {
    ("docs/ARCHITECTURE.md", "map"),  # the accepted line without a reason
    ("docs/ARCHITECTURE.md", "stale"),  # gone.c, circle x/y, upward low -> a, allow sleep nowhere.c
    ("include/ebsmigrate/stray.h", "unlisted"),
    ("src/orphan.c", "unlisted"),
    ("src/sub/stray.c", "unlisted"),
    ("src/sub/notes.txt", "unlisted"),
    ("src/sub/deep.c", "layer"),  # a module in a subdirectory including an upper header
    ("src/low.c", "layer"),  # includes high.h
    ("src/low2.c", "layer"),  # calls high_fn (from the object files only)
    ("src/a.c", "circle"),
    ("src/sq.c", "circle"),  # a split whose halves call each other
    ("src/high.c", "proc"),
    ("src/high.c", "cjson-create"),
    ("src/high.c", "sleep"),
    ("src/high.c", "state-strcmp"),
    ("src/high.c", "banned"),
    ("README.md", "doc-link"),
    ("src/fmt.c", "format"),
}


def run(root, *args, env=None):
    p = subprocess.run([sys.executable, CHECKSRC, "--root", root] + list(args), capture_output=True, text=True,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def fixture(tmp):
    root = os.path.join(tmp, "tree")
    for rel, text in FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    os.makedirs(os.path.join(root, "tests", "docs"))
    shutil.copy(os.path.join(SRC, "tests", "docs", "check_links.py"), os.path.join(root, "tests", "docs"))
    shutil.copy(os.path.join(SRC, ".clang-format"), root)
    build = os.path.join(tmp, "build")
    for rel in FILES:
        if rel.startswith("src/") and rel.endswith(".c"):
            obj = os.path.join(build, "CMakeFiles", "fixture.dir", rel + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run(["cc", "-c", "-w", "-I", os.path.join(root, "include"), "-o", obj, os.path.join(root, rel)],
                           check=True)
    git = ["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "fixture"], check=True)
    # a change the format check must catch (spaces, brace on the line), and one it must leave
    # alone because it is not changed since the base (high.c's lines are as committed)
    with open(os.path.join(root, "src", "fmt.c"), "w") as f:
        f.write("int fmt_fn(void)\n{\n\treturn 1;\n}\nint fmt_two(void) {\n    return  2;\n}\n")
    return root, build


def main():
    if BUILD:
        rc, out, err = run(SRC, "--build", BUILD)
    else:
        rc, out, err = run(SRC)
    check(rc == 0 and out == "" and err == "", "the tree is clean (exit %d)%s" % (rc, ("\n" + out + err).rstrip()))

    with tempfile.TemporaryDirectory() as tmp:
        root, build = fixture(tmp)
        env = dict(os.environ, EM_FORMAT_BASE="HEAD")
        rc, out, err = run(root, "--build", build, env=env)
        lines = [ln for ln in out.split("\n") if ln]
        check(rc == 1 and err == "", "findings exit 1 (exit %d, stderr %r)" % (rc, err))
        got = set()
        for ln in lines:
            parts = ln.split(": ", 2)
            path = parts[0].rsplit(":", 1)[0]
            got.add((path, parts[1] if len(parts) > 1 else "?"))
            check(len(parts) == 3 and parts[0].rsplit(":", 1)[1].isdigit(), "FILE:LINE: rule: message: %s" % ln)
        for e in sorted(EXPECTED):
            check(e in got, "reported: %s %s" % e)
        for g in sorted(got - EXPECTED):
            check(False, "not expected: %s %s" % g)
        text = "\n".join(lines)
        for what, needle in [
            ("gone.c stale", "layer table entry 'gone.c' names no file"),
            ("stale circle", "accepted circle 'x.c y.c' no longer exists"),
            ("stale upward", "accepted upward edge 'low.c -> a.c' no longer exists"),
            ("stale allow", "'allow sleep nowhere.c' allows nothing any more"),
            ("reasonless line", "accepted exception without a reason"),
            ("include edge", "'low' (L0) includes 'high' (L2)"),
            ("call edge", "'low2' (L0) calls high_fn() of 'high' (L2)"),
            ("circle", "loop: a, b"),
            ("split module's call circle", "loop: sq, sq_half"),
            ("subdirectory module", "'sub/deep' (L1) includes 'high' (L2)"),
            ("state name", "against the state name \"completed\""),
            ("banned", "sprintf() is banned"),
            ("proc", "fork() outside proc.c"),
            ("doc link", "link 'docs/nowhere.md': no such file"),
            ("format line", "src/fmt.c:5: format"),
        ]:
            check(needle in text, "%s: %s" % (what, needle))
        for what, needle in [
            ("accepted circle", "c, d"), ("comment", "strcpy"), ("string", "gmtime"), ("proc.c", "src/proc.c"),
            ("allowed banned call", "strcat"), ("accepted upward edge", "'b' (L1) calls"),
            ("other literal", "\"other\""), ("unchanged lines", "src/high.c:1: format"),
            ("a bare name at depth", "tabled"), ("a private header of its module", "deep.h"),
            ("an include of ../util.h", "'util'"),
            ("a split module's shared headers", "loop: sp"),
        ]:
            check(needle not in text, "not reported: %s" % what)
        check(len([ln for ln in lines if ": stale: " in ln]) == 4, "four stale lines")

        # without the object files, the call-only findings go and the include ones stay
        rc, out, _ = run(root)
        check("'low' (L0) includes 'high'" in out and "calls high_fn()" not in out and "circle" not in out,
              "without --build: include edges only")
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
