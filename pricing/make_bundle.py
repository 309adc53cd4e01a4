#!/usr/bin/python3
"""make_bundle.py - writes the bundled EBS price cache, pricing/ec2-ebs-REGIONCODE.json.

Each file is one AWS Pricing API GetProducts response for ServiceCode AmazonEC2 filtered to one
regionCode, in the wire format AWS uses ({"FormatVersion":"aws_v1","PriceList":[...]} where every
PriceList element is a product document serialised as a JSON *string*). ebsmigrate embeds these
files at build time and parses them with the same code that parses a live `pricing refresh`.

The prices are the table in the project's FACTS.md section 4 (checked against the Seoul field
benchmark); nothing is fetched. Output is deterministic: SKUs are a hash of region + usagetype,
every term is effective 2026-09-01, so re-running without changes gives identical bytes.

    /usr/bin/python3 pricing/make_bundle.py            # rewrite pricing/*.json
    /usr/bin/python3 pricing/make_bundle.py --check    # exit 1 if a file differs from the table

Stdlib only.
"""

import argparse
import base64
import hashlib
import json
import os
import sys
from decimal import Decimal

EFFECTIVE = "2026-09-01T00:00:00Z"
PUBLICATION = "2026-09-01T00:00:00Z"
VERSION = "20260901000000"
ONDEMAND = "JRTCKXETXF"  # the OnDemand offer term code AWS uses
RATE = "6YS6EN2CT7"      # the rate code suffix AWS uses for a single-dimension price

# FACTS.md section 4, one row per table line; a row may cover several regions.
# columns: gp2, gp3 (GB-Mo), gp3 IOPS (IOPS-Mo), gp3 throughput (per MiB/s-Mo), io1, st1, sc1 (GB-Mo)
TABLE = [
    (["us-east-1", "us-east-2", "us-west-2"], "0.10", "0.08", "0.005", "0.04", "0.125", "0.045", "0.015"),
    (["us-west-1"], "0.12", "0.096", "0.006", "0.048", "0.138", "0.054", "0.018"),
    (["ca-central-1", "eu-west-1"], "0.11", "0.088", "0.0055", "0.044", "0.138", "0.05", "0.0168"),
    (["eu-west-2", "eu-west-3"], "0.116", "0.0928", "0.0058", "0.0464", "0.145", "0.053", "0.0174"),
    (["eu-central-1"], "0.119", "0.0952", "0.006", "0.0476", "0.149", "0.054", "0.018"),
    (["eu-north-1"], "0.1045", "0.0836", "0.0052", "0.0418", "0.1311", "0.0475", "0.01596"),
    (["eu-south-1"], "0.1155", "0.0924", "0.0058", "0.0462", "0.1449", "0.0525", "0.01764"),
    (["ap-northeast-1", "ap-northeast-3"], "0.12", "0.096", "0.006", "0.048", "0.142", "0.054", "0.018"),
    (["ap-northeast-2"], "0.114", "0.0912", "0.0057", "0.0456", "0.1278", "0.051", "0.0174"),
    (["ap-south-1"], "0.114", "0.0912", "0.0057", "0.0456", "0.131", "0.051", "0.0174"),
    (["ap-southeast-1", "ap-southeast-2"], "0.12", "0.096", "0.006", "0.048", "0.138", "0.054", "0.018"),
    (["ap-east-1"], "0.132", "0.1056", "0.0066", "0.0528", "0.1518", "0.0594", "0.0198"),
    (["me-south-1"], "0.121", "0.0968", "0.0061", "0.0484", "0.1518", "0.055", "0.01848"),
    (["af-south-1"], "0.1309", "0.1047", "0.0065", "0.05235", "0.16422", "0.0595", "0.019992"),
    (["sa-east-1"], "0.19", "0.152", "0.0095", "0.076", "0.238", "0.086", "0.0288"),
]

# io1 IOPS: only where FACTS.md gives a price. Elsewhere it is unknown (volumes are `unpriced`).
IO1_IOPS = {"us-east-1": "0.065", "ap-northeast-2": "0.0666", "eu-central-1": "0.078",
            "ap-northeast-1": "0.074"}
# io2 IOPS tiers (beginRange, endRange, price): only us-east-1 is known.
IO2_IOPS = {"us-east-1": [("0", "32000", "0.065"), ("32000", "64000", "0.0455"),
                          ("64000", "Inf", "0.032")]}

# usagetype region prefix (none in us-east-1) and the Pricing API's location name.
REGIONS = {
    "us-east-1": ("", "US East (N. Virginia)"),
    "us-east-2": ("USE2-", "US East (Ohio)"),
    "us-west-1": ("USW1-", "US West (N. California)"),
    "us-west-2": ("USW2-", "US West (Oregon)"),
    "ca-central-1": ("CAN1-", "Canada (Central)"),
    "eu-west-1": ("EU-", "EU (Ireland)"),
    "eu-west-2": ("EUW2-", "EU (London)"),
    "eu-west-3": ("EUW3-", "EU (Paris)"),
    "eu-central-1": ("EUC1-", "EU (Frankfurt)"),
    "eu-north-1": ("EUN1-", "EU (Stockholm)"),
    "eu-south-1": ("EUS1-", "EU (Milan)"),
    "ap-northeast-1": ("APN1-", "Asia Pacific (Tokyo)"),
    "ap-northeast-2": ("APN2-", "Asia Pacific (Seoul)"),
    "ap-northeast-3": ("APN3-", "Asia Pacific (Osaka)"),
    "ap-south-1": ("APS3-", "Asia Pacific (Mumbai)"),
    "ap-southeast-1": ("APS1-", "Asia Pacific (Singapore)"),
    "ap-southeast-2": ("APS2-", "Asia Pacific (Sydney)"),
    "ap-east-1": ("APE1-", "Asia Pacific (Hong Kong)"),
    "me-south-1": ("MES1-", "Middle East (Bahrain)"),
    "af-south-1": ("AFS1-", "Africa (Cape Town)"),
    "sa-east-1": ("SAE1-", "South America (Sao Paulo)"),
}

# volumeApiName -> (usagetype suffix, volumeType, storageMedia, maxVolumeSize, maxIops, maxThroughput, label)
STORAGE = {
    "gp2": ("EBS:VolumeUsage.gp2", "General Purpose", "SSD-backed", "16 TiB", "16000", "250 MiB/s",
            "General Purpose SSD (gp2)"),
    "gp3": ("EBS:VolumeUsage.gp3", "General Purpose", "SSD-backed", "64 TiB", "80000", "2000 MiB/s",
            "General Purpose SSD (gp3)"),
    "io1": ("EBS:VolumeUsage.piops", "Provisioned IOPS", "SSD-backed", "16 TiB", "64000", "1000 MiB/s",
            "Provisioned IOPS SSD (io1)"),
    "io2": ("EBS:VolumeUsage.io2", "Provisioned IOPS", "SSD-backed", "64 TiB", "256000", "4000 MiB/s",
            "Provisioned IOPS SSD (io2)"),
    "st1": ("EBS:VolumeUsage.st1", "Throughput Optimized HDD", "HDD-backed", "16 TiB", "500",
            "500 MiB/s", "Throughput Optimized HDD (st1)"),
    "sc1": ("EBS:VolumeUsage.sc1", "Cold HDD", "HDD-backed", "16 TiB", "250", "250 MiB/s",
            "Cold HDD (sc1)"),
}

# Non-volume products kept so parsers must filter. Their prices are placeholders that ebsmigrate
# never reads; they are not part of the FACTS.md table.
PLACEHOLDER_SNAPSHOT = "0.05"
PLACEHOLDER_INSTANCE = "0.192"


def regions_from_table():
    out = {}
    for names, gp2, gp3, iops, mibps, io1, st1, sc1 in TABLE:
        for r in names:
            if r in out:
                raise SystemExit(f"make_bundle: region {r} appears twice in TABLE")
            out[r] = dict(gp2=gp2, gp3=gp3, iops=iops, mibps=mibps, io1=io1, st1=st1, sc1=sc1)
    missing = set(out) ^ set(REGIONS)
    if missing:
        raise SystemExit(f"make_bundle: TABLE and REGIONS disagree on {sorted(missing)}")
    return out


def price10(s):
    """A price as the API writes it: ten decimals, exact (refuses anything that would round)."""
    d = Decimal(s)
    q = d.quantize(Decimal("0.0000000001"))
    if q != d or d < 0:
        raise SystemExit(f"make_bundle: price {s} is not exact at ten decimals")
    return f"{q:.10f}"


def short(s):
    """The price as AWS writes it in descriptions: trailing zeros trimmed, at least 2 decimals."""
    t = f"{Decimal(s):f}"
    if "." in t:
        t = t.rstrip("0")
        whole, frac = t.split(".")
        t = whole + "." + frac.ljust(2, "0")
    return t


def sku_for(region, usagetype):
    digest = hashlib.sha256(f"{region}|{usagetype}".encode()).digest()
    return base64.b32encode(digest).decode()[:16]


def product(region, family, attrs, dims):
    """One PriceList element (a dict; the caller serialises it). dims: [(unit, price, desc, begin, end)]."""
    prefix, location = REGIONS[region]
    usagetype = attrs["usagetype"]
    sku = sku_for(region, usagetype)
    full = dict(attrs)
    full.update({"locationType": "AWS Region", "location": location, "regionCode": region,
                 "servicecode": "AmazonEC2", "servicename": "Amazon Elastic Compute Cloud"})
    full.setdefault("operation", "")
    term_code = f"{sku}.{ONDEMAND}"
    price_dims = {}
    for i, (unit, price, desc, begin, end) in enumerate(dims):
        rate_code = f"{term_code}.{RATE}" if len(dims) == 1 else f"{term_code}.{RATE[:-1]}{i}"
        price_dims[rate_code] = {
            "unit": unit, "endRange": end, "description": desc, "appliesTo": [],
            "rateCode": rate_code, "beginRange": begin, "pricePerUnit": {"USD": price10(price)},
        }
    return {
        "product": {"productFamily": family, "attributes": dict(sorted(full.items())), "sku": sku},
        "serviceCode": "AmazonEC2",
        "terms": {"OnDemand": {term_code: {
            "priceDimensions": price_dims, "sku": sku, "effectiveDate": EFFECTIVE,
            "offerTermCode": ONDEMAND, "termAttributes": {}}}},
        "version": VERSION,
        "publicationDate": PUBLICATION,
    }


def products_for(region, p):
    prefix, location = REGIONS[region]
    out = []
    storage_price = dict(gp2=p["gp2"], gp3=p["gp3"], io1=p["io1"], io2=p["io1"], st1=p["st1"],
                         sc1=p["sc1"])
    for api, (suffix, vtype, media, maxsize, maxiops, maxtput, label) in STORAGE.items():
        price = storage_price[api]
        out.append(product(region, "Storage", {
            "usagetype": prefix + suffix, "volumeApiName": api, "volumeType": vtype,
            "storageMedia": media, "maxVolumeSize": maxsize, "maxIopsvolume": maxiops,
            "maxThroughputvolume": maxtput}, [(
                "GB-Mo", price,
                f"${short(price)} per GB-month of {label} provisioned storage - {location}",
                "0", "Inf")]))
    out.append(product(region, "System Operation", {
        "usagetype": prefix + "EBS:VolumeP-IOPS.gp3", "volumeApiName": "gp3",
        "volumeType": "General Purpose", "group": "EBS IOPS", "groupDescription": "IOPS",
        "provisioned": "Yes"}, [(
            "IOPS-Mo", p["iops"],
            f"${short(p['iops'])} per IOPS-month provisioned above 3000 for gp3 - {location}",
            "0", "Inf")]))
    gibps = str(Decimal(p["mibps"]) * 1024)
    out.append(product(region, "Provisioned Throughput", {
        "usagetype": prefix + "EBS:VolumeP-Throughput.gp3", "volumeApiName": "gp3",
        "volumeType": "General Purpose", "group": "EBS Throughput",
        "groupDescription": "Throughput", "provisioned": "Yes"}, [(
            "GiBps-mo", gibps,
            f"${short(gibps)} per GiBps-month of throughput provisioned above 125 MiBps for gp3"
            f" - {location}", "0", "Inf")]))
    if region in IO1_IOPS:
        price = IO1_IOPS[region]
        out.append(product(region, "System Operation", {
            "usagetype": prefix + "EBS:VolumeP-IOPS.piops", "volumeApiName": "io1",
            "volumeType": "Provisioned IOPS", "group": "EBS IOPS", "groupDescription": "IOPS",
            "provisioned": "Yes"}, [(
                "IOPS-Mo", price,
                f"${short(price)} per IOPS-month provisioned for io1 - {location}", "0", "Inf")]))
    for tier, (begin, end, price) in enumerate(IO2_IOPS.get(region, [])):
        suffix = "EBS:VolumeP-IOPS.io2" + ("" if tier == 0 else f".tier{tier + 1}")
        out.append(product(region, "System Operation", {
            "usagetype": prefix + suffix, "volumeApiName": "io2", "volumeType": "Provisioned IOPS",
            "group": "EBS IOPS", "groupDescription": "IOPS", "provisioned": "Yes"}, [(
                "IOPS-Mo", price,
                f"${short(price)} per IOPS-month provisioned for io2 from {begin} to {end} IOPS"
                f" - {location}", begin, end)]))
    # Not volumes: present so that parsers have to filter them out.
    out.append(product(region, "Storage Snapshot", {
        "usagetype": prefix + "EBS:SnapshotUsage", "storageMedia": "Amazon S3"}, [(
            "GB-Mo", PLACEHOLDER_SNAPSHOT,
            f"${short(PLACEHOLDER_SNAPSHOT)} per GB-month of snapshot data stored - {location}",
            "0", "Inf")]))
    out.append(product(region, "Compute Instance", {
        "usagetype": prefix + "BoxUsage:m5.xlarge", "instanceType": "m5.xlarge",
        "instanceFamily": "General purpose", "vcpu": "4", "memory": "16 GiB",
        "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
        "capacitystatus": "Used", "licenseModel": "No License required",
        "operation": "RunInstances"}, [(
            "Hrs", PLACEHOLDER_INSTANCE,
            f"${short(PLACEHOLDER_INSTANCE)} per On Demand Linux m5.xlarge Instance Hour",
            "0", "Inf")]))
    return out


def render(region, p):
    elems = [json.dumps(x, separators=(",", ":")) for x in products_for(region, p)]
    body = {"FormatVersion": "aws_v1", "PriceList": elems}
    return json.dumps(body, indent=1) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="directory to write (default: the directory of this script)")
    ap.add_argument("--check", action="store_true",
                    help="compare instead of writing; exit 1 on any difference")
    args = ap.parse_args()
    table = regions_from_table()
    bad = 0
    for region in sorted(table):
        path = os.path.join(args.out, f"ec2-ebs-{region}.json")
        text = render(region, table[region])
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if not same:
                print(f"make_bundle: {path} differs from the table", file=sys.stderr)
                bad += 1
            continue
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    if not args.check:
        print(f"make_bundle: wrote {len(table)} files to {args.out}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
