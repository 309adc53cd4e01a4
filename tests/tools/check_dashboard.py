#!/usr/bin/python3
"""check_dashboard.py - the Grafana dashboard against what `ebsmigrate metrics` writes.

Usage: check_dashboard.py DASHBOARD_JSON METRICS_OPENMETRICS RULES_OUT

Every metric name (ebsmigrate_...) in a panel query or a template variable's query must be a
family of the metrics output with at least one sample (parsed with prometheus_client's OpenMetrics
parser). Every panel query is also written as a recording rule to RULES_OUT, so `promtool check
rules RULES_OUT` checks its PromQL. Prints the names checked and "ok"; exits 1 naming the first
unknown metric.
"""
import json
import re
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

NAME = re.compile(r"\bebsmigrate_[a-z0-9_]+")


def exprs(dash):
    for p in dash["panels"]:
        for t in p.get("targets", []):
            yield p["title"], t["expr"]
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if isinstance(q, str) and "ebsmigrate_" in q:
            yield "variable " + v["name"], q


def main():
    dash = json.load(open(sys.argv[1]))
    fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[2], encoding="utf-8").read())}
    used = set()
    rules = []
    for where, e in exprs(dash):
        for name in NAME.findall(e):
            used.add(name)
            if name not in fams:
                sys.exit("%s: %s is not a metric ebsmigrate writes" % (where, name))
            if not fams[name].samples:
                sys.exit("%s: %s has no samples in this output" % (where, name))
        if not where.startswith("variable"):
            # the dashboard's variables as a regex that matches everything
            rules.append(e.replace("$cluster", ".*").replace("$namespace", ".*"))
    with open(sys.argv[3], "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, e in enumerate(rules):
            f.write("      - record: dashboard:query_%d\n        expr: %s\n" % (i, json.dumps(e)))
    print("queried: " + " ".join(sorted(used)))
    print("unused: " + " ".join(sorted(set(fams) - used)))
    print("ok")


if __name__ == "__main__":
    main()
