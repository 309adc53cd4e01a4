"""Self-tests of the simulated EC2 API through botocore's own ec2 client (so responses are
parsed with AWS's service model) and raw signed requests (exact XML).
Run: /usr/bin/python3 -m unittest tests/sim/test_ec2.py"""

import json
import os
import subprocess
import tempfile
import unittest
import urllib.error
import xml.etree.ElementTree as ET

import botocore.exceptions

from simtest import EBSSIM, READONLY, SimProcess, SimTestCase

NS = "{http://ec2.amazonaws.com/doc/2016-11-15/}"
V = "vol-0aa0000000000000"


def code_of(ctx):
    return ctx.exception.response["Error"]["Code"], ctx.exception.response["Error"]["Message"]


class BasicEc2(SimTestCase):
    @classmethod
    def set_up_sim(cls):
        cls.ec2 = cls.sim.client("ec2")

    def test_describe_per_region_from_credential_scope(self):
        ids = [v["VolumeId"] for v in self.ec2.describe_volumes()["Volumes"]]
        self.assertEqual(ids, [V + "%x" % i for i in range(1, 11)])
        seoul = self.sim.client("ec2", region="ap-northeast-2").describe_volumes()["Volumes"]
        self.assertEqual(len(seoul), 5)
        self.assertEqual(self.sim.client("ec2", region="eu-west-1").describe_volumes()["Volumes"], [])

    def test_volume_fields(self):
        vols = {v["VolumeId"]: v for v in self.ec2.describe_volumes()["Volumes"]}
        a = vols[V + "1"]
        self.assertEqual((a["VolumeType"], a["Size"], a["Iops"], a["State"]), ("gp2", 100, 300, "in-use"))
        self.assertNotIn("Throughput", a)
        self.assertEqual(a["Attachments"][0]["InstanceId"], "i-0aa00000000000001")
        self.assertEqual(a["Attachments"][0]["State"], "attached")
        self.assertIn({"Key": "kubernetes.io/created-for/pvc/name", "Value": "data-postgres-0"}, a["Tags"])
        e = vols[V + "5"]
        self.assertEqual((e["VolumeType"], e["Iops"], e["Throughput"]), ("gp3", 3000, 125))
        self.assertEqual(vols[V + "7"]["State"], "available")
        self.assertEqual(vols[V + "7"]["Attachments"], [])
        self.assertNotIn("Iops", vols[V + "a"])  # st1 has no IOPS figure

    def test_pagination_page_size_5(self):
        pages = list(self.ec2.get_paginator("describe_volumes").paginate(PaginationConfig={"PageSize": 5}))
        self.assertEqual([len(p["Volumes"]) for p in pages], [5, 5])
        self.assertIn("NextToken", pages[0])
        self.assertNotIn("NextToken", pages[-1])
        got = [v["VolumeId"] for p in pages for v in p["Volumes"]]
        self.assertEqual(len(set(got)), 10)
        pages = list(self.ec2.get_paginator("describe_volumes").paginate(
            Filters=[{"Name": "volume-type", "Values": ["gp2"]}], PaginationConfig={"PageSize": 5}))
        gp2 = self.ec2.describe_volumes(Filters=[{"Name": "volume-type", "Values": ["gp2"]}])["Volumes"]
        self.assertEqual(sum(len(p["Volumes"]) for p in pages), len(gp2))
        self.assertTrue(all(len(p["Volumes"]) <= 5 for p in pages))

    def test_filters(self):
        def ids(filters):
            return sorted(v["VolumeId"][-1] for v in self.ec2.describe_volumes(Filters=filters)["Volumes"])
        self.assertEqual(ids([{"Name": "volume-type", "Values": ["gp3", "io1"]}]), ["5", "6"])
        self.assertEqual(ids([{"Name": "status", "Values": ["available"]}]), ["7"])
        self.assertEqual(ids([{"Name": "tag:kubernetes.io/created-for/pvc/name", "Values": ["data-postgres-0"]}]), ["1"])
        self.assertEqual(ids([{"Name": "tag:kubernetes.io/created-for/pvc/name", "Values": ["data-*"]}]),
                         ["1", "2", "5", "6", "9"])
        self.assertEqual(ids([{"Name": "attachment.instance-id", "Values": ["i-0aa00000000000002"]},
                              {"Name": "volume-type", "Values": ["gp2"]}]), ["3", "8"])
        self.assertEqual(ids([{"Name": "tag-key", "Values": ["Name"]}]), ["7"])
        self.assertEqual(ids([{"Name": "availability-zone", "Values": ["us-east-1b"]}]), ["3", "5", "7", "8", "a"])
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes(Filters=[{"Name": "colour", "Values": ["blue"]}])
        self.assertEqual(code_of(c), ("InvalidParameterValue", "The filter 'colour' is invalid"))

    def test_volume_id_errors(self):
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes(VolumeIds=["vol-0aa000000000000ff"])
        self.assertEqual(code_of(c), ("InvalidVolume.NotFound", "The volume 'vol-0aa000000000000ff' does not exist."))
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes(VolumeIds=["vol-nothex"])
        self.assertEqual(code_of(c)[0], "InvalidVolumeID.Malformed")
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes(VolumeIds=[V + "1"], MaxResults=5)
        self.assertEqual(code_of(c), ("InvalidParameterCombination",
                                      "The parameter volumeSet cannot be used with the parameter maxResults"))
        for n in (4, 1001):
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                self.ec2.describe_volumes(MaxResults=n)
            self.assertEqual(code_of(c)[0], "InvalidParameterValue")
            self.assertEqual(c.exception.response["ResponseMetadata"]["HTTPStatusCode"], 400)
        # the Seoul volume does not exist in us-east-1
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes(VolumeIds=["vol-0bb00000000000001"])
        self.assertEqual(code_of(c)[0], "InvalidVolume.NotFound")

    def test_raw_xml_as_aws_sends_it(self):
        status, headers, body = self.sim.signed(
            "ec2", "AWS_ENDPOINT_URL_EC2",
            "Action=DescribeVolumes&Version=2016-11-15&VolumeId.1=" + V + "1",
            {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/xml"))
        root = ET.fromstring(body)
        self.assertEqual(root.tag, NS + "DescribeVolumesResponse")
        self.assertRegex(root.find(NS + "requestId").text, r"^[0-9a-f-]{36}$")
        item = root.find(NS + "volumeSet/" + NS + "item")
        self.assertEqual(item.find(NS + "status").text, "in-use")
        self.assertEqual(item.find(NS + "createTime").text, "2026-04-15T00:00:00.000Z")
        self.assertEqual(item.find(NS + "attachmentSet/" + NS + "item/" + NS + "status").text, "attached")
        self.assertEqual(item.find(NS + "iops").text, "300")
        status, _, body = self.sim.signed("ec2", "AWS_ENDPOINT_URL_EC2",
                                          "Action=DescribeVolumes&Version=2016-11-15&VolumeId.1=vol-0aa000000000000ff",
                                          {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 400)
        root = ET.fromstring(body)
        self.assertEqual(root.tag, "Response")
        self.assertEqual(root.find("Errors/Error/Code").text, "InvalidVolume.NotFound")
        self.assertRegex(root.find("RequestID").text, r"^[0-9a-f-]{36}$")
        status, _, body = self.sim.signed("ec2", "AWS_ENDPOINT_URL_EC2", "Action=RunInstances&Version=2016-11-15",
                                          {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual((status, ET.fromstring(body).find("Errors/Error/Code").text), (400, "InvalidAction"))

    def test_describe_modifications_latest_only(self):
        mods = self.ec2.describe_volumes_modifications(VolumeIds=[V + "9"])["VolumesModifications"]
        self.assertEqual(len(mods), 1)
        self.assertEqual((mods[0]["OriginalSize"], mods[0]["TargetSize"], mods[0]["ModificationState"]),
                         (260, 300, "completed"))
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes_modifications(VolumeIds=[V + "2"])
        self.assertEqual(code_of(c), ("InvalidVolumeModification.NotFound",
                                      "Modification for volume '%s2' does not exist." % V))
        opt = self.ec2.describe_volumes_modifications(
            Filters=[{"Name": "modification-state", "Values": ["optimizing"]}])["VolumesModifications"]
        self.assertEqual([m["VolumeId"] for m in opt], [V + "8"])
        self.assertNotIn("EndTime", opt[0])
        pages = list(self.ec2.get_paginator("describe_volumes_modifications").paginate(
            PaginationConfig={"PageSize": 5}))
        self.assertGreaterEqual(sum(len(p["VolumesModifications"]) for p in pages), 3)

    def test_modify_errors(self):
        def err(**kw):
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                self.ec2.modify_volume(**kw)
            return code_of(c)
        self.assertEqual(err(VolumeId=V + "9", VolumeType="gp3"),
                         ("VolumeModificationRateExceeded",
                          "You've reached the maximum modification rate per volume limit. "
                          "You can modify this volume again after 2026-11-01T04:00:00Z."))
        self.assertEqual(err(VolumeId=V + "8", VolumeType="gp3"),
                         ("IncorrectModificationState", "Volume %s8 cannot be modified in modification "
                          "state OPTIMIZING" % V))
        self.assertEqual(err(VolumeId=V + "2", VolumeType="gp3", Iops=90000)[0], "InvalidParameterValue")
        self.assertEqual(err(VolumeId=V + "4", VolumeType="gp3", Iops=12000),
                         ("InvalidParameterValue", "Iops to volume size ratio of 600.000000 is too high; maximum is 500"))
        self.assertEqual(err(VolumeId=V + "2", VolumeType="gp3", Iops=3000, Throughput=1000),
                         ("InvalidParameterValue", "Throughput (MiBps) to iops ratio of 0.333333 is too high; "
                          "maximum is 0.250000 MiBps per iops"))
        self.assertEqual(err(VolumeId=V + "2", VolumeType="gp3", Throughput=100)[0], "InvalidParameterValue")
        self.assertEqual(err(VolumeId=V + "2", VolumeType="gp3", Throughput=2001)[0], "InvalidParameterValue")
        self.assertEqual(err(VolumeId=V + "2", Size=100),
                         ("InvalidParameterValue", "New size cannot be smaller than existing size"))
        self.assertEqual(err(VolumeId=V + "2", VolumeType="io1", Iops=5000, Throughput=200),
                         ("InvalidParameterCombination", "throughput can only be specified for volumeType gp3."))
        self.assertEqual(err(VolumeId=V + "2", VolumeType="gp3", Size=70000)[0], "InvalidParameterValue")
        self.assertEqual(err(VolumeId=V + "2", VolumeType="gp2")[0], "InvalidParameterValue")  # no change
        self.assertEqual(err(VolumeId="vol-0aa000000000000ff", VolumeType="gp3")[0], "InvalidVolume.NotFound")

    def test_modify_state_machine_and_defaults(self):
        r = self.ec2.modify_volume(VolumeId=V + "4", VolumeType="gp3")["VolumeModification"]
        self.assertEqual((r["ModificationState"], r["TargetVolumeType"], r["TargetIops"], r["TargetThroughput"],
                          r["OriginalVolumeType"], r["OriginalIops"]), ("modifying", "gp3", 3000, 125, "gp2", 100))
        st = self.sim.state()
        self.assertEqual(st["modifications"][V + "4"][-1]["defaults_applied"], ["iops", "throughput"])
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.modify_volume(VolumeId=V + "4", Size=30)
        self.assertIn("MODIFYING", code_of(c)[1])
        self.sim.advance(61)
        m = self.ec2.describe_volumes_modifications(VolumeIds=[V + "4"])["VolumesModifications"][0]
        self.assertEqual(m["ModificationState"], "optimizing")
        v = self.ec2.describe_volumes(VolumeIds=[V + "4"])["Volumes"][0]
        self.assertEqual((v["VolumeType"], v["Iops"], v["Throughput"]), ("gp3", 3000, 125))
        self.sim.advance(400)  # optimizing lasts max(60, 20 s x 20 GiB)
        m = self.ec2.describe_volumes_modifications(VolumeIds=[V + "4"])["VolumesModifications"][0]
        self.assertEqual((m["ModificationState"], m["Progress"]), ("completed", 100))
        self.assertEqual((m["EndTime"] - m["StartTime"]).total_seconds(), 460)
        log = [e for e in self.sim.requests("ec2") if e["action"] == "ModifyVolume" and e["status"] == 200]
        self.assertEqual(log[-1]["params"]["VolumeId"], V + "4")
        for key in ("seq", "time", "service", "region", "cluster", "action", "params", "status",
                    "error_code", "principal"):
            self.assertIn(key, log[-1])
        self.assertEqual(log[-1]["principal"], "AKIASIMADMIN0000001")
        self.assertNotIn("ebssim/admin", json.dumps(self.sim.requests()))

    def test_create_tags_and_instances(self):
        self.ec2.create_tags(Resources=[V + "7"], Tags=[{"Key": "ebsmigrate/state", "Value": "planned"}])
        v = self.ec2.describe_volumes(Filters=[{"Name": "tag:ebsmigrate/state", "Values": ["planned"]}])["Volumes"]
        self.assertEqual([x["VolumeId"] for x in v], [V + "7"])
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.create_tags(Resources=["vol-0aa000000000000ff"], Tags=[{"Key": "k", "Value": "v"}])
        self.assertEqual(code_of(c)[0], "InvalidVolume.NotFound")
        res = self.ec2.describe_instances(InstanceIds=["i-0aa00000000000002"])["Reservations"]
        inst = res[0]["Instances"][0]
        self.assertEqual((inst["InstanceType"], inst["State"]["Name"], inst["Placement"]["AvailabilityZone"]),
                         ("m5.large", "running", "us-east-1b"))
        pages = list(self.ec2.get_paginator("describe_instances").paginate(PaginationConfig={"PageSize": 5}))
        self.assertEqual(sum(len(p["Reservations"]) for p in pages), 2)

    def test_instance_types_of_generated_fleets(self):
        # every type ebssim_gen puts on a generated fleet's nodes is answered (botocore parses the
        # EbsOptimizedInfo), and an unknown one is refused as EC2 refuses it
        import sys
        sys.path.insert(0, os.path.dirname(EBSSIM))
        import ebssim_gen
        types = self.ec2.describe_instance_types(InstanceTypes=list(ebssim_gen.INSTANCE_TYPES))["InstanceTypes"]
        self.assertEqual(sorted(t["InstanceType"] for t in types), sorted(ebssim_gen.INSTANCE_TYPES))
        for t in types:
            info = t["EbsInfo"]["EbsOptimizedInfo"]
            self.assertLessEqual(info["BaselineIops"], info["MaximumIops"])
            self.assertEqual(info["BaselineThroughputInMBps"], info["BaselineBandwidthInMbps"] / 8.0)
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_instance_types(InstanceTypes=["x9.nonesuch"])
        self.assertEqual(code_of(c)[0], "InvalidInstanceType")

    def test_permissions(self):
        ro = self.sim.client("ec2", keys=READONLY)
        self.assertEqual(len(ro.describe_volumes()["Volumes"]), 10)
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            ro.modify_volume(VolumeId=V + "2", VolumeType="gp3", Iops=4500, Throughput=250)
        code, msg = code_of(c)
        self.assertEqual(code, "UnauthorizedOperation")
        self.assertEqual(c.exception.response["ResponseMetadata"]["HTTPStatusCode"], 403)
        self.assertIn("User: arn:aws:iam::111122223333:user/readonly is not authorized to perform: "
                      "ec2:ModifyVolume", msg)
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            ro.modify_volume(VolumeId=V + "2", VolumeType="gp3", DryRun=True)
        self.assertEqual(code_of(c)[0], "UnauthorizedOperation")
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.modify_volume(VolumeId=V + "2", VolumeType="gp3", DryRun=True)
        self.assertEqual(code_of(c)[0], "DryRunOperation")


class DeleteVolumeAndRefusals(SimTestCase):
    """DeleteVolume (wire and `ctl delete-volume`) and `error` faults; a sim of its own, since
    it deletes volumes."""

    @classmethod
    def set_up_sim(cls):
        cls.ec2 = cls.sim.client("ec2")

    def test_delete_volume(self):
        status, _, body = self.sim.signed("ec2", "AWS_ENDPOINT_URL_EC2",
                                          "Action=DeleteVolume&Version=2016-11-15&VolumeId=" + V + "7",
                                          {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
        self.assertEqual(status, 200)
        self.assertRegex(body.decode(), r'^<\?xml version="1.0" encoding="UTF-8"\?>\n<DeleteVolumeResponse '
                         r'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">\n    <requestId>[0-9a-f-]{36}'
                         r'</requestId>\n    <return>true</return>\n</DeleteVolumeResponse>$')
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes(VolumeIds=[V + "7"])
        self.assertEqual(code_of(c), ("InvalidVolume.NotFound", "The volume '%s7' does not exist." % V))
        self.assertEqual(self.ec2.describe_volumes(Filters=[{"Name": "volume-id", "Values": [V + "7"]}])["Volumes"], [])
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.delete_volume(VolumeId=V + "7")
        self.assertEqual(code_of(c)[0], "InvalidVolume.NotFound")
        # attached: VolumeInUse, and the volume stays
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.delete_volume(VolumeId=V + "1")
        self.assertEqual(code_of(c), ("VolumeInUse", "Volume %s1 is currently attached to i-0aa00000000000001" % V))
        self.assertEqual(len(self.ec2.describe_volumes(VolumeIds=[V + "1"])["Volumes"]), 1)
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.sim.client("ec2", keys=READONLY).delete_volume(VolumeId=V + "1")
        self.assertEqual(code_of(c)[0], "UnauthorizedOperation")

    def test_ctl_delete_volume_detaches_and_forgets_history(self):
        vid = V + "9"   # attached, with a modification history
        self.assertEqual(self.sim.ctl("POST", "/delete-volume", {"volume_id": vid}), {"ok": True, "deleted": vid})
        st = self.sim.state()
        self.assertNotIn(vid, st["volumes"])
        self.assertNotIn(vid, st["modifications"])
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.modify_volume(VolumeId=vid, VolumeType="gp3")
        self.assertEqual(code_of(c)[0], "InvalidVolume.NotFound")
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.describe_volumes_modifications(VolumeIds=[vid])
        self.assertEqual(code_of(c)[0], "InvalidVolume.NotFound")
        mods = self.ec2.describe_volumes_modifications(Filters=[{"Name": "volume-id", "Values": [vid]}])
        self.assertEqual(mods["VolumesModifications"], [])
        out = subprocess.run(["/usr/bin/python3", EBSSIM, "ctl", "--state-dir", self.sim.state_dir,
                              "delete-volume", vid], capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("InvalidVolume.NotFound", out.stderr)

    def test_error_fault_for_one_volume(self):
        self.sim.fault({"service": "ec2", "action": "ModifyVolume", "kind": "error", "volume_id": V + "3",
                        "code": "InvalidParameterCombination", "message": "not for this volume"})
        try:
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                self.ec2.modify_volume(VolumeId=V + "3", VolumeType="gp3")
            self.assertEqual(code_of(c), ("InvalidParameterCombination", "not for this volume"))
            self.assertEqual(c.exception.response["ResponseMetadata"]["HTTPStatusCode"], 400)
            self.assertEqual(self.ec2.describe_volumes(VolumeIds=[V + "3"])["Volumes"][0]["VolumeType"], "gp2")
            self.ec2.modify_volume(VolumeId=V + "4", VolumeType="gp3")   # other volumes are not touched
            log = [(r["params"]["VolumeId"], r["status"], r["error_code"]) for r in self.sim.requests("ec2")
                   if r["action"] == "ModifyVolume"]
            self.assertEqual(log[-2:], [(V + "3", 400, "InvalidParameterCombination"), (V + "4", 200, None)])
            # the readonly principal is still refused first: the fault answers as EC2 would
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                self.sim.client("ec2", keys=READONLY).modify_volume(VolumeId=V + "3", VolumeType="gp3")
            self.assertEqual(code_of(c)[0], "UnauthorizedOperation")
        finally:
            self.sim.fault({"clear": True})
        with self.assertRaises(urllib.error.HTTPError) as c:
            self.sim.fault({"kind": "error", "action": "ModifyVolume"})   # no code
        self.assertEqual(c.exception.code, 400)


def tiny_scenario():
    """One failing volume and one with 4 modifications in the last 24 h."""
    def mod(h, s0, s1):
        return {"state": "completed", "start_time": "2026-10-31T%02d:00:00Z" % (24 - h),
                "end_time": "2026-10-31T%02d:10:00Z" % (24 - h),
                "original": {"type": "gp2", "size": s0, "iops": 3 * s0, "throughput": None},
                "target": {"type": "gp2", "size": s1, "iops": 3 * s1, "throughput": None}}
    return {"name": "tiny", "start_time": "2026-11-01T00:00:00Z", "account": "111122223333",
            "default_region": "us-east-1", "regions": {"us-east-1": {"azs": ["us-east-1a"]}},
            "principals": [{"name": "admin", "access_key_id": "AKIASIMADMIN0000001",
                            "secret_access_key": "ebssim/admin/secret/key/0000000000000001", "allow": ["*"]}],
            "instances": [], "clusters": [],
            "volumes": [{"volume_id": "vol-0dd00000000000001", "az": "us-east-1a", "type": "gp2", "size": 100,
                         "modify_fails": True},
                        {"volume_id": "vol-0dd00000000000002", "az": "us-east-1a", "type": "gp2", "size": 104,
                         "modifications": [mod(20, 100, 101), mod(15, 101, 102), mod(10, 102, 103),
                                           mod(5, 103, 104)]}]}


class ModificationRules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fd, cls.path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(tiny_scenario(), f)
        cls.sim = SimProcess(cls.path)
        cls.ec2 = cls.sim.client("ec2")

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        os.unlink(cls.path)

    def test_failed_modification_and_rolling_window(self):
        self.ec2.modify_volume(VolumeId="vol-0dd00000000000001", VolumeType="gp3", Iops=3000, Throughput=125)
        self.sim.advance(61)
        m = self.ec2.describe_volumes_modifications(VolumeIds=["vol-0dd00000000000001"])["VolumesModifications"][0]
        self.assertEqual(m["ModificationState"], "failed")
        self.assertTrue(m["StatusMessage"])
        v = self.ec2.describe_volumes(VolumeIds=["vol-0dd00000000000001"])["Volumes"][0]
        self.assertEqual(v["VolumeType"], "gp2")
        # 4 in the last 24 h: the oldest started 20 h before the start, so 4 h later it is allowed
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.ec2.modify_volume(VolumeId="vol-0dd00000000000002", VolumeType="gp3", Iops=3000, Throughput=125)
        self.assertRegex(code_of(c)[1], r"after 2026-11-01T04:00:00Z\.$")
        self.sim.advance(4 * 3600)
        r = self.ec2.modify_volume(VolumeId="vol-0dd00000000000002", VolumeType="gp3", Iops=3000, Throughput=125)
        self.assertEqual(r["VolumeModification"]["ModificationState"], "modifying")


if __name__ == "__main__":
    unittest.main()
