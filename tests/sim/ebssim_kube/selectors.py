"""ebssim_kube.selectors: label selectors (equality, set-based, existence) and field selectors,
parsed as the apiserver does; SelectorError carries its message.
"""

import re

# ----------------------------------------------------------------------------------------------
# selectors


class SelectorError(Exception):
    pass


def parse_label_selector(s):
    """-> list of (key, op, values) with op in = != in notin exists !exists gt lt."""
    reqs = []
    if not s:
        return reqs
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p:
            raise SelectorError("found '', expected: !, identifier, or 'end of string'")
        m = re.match(r"^([A-Za-z0-9_./-]+)\s+(in|notin)\s*\(([^)]*)\)$", p)
        if m:
            reqs.append((m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",") if v.strip()]))
            continue
        m = re.match(r"^([A-Za-z0-9_./-]+)\s*(==|!=|=|>|<)\s*([A-Za-z0-9_.-]*)$", p)
        if m:
            op = {"==": "=", "=": "=", "!=": "!=", ">": "gt", "<": "lt"}[m.group(2)]
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        m = re.match(r"^(!?)\s*([A-Za-z0-9_./-]+)$", p)
        if m:
            reqs.append((m.group(2), "!exists" if m.group(1) else "exists", []))
            continue
        raise SelectorError("unable to parse requirement: %s" % p)
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=" and (not has or v != vals[0]):
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and (not has or v not in vals):
            return False
        if op == "notin" and has and v in vals:
            return False
        if op == "exists" and not has:
            return False
        if op == "!exists" and has:
            return False
        if op in ("gt", "lt"):
            try:
                a, b = int(v), int(vals[0])
            except (TypeError, ValueError):
                return False
            if (op == "gt" and not a > b) or (op == "lt" and not a < b):
                return False
    return True


def parse_field_selector(s):
    reqs = []
    if not s:
        return reqs
    for p in re.split(r"(?<!\\),", s):
        p = p.strip()
        if not p:
            continue
        m = re.match(r"^([^=!]+?)\s*(==|!=|=)\s*(.*)$", p)
        if not m:
            raise SelectorError("invalid selector: '%s'; can't understand '%s'" % (s, p))
        reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3).replace("\\,", ",")))
    return reqs
