#!/usr/bin/python3
"""check_links.py - help and docs never point at files that do not exist.

Usage: check_links.py SOURCE_DIR EBSMIGRATE_BINARY

Checks (each problem is one line on stdout; exit 1 if any):
  * every relative link [text](target) in README.md and docs/*.md names an existing file, and
    its #anchor (if any) a heading of that Markdown file (GitHub's slugs);
  * every repository path (docs/..., examples/..., tests/..., templates/..., pricing/...,
    packaging/..., scripts/...) that `ebsmigrate help` or `ebsmigrate help COMMAND` mentions
    exists, and so does every such path written in the docs' text outside code blocks.
Prints a count of what was checked, so a run that checks nothing is visible.
The link check (link_problems) is also scripts/checksrc's doc-link rule, over every Markdown file.
"""
import glob
import os
import re
import subprocess
import sys

ROOTS = ("docs", "examples", "tests", "templates", "pricing", "packaging", "scripts", "migrations", "src", "cmake")
PATH_RE = re.compile(r"(?<![\w./$-])((?:%s)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/*])" % "|".join(ROOTS))
LINK_RE = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(heading, seen):
    s = heading.strip().lower()
    s = re.sub(r"`", "", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    s = s.replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else "%s-%d" % (s, n)


def strip_code(text):
    """The text without fenced code blocks; inline code kept apart (it may hold paths)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            out.append("")
            continue
        out.append("" if fence else line)
    return "\n".join(out)


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        with open(path, encoding="utf-8") as f:
            for line in strip_code(f.read()).split("\n"):
                m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    found.add(slug(m.group(1), seen))
                for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
                    found.add(a)
        cache[path] = found
    return cache[path]


def doc_links(text):
    """(line, target) of every relative link of a Markdown text (code blocks left out)."""
    return [(lineno, target) for lineno, line in enumerate(strip_code(text).split("\n"), 1)
            for target in LINK_RE.findall(line) if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]  # not https:


def link_problems(doc, src):
    """(line, message) for each relative link of the Markdown file `doc` to a file that does not
    exist, or to a heading its Markdown file does not have. scripts/checksrc runs this over every
    Markdown file of the repository; main() over the docs, with the help pages' paths."""
    out = []
    for lineno, target in doc_links(open(doc, encoding="utf-8").read()):
        file_part, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(doc), file_part)) if file_part else doc
        if not os.path.exists(dest):
            out.append((lineno, "link '%s': no such file" % target))
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            out.append((lineno, "link '%s': no heading '#%s' in %s" % (target, anchor, os.path.relpath(dest, src))))
    return out


def main():
    src, em = sys.argv[1], sys.argv[2]
    problems, n_links, n_paths = [], 0, 0
    docs = [os.path.join(src, "README.md")] + sorted(
        os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))

    def check_path(where, p):
        nonlocal n_paths
        n_paths += 1
        p = p.rstrip(".")
        if any(re.match(r"^[A-Z]{3,}", seg) for seg in p.split("/")):
            return  # a placeholder (TARGET, NAME.json, NNNN-name.case), not a file
        full = os.path.join(src, p)
        if "*" in p:
            ok = bool(glob.glob(full))  # a pattern: something must match it
        elif re.search(r"/[0-9]+$", p):
            ok = bool(glob.glob(full + "*"))  # a case number (as in "0101-0105")
        else:
            ok = os.path.exists(full)
        if not ok:
            problems.append("%s: '%s' does not exist" % (where, p))

    for doc in docs:
        rel = os.path.relpath(doc, src)
        text = strip_code(open(doc, encoding="utf-8").read())
        n_links += len(doc_links(text))
        problems.extend("%s:%d: %s" % (rel, lineno, msg) for lineno, msg in link_problems(doc, src))
        for lineno, line in enumerate(text.split("\n"), 1):
            where = "%s:%d" % (rel, lineno)
            for p in PATH_RE.findall(re.sub(r"\]\([^)]*\)", "]", line)):
                check_path(where, p)

    listing = subprocess.run([em, "help"], capture_output=True, text=True, check=True).stdout
    commands = re.findall(r"^  ([a-z][a-z0-9-]*) ", listing, re.M)
    pages = {"ebsmigrate help": listing}
    for c in commands:
        pages["ebsmigrate help " + c] = subprocess.run([em, "help", c], capture_output=True, text=True,
                                                       check=True).stdout
    for where, text in pages.items():
        for p in PATH_RE.findall(text):
            check_path(where, p)
    for p in problems:
        print(p)
    print("checked %d links and %d paths in %d documents and %d help pages: %d problems"
          % (n_links, n_paths, len(docs), len(pages), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
