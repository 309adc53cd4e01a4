#!/usr/bin/python3
"""check_sarif.py FILE - validate a SARIF 2.1.0 log as `ebsmigrate check --sarif` writes it.

Two layers, neither written from ebsmigrate's code:
  1. the SARIF object model: every object's properties must be properties of its SARIF type and
     its required ones present, as Debian's python3-sarif-python-om (Microsoft's classes generated
     from the OASIS SARIF 2.1.0 JSON schema) declares them; the walk follows the schema's
     property types (run.results[] is a result, result.locations[] a location, ...);
  2. the rules the schema states as enums, ranges and formats, and what GitHub code scanning
     needs to show an alert (a ruleId whose ruleIndex points at that rule, a non-empty
     artifactLocation.uri that is a URI reference, region.startLine >= 1, partialFingerprints).

Prints "sarif ok: N rules, M results" and one line per result, "RULE LEVEL URI:LINE[ suppressed]",
or the first problem and exits 1.
"""
import json
import re
import sys
import urllib.parse

import attr
import sarif_om

# The SARIF type of each property that holds an object (or a list of them), by owning type.
CHILDREN = {
    "SarifLog": {"runs": "Run"},
    "Run": {"tool": "Tool", "results": "Result", "invocations": "Invocation", "artifacts": "Artifact"},
    "Tool": {"driver": "ToolComponent"},
    "ToolComponent": {"rules": "ReportingDescriptor", "shortDescription": "MultiformatMessageString",
                      "fullDescription": "MultiformatMessageString"},
    "ReportingDescriptor": {"shortDescription": "MultiformatMessageString",
                            "fullDescription": "MultiformatMessageString", "help": "MultiformatMessageString",
                            "defaultConfiguration": "ReportingConfiguration"},
    "Result": {"message": "Message", "locations": "Location", "suppressions": "Suppression"},
    "Location": {"physicalLocation": "PhysicalLocation", "logicalLocations": "LogicalLocation", "message": "Message"},
    "PhysicalLocation": {"artifactLocation": "ArtifactLocation", "region": "Region"},
}
FREE_FORM = {"properties", "partialFingerprints", "fingerprints"}  # property bags and string maps
LEVELS = {"none", "note", "warning", "error"}
KINDS = {"notApplicable", "pass", "fail", "review", "open", "informational"}


def fail(msg):
    print("sarif invalid: " + msg)
    sys.exit(1)


def fields(type_name):
    cls = getattr(sarif_om, type_name)
    names, required = set(), set()
    for a in attr.fields(cls):
        n = a.metadata["schema_property_name"]
        names.add(n)
        if a.default is attr.NOTHING:
            required.add(n)
    return names, required


def walk(obj, type_name, where):
    if not isinstance(obj, dict):
        fail(f"{where}: a {type_name} must be an object")
    names, required = fields(type_name)
    for k in obj:
        if k not in names:
            fail(f"{where}: '{k}' is not a property of {type_name}")
    for k in required:
        if k not in obj:
            fail(f"{where}: {type_name} lacks required '{k}'")
    for k, v in obj.items():
        if k in FREE_FORM:
            if not isinstance(v, dict):
                fail(f"{where}.{k}: must be an object")
            if k != "properties" and not all(isinstance(x, str) for x in v.values()):
                fail(f"{where}.{k}: values must be strings")
            continue
        child = CHILDREN.get(type_name, {}).get(k)
        if child is None:
            continue
        if isinstance(v, list):
            for i, item in enumerate(v):
                walk(item, child, f"{where}.{k}[{i}]")
        else:
            walk(v, child, f"{where}.{k}")


def is_uri_reference(s):
    return bool(s) and not re.search(r"[\s<>\"{}|\\^`\x00-\x1f]", s) and urllib.parse.urlsplit(s) is not None


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        log = json.load(f)
    walk(log, "SarifLog", "$")
    if log["version"] != "2.1.0":
        fail("version must be 2.1.0")
    lines = []
    n_rules = n_results = 0
    for ri, run in enumerate(log["runs"]):
        driver = run["tool"]["driver"]
        rules = driver.get("rules", [])
        ids = [r["id"] for r in rules]
        if len(set(ids)) != len(ids):
            fail(f"runs[{ri}]: rule ids are not unique")
        for r in rules:
            lvl = r.get("defaultConfiguration", {}).get("level", "warning")
            if lvl not in LEVELS:
                fail(f"rule {r['id']}: defaultConfiguration.level '{lvl}'")
        if run.get("columnKind", "unicodeCodePoints") not in ("utf16CodeUnits", "unicodeCodePoints"):
            fail(f"runs[{ri}].columnKind")
        n_rules += len(rules)
        for i, res in enumerate(run.get("results", [])):
            w = f"runs[{ri}].results[{i}]"
            n_results += 1
            if "text" not in res["message"] or not res["message"]["text"]:
                fail(f"{w}: message.text is required")
            rid, idx = res.get("ruleId"), res.get("ruleIndex", -1)
            if rid not in ids or idx < 0 or idx >= len(ids) or ids[idx] != rid:
                fail(f"{w}: ruleId {rid} / ruleIndex {idx} do not name one rule")
            if res.get("level", "warning") not in LEVELS or res.get("kind", "fail") not in KINDS:
                fail(f"{w}: level or kind outside the schema's enum")
            if not res.get("partialFingerprints"):
                fail(f"{w}: no partialFingerprints (GitHub would dedupe by line only)")
            locs = res.get("locations", [])
            if len(locs) != 1 or "physicalLocation" not in locs[0]:
                fail(f"{w}: one physicalLocation expected")
            pl = locs[0]["physicalLocation"]
            uri = pl.get("artifactLocation", {}).get("uri", "")
            if not is_uri_reference(uri):
                fail(f"{w}: artifactLocation.uri '{uri}' is not a URI reference")
            region = pl.get("region")
            line = ""
            if region is not None:
                for k in ("startLine", "startColumn", "endLine", "endColumn"):
                    if k in region and (not isinstance(region[k], int) or region[k] < 1):
                        fail(f"{w}: region.{k} must be an integer >= 1")
                if "startLine" not in region:
                    fail(f"{w}: region without startLine")
                line = f":{region['startLine']}"
            elif not uri.startswith("kubernetes://"):
                fail(f"{w}: a file location needs a region (GitHub GH1003)")
            for s in res.get("suppressions", []):
                if s["kind"] not in ("inSource", "external"):
                    fail(f"{w}: suppression kind '{s['kind']}'")
            lines.append(f"{rid} {res.get('level', 'warning')} {uri}{line}" +
                         (" suppressed" if res.get("suppressions") else ""))
    print(f"sarif ok: {n_rules} rules, {n_results} results")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
