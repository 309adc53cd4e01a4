#!/usr/bin/python3
"""check_metrics.py - validates `ebsmigrate metrics` output with real parsers and against a report.

Usage: check_metrics.py OPENMETRICS_FILE [PROMETHEUS_FILE [REPORT_JSON]]

- OPENMETRICS_FILE is parsed by prometheus_client's OpenMetrics parser (strict: # EOF, UNIT
  matching the name suffix, escapes) and PROMETHEUS_FILE by its text-format 0.0.4 parser; both
  must hold the same samples.
- REPORT_JSON (`report -o json --group-by cluster,namespace,account,region` of the same fleet)
  must have exactly the metrics' groups and, per group, the same volumes, unpriced count, baseline,
  current, target, rightsize and realized/in flight/remaining/blocked savings, as exact decimals;
  the savings states of every group add up to baseline - target.

Prints, for the case's expected stdout: one line per family with its sample count and the sum of
its values (exact decimals), then "ok". Exits 1 with the first mismatch.
"""
import sys
from collections import defaultdict
from decimal import Decimal as D

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as prom_parse

GROUP = ("cluster", "namespace", "account", "region")


def samples(families):
    out = {}
    for fam in families:
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in out:
                sys.exit("duplicate sample %r" % (key,))
            out[key] = s.value
    return out


def raw_values(text):
    """name{labels} -> the value exactly as written (for exact decimals)."""
    vals = defaultdict(list)
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        name_labels, value = line.rsplit(" ", 1)
        name = name_labels.split("{", 1)[0]
        vals[name].append(D(value))
    return vals


def main():
    om_text = open(sys.argv[1], encoding="utf-8").read()
    if not om_text.endswith("# EOF\n"):
        sys.exit("OpenMetrics output does not end with # EOF")
    om_fams = list(om_parse(om_text))
    om = samples(om_fams)
    if len(sys.argv) > 2:
        prom = samples(prom_parse(open(sys.argv[2], encoding="utf-8").read()))
        if prom != om:
            diff = set(prom.items()) ^ set(om.items())
            sys.exit("the two formats differ: %r" % sorted(diff)[:4])
    by_group = defaultdict(dict)
    for (name, labels), value in om.items():
        lab = dict(labels)
        if all(k in lab for k in GROUP):
            g = tuple(lab[k] for k in GROUP)
            by_group[g][(name, lab.get("state"))] = value
    # exact decimals from the text (the parser's floats are only used for structure)
    exact = raw_values(om_text)
    if len(sys.argv) > 3:
        import json

        rep = json.load(open(sys.argv[3]), parse_float=D)
        groups = {tuple(g["key"][k] for k in GROUP): g for g in rep["groups"]}
        fleet_groups = {g for g, v in by_group.items() if ("ebsmigrate_volumes", None) in v}
        if set(groups) != fleet_groups:
            sys.exit("groups differ: report %r, metrics %r" % (sorted(groups), sorted(fleet_groups)))
        pairs = [
            ("ebsmigrate_volumes", None, "volumes"),
            ("ebsmigrate_unpriced_volumes", None, "unpriced"),
            ("ebsmigrate_baseline_monthly_cost_dollars", None, "baseline_monthly_usd"),
            ("ebsmigrate_current_monthly_cost_dollars", None, "current_monthly_usd"),
            ("ebsmigrate_target_monthly_cost_dollars", None, "target_monthly_usd"),
            ("ebsmigrate_rightsize_monthly_savings_dollars", None, "rightsize_monthly_usd"),
            ("ebsmigrate_monthly_savings_dollars", "realized", "realized_monthly_usd"),
            ("ebsmigrate_monthly_savings_dollars", "in_flight", "in_flight_monthly_usd"),
            ("ebsmigrate_monthly_savings_dollars", "remaining", "remaining_monthly_usd"),
            ("ebsmigrate_monthly_savings_dollars", "blocked", "blocked_monthly_usd"),
        ]
        for g, rg in groups.items():
            m = by_group[g]
            for name, state, field in pairs:
                # the float the parser read equals the report's exact value (cents fit a double)
                if D(str(m[(name, state)])).quantize(D("0.01")) != D(rg[field]).quantize(D("0.01")):
                    sys.exit("%s %s state=%s: metrics %r, report %s" % (g, name, state, m[(name, state)], rg[field]))
            parts = sum(D(str(m[("ebsmigrate_monthly_savings_dollars", s)])) for s in
                        ("realized", "in_flight", "remaining", "blocked"))
            planned = D(str(m[("ebsmigrate_baseline_monthly_cost_dollars", None)])) - D(
                str(m[("ebsmigrate_target_monthly_cost_dollars", None)]))
            if parts.quantize(D("0.01")) != planned.quantize(D("0.01")):
                sys.exit("%s: savings states add up to %s, planned %s" % (g, parts, planned))
    for fam in om_fams:
        print("%s samples=%d sum=%s" % (fam.name, len(fam.samples), sum(exact.get(fam.name, []), D(0))))
    print("ok")


if __name__ == "__main__":
    main()
