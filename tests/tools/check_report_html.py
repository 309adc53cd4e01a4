#!/usr/bin/python3
"""check_report_html.py SHOT.png DOM.html REPORT.json REALIZED_USD - checks an HTML report as a
browser rendered it (case 0513): the screenshot is a PNG that is not blank and shows the chart's
realized (green) and remaining (blue) bars, decoded with the standard library only; the dumped
DOM's numbers (each cell's data-field/data-value, the summary cards) equal the JSON report on the
same inputs, group by group and in the totals; the realized card equals REALIZED_USD.
Prints what it checked; an assertion names the first difference."""
import json, struct, sys, zlib
from decimal import Decimal as D
from html.parser import HTMLParser

shot_path, dom_path, report_path, want_realized = sys.argv[1:5]

# --- the screenshot: a PNG that is not blank
data = open(shot_path, "rb").read()
assert len(data) > 1000 and data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = ihdr[:4]
assert depth == 8 and ctype in (2, 6), ihdr
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours = set()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 3 == 0:
        for x in range(0, stride, bpp * 3):
            colours.add(bytes(line[x:x + 3]))
    prev = line
assert len(colours) > 16, f"screenshot looks blank: {len(colours)} colours"
# the bars' colours are on screen: realized green #2da44e and not started (remaining) blue #0969da
assert bytes((0x09, 0x69, 0xda)) in colours and bytes((0x2d, 0xa4, 0x4e)) in colours, "no chart bars"
print(f"screenshot {w}x{h}, not blank")

# --- the DOM: every number equals the JSON report
class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cards, self.keys = [], None, {}, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and (a.get("class") == "group" or a.get("id") == "totals"):
            self.row = {"_index": a.get("data-index"), "_totals": a.get("id") == "totals", "_keys": {}}
            self.rows.append(self.row)
        elif tag == "td" and self.row is not None and "data-field" in a:
            self.row[a["data-field"]] = a["data-value"]
        elif tag == "td" and self.row is not None and "data-key" in a:
            self.keys = [self.row, a["data-key"]]
        elif tag == "div" and a.get("id", "").startswith("card-"):
            self.cards[a["id"]] = a["data-value"]
    def handle_data(self, text):
        if self.keys:
            self.keys[0]["_keys"][self.keys[1]] = text
            self.keys = []
    def handle_endtag(self, tag):
        if tag == "tr":
            self.row = None

dom = Dom()
dom.feed(open(dom_path).read())
r = json.load(open(report_path), parse_float=D)
groups = [x for x in dom.rows if not x["_totals"]]
totals = [x for x in dom.rows if x["_totals"]]
assert len(groups) == len(r["groups"]) and len(totals) == 1, (len(groups), len(r["groups"]))
fields = ("volumes", "size_gib", "migrated", "baseline_monthly_usd", "current_monthly_usd", "target_monthly_usd",
          "planned_savings_monthly_usd", "realized_monthly_usd", "in_flight_monthly_usd", "remaining_monthly_usd",
          "blocked_monthly_usd", "rightsize_monthly_usd")
def same(dom_value, json_value):
    return (dom_value == "" and json_value is None) or D(dom_value) == D(json_value)
checked = 0
for row, g in zip(groups + totals, r["groups"] + [r["totals"]]):
    for f in fields:
        assert same(row[f], g[f]), (f, row[f], g[f])
        checked += 1
    if "key" in g:
        assert row["_keys"] == g["key"], (row["_keys"], g["key"])
t = r["totals"]
assert D(dom.cards["card-planned"]) == D(t["planned_savings_monthly_usd"])
assert D(dom.cards["card-realized"]) == D(t["realized_monthly_usd"]) == D(want_realized)
assert D(dom.cards["card-in-flight"]) == D(t["in_flight_monthly_usd"])
assert D(dom.cards["card-remaining"]) == D(t["remaining_monthly_usd"])
assert D(dom.cards["card-blocked"]) == D(t["blocked_monthly_usd"])
print(f"DOM equals JSON: {len(groups)} groups + totals, {checked} numbers")
