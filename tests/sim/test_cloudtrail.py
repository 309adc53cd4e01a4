"""Self-tests of CloudTrail LookupEvents (JSON 1.1), checked with botocore's own cloudtrail client
(the AWS model of the wire format) and with raw signed requests for the error answers.
Run: /usr/bin/python3 -m unittest tests/sim/test_cloudtrail.py"""

import json
import os
import time
import unittest
import urllib.error

import botocore.config
import botocore.exceptions
import botocore.session

from simtest import ADMIN, SimTestCase

START = 1793491200  # 2026-11-01T00:00:00Z, the scenarios' start
VOL9 = "vol-0aa00000000000009"   # 4 completed modifications in the 24 h before the start
VOL4 = "vol-0aa00000000000004"   # gp2 100 GiB, never modified
TARGET = "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents"
BY_NAME = [{"AttributeKey": "EventName", "AttributeValue": "ModifyVolume"}]


def trail_client(sim, keys=ADMIN):
    session = botocore.session.Session()
    session.set_config_variable("config_file", os.devnull)
    session.set_config_variable("credentials_file", os.devnull)
    return session.create_client(
        "cloudtrail", region_name="us-east-1", endpoint_url=sim.env["AWS_ENDPOINT_URL_CLOUDTRAIL"],
        verify=sim.ca, aws_access_key_id=keys[0], aws_secret_access_key=keys[1],
        config=botocore.config.Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def events_for(client, volume_id, **kw):
    """Every event of one volume through botocore's paginator, newest first."""
    out = []
    pages = client.get_paginator("lookup_events").paginate(
        LookupAttributes=[{"AttributeKey": "ResourceName", "AttributeValue": volume_id}], **kw)
    for page in pages:
        out.extend(page["Events"])
        time.sleep(0.5)  # stay under 2 calls/s
    return out


class LookupEvents(SimTestCase):
    sim_args = ("--trail-delay", "600")

    @classmethod
    def set_up_sim(cls):
        cls.ct = trail_client(cls.sim)

    def setUp(self):
        time.sleep(1.1)  # a fresh rate-limit bucket for each test
        self.sim.ctl("POST", "/trail", {"mode": "enabled", "rate": 2})

    def test_scenario_history_is_in_the_trail(self):
        ev = events_for(self.ct, VOL9)
        self.assertEqual(len(ev), 4)
        times = [e["EventTime"].timestamp() for e in ev]
        self.assertEqual(times, sorted(times, reverse=True))
        self.assertEqual(times[-1], START - 20 * 3600)  # the oldest of the 4 (next allowed at 04:00)
        detail = json.loads(ev[0]["CloudTrailEvent"])  # an embedded JSON document
        self.assertEqual(detail["eventName"], "ModifyVolume")
        self.assertEqual(detail["eventSource"], "ec2.amazonaws.com")
        self.assertEqual(detail["awsRegion"], "us-east-1")
        self.assertEqual(detail["recipientAccountId"], "111122223333")
        self.assertEqual(detail["requestParameters"]["ModifyVolumeRequest"]["VolumeId"], VOL9)
        self.assertNotIn("errorCode", detail)
        self.assertEqual(ev[0]["Resources"], [{"ResourceType": "AWS::EC2::Volume", "ResourceName": VOL9}])

    def test_api_modification_appears_after_the_delivery_delay(self):
        ec2 = self.sim.client("ec2")
        vid = "vol-0aa00000000000006"
        ec2.modify_volume(VolumeId=vid, VolumeType="gp3", Iops=3000, Throughput=125)
        self.assertEqual(events_for(self.ct, vid), [])          # not delivered yet
        self.sim.advance(601)
        ev = events_for(self.ct, vid)
        self.assertEqual(len(ev), 1)
        self.assertEqual(ev[0]["Username"], "admin")
        self.assertEqual(ev[0]["AccessKeyId"], ADMIN[0])
        req = json.loads(ev[0]["CloudTrailEvent"])["requestParameters"]["ModifyVolumeRequest"]
        self.assertEqual(req, {"VolumeId": vid, "VolumeType": "gp3", "Iops": 3000, "Throughput": 125})
        # a refused call is recorded too, with EC2's code as CloudTrail writes it
        with self.assertRaises(botocore.exceptions.ClientError):
            ec2.modify_volume(VolumeId=vid, VolumeType="gp3", Iops=3000, Throughput=125)
        self.sim.advance(601)
        ev = events_for(self.ct, vid)
        self.assertEqual(len(ev), 2)
        failed = json.loads(ev[0]["CloudTrailEvent"])
        self.assertEqual(failed["errorCode"], "Client.IncorrectModificationState")

    def test_console_modifications_in_the_past(self):
        for i, hours in enumerate((20, 14, 8, 2)):
            out = self.sim.ctl("POST", "/modify-volume", {"volume_id": VOL4, "at": -hours * 3600 - 700,
                                                          "size": 101 + i, "principal": "alice"})
            self.assertTrue(out.get("ok"), out)
        mods = self.sim.state()["modifications"][VOL4]
        self.assertEqual([m["state"] for m in mods], ["completed"] * 4)
        # EC2 shows the latest only
        ec2 = self.sim.client("ec2")
        latest = ec2.describe_volumes_modifications(VolumeIds=[VOL4])["VolumesModifications"]
        self.assertEqual(len(latest), 1)
        self.assertEqual(latest[0]["TargetSize"], 104)
        ev = events_for(self.ct, VOL4)
        self.assertEqual([e["Username"] for e in ev], ["alice"] * 4)
        self.assertEqual([json.loads(e["CloudTrailEvent"])["requestParameters"]["ModifyVolumeRequest"]["Size"]
                          for e in ev], [104, 103, 102, 101])
        # a fifth inside the window is refused by EC2's rule
        with self.assertRaises(urllib.error.HTTPError) as cm:
            self.sim.ctl("POST", "/modify-volume", {"volume_id": VOL4, "size": 110})
        self.assertIn("VolumeModificationRateExceeded", cm.exception.read().decode())

    def test_pagination_and_limits(self):
        first = self.ct.lookup_events(LookupAttributes=BY_NAME, MaxResults=2)
        self.assertEqual(len(first["Events"]), 2)
        self.assertIn("NextToken", first)
        time.sleep(0.5)
        second = self.ct.lookup_events(LookupAttributes=BY_NAME, MaxResults=2, NextToken=first["NextToken"])
        ids = {e["EventId"] for e in first["Events"]} & {e["EventId"] for e in second["Events"]}
        self.assertEqual(ids, set())
        time.sleep(0.5)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.ct.lookup_events(LookupAttributes=BY_NAME, MaxResults=51)
        self.assertEqual(cm.exception.response["Error"]["Code"], "InvalidMaxResultsException")
        time.sleep(0.5)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.ct.lookup_events(LookupAttributes=BY_NAME, MaxResults=2, NextToken=first["NextToken"],
                                  StartTime=START - 3600)
        self.assertEqual(cm.exception.response["Error"]["Code"], "InvalidNextTokenException")
        time.sleep(0.5)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.ct.lookup_events(LookupAttributes=BY_NAME * 2)
        self.assertEqual(cm.exception.response["Error"]["Code"], "InvalidLookupAttributesException")
        time.sleep(0.5)
        window = self.ct.lookup_events(LookupAttributes=BY_NAME, StartTime=START - 20 * 3600 - 60,
                                       EndTime=START - 20 * 3600 + 60)
        self.assertEqual([e["Resources"][0]["ResourceName"] for e in window["Events"]], [VOL9])

    def test_rate_limit_two_per_second(self):
        body = json.dumps({"LookupAttributes": BY_NAME, "MaxResults": 1})
        h = {"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": TARGET}
        codes = []
        for _ in range(5):
            status, headers, out = self.sim.signed("cloudtrail", "AWS_ENDPOINT_URL_CLOUDTRAIL", body, h)
            codes.append((status, json.loads(out).get("__type")))
        self.assertEqual(codes[:2], [(200, None), (200, None)])
        self.assertIn((400, "ThrottlingException"), codes[2:])

    def test_denied_disabled_and_signing(self):
        h = {"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": TARGET}
        self.sim.ctl("POST", "/trail", {"mode": "denied"})
        status, _, out = self.sim.signed("cloudtrail", "AWS_ENDPOINT_URL_CLOUDTRAIL", "{}", h)
        self.assertEqual((status, json.loads(out)["__type"]), (400, "AccessDeniedException"))
        self.assertIn("cloudtrail:LookupEvents", json.loads(out)["message"])
        self.sim.ctl("POST", "/trail", {"mode": "disabled"})
        status, _, out = self.sim.signed("cloudtrail", "AWS_ENDPOINT_URL_CLOUDTRAIL", "{}", h)
        self.assertEqual((status, json.loads(out)["__type"]), (400, "UnsupportedOperationException"))
        self.sim.ctl("POST", "/trail", {"mode": "enabled"})
        status, _, out = self.sim.signed("cloudtrail", "AWS_ENDPOINT_URL_CLOUDTRAIL", "{}", h, signing_name="ec2")
        self.assertEqual((status, json.loads(out)["__type"]), (403, "InvalidSignatureException"))


if __name__ == "__main__":
    unittest.main()
