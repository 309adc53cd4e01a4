#!/usr/bin/python3
"""check_markdown_tables.py FILE... - checks that every table of a Markdown document keeps its
shape as GitHub reads it (case 1740): each row is split into cells the way cmark-gfm does (a
backslash escapes the next character, so only an unescaped '|' ends a cell) and must have as
many cells as the table's header; no raw control character may stand in a row. Prints one line
per file with its tables' and rows' counts; an assertion names the first row that breaks."""
import re, sys

CELL = re.compile(r"(?:\\.|[^|\\])*")


def cells(row):
    row = row.strip()
    assert row.startswith("|") and row.endswith("|") and not row.endswith("\\|"), row
    inner, out, pos = row[1:-1], [], 0
    while True:
        m = CELL.match(inner, pos)
        out.append(m.group(0))
        pos = m.end()
        if pos >= len(inner):
            return out
        assert inner[pos] == "|", (row, pos)
        pos += 1


for path in sys.argv[1:]:
    lines = open(path, encoding="utf-8").read().split("\n")
    tables = rows = 0
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].startswith("|") and re.fullmatch(r"\|(-+:?\|)+", lines[i + 1]):
            width = len(cells(lines[i]))
            assert len(cells(lines[i + 1])) == width, (path, lines[i + 1])
            tables += 1
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                assert not re.search(r"[\x00-\x1f\x7f]", lines[i]), (path, lines[i])
                got = cells(lines[i])
                assert len(got) == width, (path, lines[i], len(got), width)
                rows += 1
                i += 1
        else:
            i += 1
    assert tables, path + ": no table"
    print("%s: %d table(s), %d row(s), every row as wide as its header" % (path, tables, rows))
