#!/usr/bin/python3
"""check_junit.py FILE - validate a JUnit XML report as GitLab's and Jenkins' readers take it.

Parsed with Python's XML parser (a file that is not well-formed XML fails here). Checked: the
root is <testsuites> holding <testsuite> elements; every suite has a name and tests/failures/
errors counts that equal what it holds; every <testcase> has a name and a classname and at most
one <failure> (with a message and a type) or <error>; the root's counts are the suites' sums.
Prints "junit ok: T tests, F failures in S suites", then one line per test case,
"SUITE | NAME | passed|failed TYPE", or the first problem and exits 1.
"""
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("junit invalid: " + msg)
    sys.exit(1)


def count(el, name):
    v = el.get(name)
    if v is None or not v.isdigit():
        fail(f"<{el.tag} name='{el.get('name')}'>: {name}='{v}' is not a count")
    return int(v)


def main():
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except ET.ParseError as e:
        fail(f"not well-formed XML: {e}")
    if root.tag != "testsuites":
        fail(f"root is <{root.tag}>, not <testsuites>")
    total_tests = total_failures = 0
    lines = []
    suites = root.findall("testsuite")
    if len(suites) != len(list(root)):
        fail("<testsuites> holds something other than <testsuite>")
    for s in suites:
        if not s.get("name"):
            fail("a testsuite without a name")
        cases = s.findall("testcase")
        failed = 0
        for c in cases:
            if not c.get("name") or not c.get("classname"):
                fail(f"suite {s.get('name')}: a testcase without name or classname")
            fails = c.findall("failure") + c.findall("error")
            if len(fails) > 1:
                fail(f"testcase {c.get('name')}: more than one failure")
            if fails:
                f = fails[0]
                if not f.get("message") or not f.get("type"):
                    fail(f"testcase {c.get('name')}: failure without message or type")
                failed += 1
                lines.append(f"{s.get('name')} | {c.get('name')} | failed {f.get('type')}")
            else:
                lines.append(f"{s.get('name')} | {c.get('name')} | passed")
        if count(s, "tests") != len(cases) or count(s, "failures") != failed or count(s, "errors") != 0:
            fail(f"suite {s.get('name')}: counts do not match its test cases")
        total_tests += len(cases)
        total_failures += failed
    if count(root, "tests") != total_tests or count(root, "failures") != total_failures:
        fail("<testsuites> counts are not the sums of its suites")
    print(f"junit ok: {total_tests} tests, {total_failures} failures in {len(suites)} suites")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
