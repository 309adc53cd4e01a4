"""Self-tests of the organization side (issue 15): Organizations ListAccounts/DescribeAccount,
STS AssumeRole into member accounts (trust, external id, duration, suspended accounts, chaining),
credentials acting in the assumed account for EC2, CloudWatch, CloudTrail and GetCallerIdentity,
disabled regions.  Checked with botocore's own clients (scenario tests/sim/scenarios/org.json)
and with the AWS CLI (`aws`: /usr/bin/aws, else the first on PATH; skipped when there is none).
Run: /usr/bin/python3 -m unittest tests/sim/test_org.py"""

import datetime
import json
import os
import shutil
import subprocess
import time
import unittest

import botocore.exceptions

from simtest import ADMIN, READONLY, SimProcess, SimTestCase

ORGREADER = ("AKIASIMORGREADER001", "ebssim/orgreader/secret/key/000000000001")
MGMT = "111122223333"
PAYMENTS, ANALYTICS, SANDBOX, SECURITY, LEGACY, CLOSING = (
    "222233334444", "333344445555", "444455556666", "555566667777", "666677778888", "777788889999")
ALL = [MGMT, PAYMENTS, ANALYTICS, SANDBOX, SECURITY, LEGACY, CLOSING]


def role(acct, name="ebsmigrate"):
    return "arn:aws:iam::%s:role/%s" % (acct, name)


def epoch(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Org(SimTestCase):
    scenario = "org"

    @classmethod
    def set_up_sim(cls):
        cls.sts = cls.sim.client("sts")
        cls.org = cls.sim.client("organizations")

    def err(self, fn, **kw):
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            fn(**kw)
        r = c.exception.response
        return r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"], r["Error"]["Message"]

    def assume(self, acct, name="ebsmigrate", sts=None, **kw):
        out = (sts or self.sts).assume_role(RoleArn=role(acct, name), RoleSessionName="ebsmigrate-test", **kw)
        c = out["Credentials"]
        return out, (c["AccessKeyId"], c["SecretAccessKey"]), c["SessionToken"]

    def client_as(self, service, acct, region="us-east-1", name="ebsmigrate", **kw):
        _, keys, token = self.assume(acct, name, **kw)
        return self.sim.client(service, region=region, keys=keys, token=token)

    # ---- Organizations

    def test_list_accounts_paginates_management_first(self):
        self.sim.reset_requests()
        pages = list(self.org.get_paginator("list_accounts").paginate(PaginationConfig={"PageSize": 2}))
        self.assertEqual(len(pages), 4)
        accts = [a for p in pages for a in p["Accounts"]]
        self.assertEqual([a["Id"] for a in accts], ALL)
        by_id = {a["Id"]: a for a in accts}
        self.assertEqual(by_id[MGMT]["Name"], "management")
        self.assertEqual(by_id[MGMT]["Email"], "aws-mgmt@example.com")
        p = by_id[PAYMENTS]
        self.assertEqual((p["Name"], p["Email"], p["Status"], p["JoinedMethod"]),
                         ("payments-prod", "aws+payments@example.com", "ACTIVE", "CREATED"))
        self.assertEqual(p["Arn"], "arn:aws:organizations::%s:account/o-ebssim0001/%s" % (MGMT, PAYMENTS))
        self.assertEqual(p["JoinedTimestamp"].timestamp(), epoch("2024-01-10T00:00:00Z"))
        self.assertEqual(by_id[SANDBOX]["Status"], "SUSPENDED")
        self.assertEqual(by_id[CLOSING]["Status"], "PENDING_CLOSURE")
        log = self.sim.requests("organizations")
        self.assertEqual([e["action"] for e in log], ["ListAccounts"] * 4)
        self.assertEqual({e["principal"] for e in log}, {ADMIN[0]})
        self.assertEqual(self.org.list_accounts()["Accounts"][0]["Id"], MGMT)   # default 20: one page
        self.assertNotIn("NextToken", self.org.list_accounts())

    def test_list_accounts_bad_input(self):
        self.assertEqual(self.err(self.org.list_accounts, NextToken="bm90LWEtdG9rZW4")[:2],
                         ("InvalidInputException", 400))
        tok = self.org.list_accounts(MaxResults=3)["NextToken"]
        self.assertEqual(len(self.org.list_accounts(MaxResults=20, NextToken=tok)["Accounts"]), 4)
        self.assertEqual(self.err(self.org.list_accounts, MaxResults=21)[:2], ("InvalidInputException", 400))

    def test_describe_account(self):
        a = self.org.describe_account(AccountId=ANALYTICS)["Account"]
        self.assertEqual((a["Id"], a["Name"], a["JoinedMethod"]), (ANALYTICS, "analytics", "INVITED"))
        self.assertEqual(self.err(self.org.describe_account, AccountId="999999999999")[:2],
                         ("AccountNotFoundException", 400))
        self.assertEqual(self.err(self.org.describe_account, AccountId="12345")[:2],
                         ("InvalidInputException", 400))

    def test_who_may_list_accounts(self):
        ro = self.sim.client("organizations", keys=READONLY)   # no organizations:ListAccounts
        self.assertEqual(self.err(ro.list_accounts)[:2], ("AccessDeniedException", 400))
        self.assertEqual(len(self.sim.client("organizations", keys=ORGREADER).list_accounts()["Accounts"]), 7)
        member = self.client_as("organizations", PAYMENTS)      # a member, not a delegated admin
        code, status, msg = self.err(member.list_accounts)
        self.assertEqual((code, status), ("AccessDeniedException", 400))
        self.assertIn("permissions", msg)
        admin = self.client_as("organizations", SECURITY)      # delegated admin with the permission
        self.assertEqual(len(admin.list_accounts()["Accounts"]), 7)

    # ---- AssumeRole

    def test_assume_role_answer(self):
        t0 = time.time()
        out, keys, token = self.assume(PAYMENTS, DurationSeconds=900)
        c, u = out["Credentials"], out["AssumedRoleUser"]
        self.assertTrue(c["AccessKeyId"].startswith("ASIA"))
        self.assertTrue(token and c["SecretAccessKey"])
        self.assertAlmostEqual(c["Expiration"].timestamp(), t0 + 900, delta=5)
        self.assertEqual(u["Arn"], "arn:aws:sts::%s:assumed-role/ebsmigrate/ebsmigrate-test" % PAYMENTS)
        self.assertTrue(u["AssumedRoleId"].startswith("AROA") and u["AssumedRoleId"].endswith(":ebsmigrate-test"))
        ident = self.sim.client("sts", keys=keys, token=token).get_caller_identity()
        self.assertEqual((ident["Account"], ident["Arn"]), (PAYMENTS, u["Arn"]))
        self.assertEqual(self.sim.client("sts").get_caller_identity()["Account"], MGMT)
        log = [e for e in self.sim.requests("sts") if e["action"] == "AssumeRole"]
        self.assertEqual(log[-1]["params"]["RoleArn"], role(PAYMENTS))
        self.assertEqual(log[-1]["principal"], ADMIN[0])

    def denied(self, acct, name="ebsmigrate", keys=ADMIN, caller="arn:aws:iam::%s:user/admin" % MGMT, **kw):
        sts = self.sim.client("sts", keys=keys)
        code, status, msg = self.err(sts.assume_role, RoleArn=role(acct, name), RoleSessionName="ebsmigrate-test", **kw)
        self.assertEqual((code, status), ("AccessDenied", 403), msg)
        self.assertEqual(msg, "User: %s is not authorized to perform: sts:AssumeRole on resource: %s"
                         % (caller, role(acct, name)))

    def test_assume_role_denied(self):
        self.denied(SANDBOX)                   # suspended
        self.denied(CLOSING)                   # pending closure
        self.denied(LEGACY)                    # no such role
        self.denied("999988887777")            # no such account
        self.denied(ANALYTICS)                 # external id missing
        self.denied(ANALYTICS, ExternalId="ebs-ext-41")
        self.denied(PAYMENTS, "auditor")       # no such role in that account
        # a caller without sts:AssumeRole in its policy
        self.denied(PAYMENTS, keys=READONLY, caller="arn:aws:iam::%s:user/readonly" % MGMT)
        # trusted by ARN: admin yes, another user of the same account no
        self.assume(SECURITY, "auditor")
        self.denied(SECURITY, "auditor", keys=ORGREADER, caller="arn:aws:iam::%s:user/orgreader" % MGMT)
        out, _, _ = self.assume(ANALYTICS, ExternalId="ebs-ext-42")
        self.assertIn(ANALYTICS, out["AssumedRoleUser"]["Arn"])

    def test_assume_role_validation(self):
        sts = self.sts
        code, _, msg = self.err(sts.assume_role, RoleArn=role(PAYMENTS), RoleSessionName="x" * 2,
                                DurationSeconds=3601)
        self.assertEqual(code, "ValidationError")
        self.assertIn("MaxSessionDuration", msg)
        # below 900 (botocore refuses it before sending: a raw signed request)
        status, _, body = self.sim.signed("sts", "AWS_ENDPOINT_URL_STS", "Action=AssumeRole&Version=2011-06-15"
                                          "&RoleArn=%s&RoleSessionName=ok&DurationSeconds=899" % role(PAYMENTS),
                                          {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 400)
        self.assertIn(b"<Code>ValidationError</Code>", body)
        self.assertEqual(self.err(sts.assume_role, RoleArn=role(PAYMENTS), RoleSessionName="bad name!")[0],
                         "ValidationError")
        self.assertEqual(self.err(sts.assume_role, RoleArn="arn:aws:iam::12:role/x", RoleSessionName="ok")[0],
                         "ValidationError")
        self.assume(ANALYTICS, ExternalId="ebs-ext-42", DurationSeconds=7200)   # its max is 7200

    def test_role_chaining(self):
        # web identity -> the management account's ebsmigrate role -> a member's role
        web = self.sim.client("sts")
        token = open(self.sim.env["EBSSIM_WEB_IDENTITY_TOKEN_FILE"]).read()
        out = web.assume_role_with_web_identity(RoleArn=self.sim.env["EBSSIM_ROLE_ARN"],
                                                RoleSessionName="pod", WebIdentityToken=token)
        c = out["Credentials"]
        chained = self.sim.client("sts", keys=(c["AccessKeyId"], c["SecretAccessKey"]), token=c["SessionToken"])
        out, keys, tok = self.assume(PAYMENTS, sts=chained)
        self.assertEqual(self.sim.client("sts", keys=keys, token=tok).get_caller_identity()["Account"], PAYMENTS)
        self.assume(SECURITY, "auditor", sts=chained)          # trusted as role/ebsmigrate
        code, _, msg = self.err(chained.assume_role, RoleArn=role(ANALYTICS), RoleSessionName="ok",
                                ExternalId="ebs-ext-42", DurationSeconds=7200)
        self.assertEqual(code, "ValidationError")
        self.assertIn("role chaining", msg)
        # and once more from the member's session (its role trusts only the management account)
        member_sts = self.sim.client("sts", keys=keys, token=tok)
        code, status, msg = self.err(member_sts.assume_role, RoleArn=role(ANALYTICS), RoleSessionName="ok",
                                     ExternalId="ebs-ext-42")
        self.assertEqual((code, status), ("AccessDenied", 403))
        self.assertIn("assumed-role/ebsmigrate/ebsmigrate-test", msg)

    # ---- acting in the account

    def test_ec2_sees_only_its_account(self):
        ec2 = self.client_as("ec2", PAYMENTS)
        self.assertEqual(sorted(v["VolumeId"] for v in ec2.describe_volumes()["Volumes"]),
                         ["vol-0bb00000000000001", "vol-0bb00000000000002"])
        eu = self.client_as("ec2", PAYMENTS, region="eu-west-1")
        self.assertEqual([v["VolumeId"] for v in eu.describe_volumes()["Volumes"]], ["vol-0bb00000000000003"])
        pages = list(ec2.get_paginator("describe_volumes").paginate(PaginationConfig={"PageSize": 5}))
        self.assertEqual(sum(len(p["Volumes"]) for p in pages), 2)
        # a NextToken belongs to its account: one of the management account's is refused here
        cc = self.client_as("ec2", ANALYTICS, ExternalId="ebs-ext-42")
        import base64
        fake = base64.urlsafe_b64encode(b'{"a":"DescribeVolumes","r":"us-east-1","i":1}').decode().rstrip("=")
        self.assertEqual(self.err(cc.describe_volumes, MaxResults=5, NextToken=fake)[0], "InvalidPaginationToken")
        self.assertEqual(self.err(ec2.describe_volumes, VolumeIds=["vol-0aa00000000000001"])[0],
                         "InvalidVolume.NotFound")
        base = self.sim.client("ec2")
        self.assertEqual(sorted(v["VolumeId"] for v in base.describe_volumes()["Volumes"]),
                         ["vol-0aa00000000000001", "vol-0aa00000000000002"])
        self.assertEqual(self.err(base.describe_volumes, VolumeIds=["vol-0bb00000000000001"])[0],
                         "InvalidVolume.NotFound")
        res = ec2.describe_instances()["Reservations"]
        self.assertEqual([(r["OwnerId"], r["Instances"][0]["InstanceId"]) for r in res],
                         [(PAYMENTS, "i-0bb00000000000001")])
        self.assertEqual([r["OwnerId"] for r in base.describe_instances()["Reservations"]], [MGMT])
        mods = ec2.describe_volumes_modifications()["VolumesModifications"]
        self.assertEqual([m["VolumeId"] for m in mods], ["vol-0bb00000000000002"])
        self.assertEqual(base.describe_volumes_modifications()["VolumesModifications"], [])
        self.assertEqual(sorted(r["RegionName"] for r in ec2.describe_regions()["Regions"]),
                         ["eu-west-1", "us-east-1"])
        # the role's permissions, not the caller's
        self.assertEqual(self.err(ec2.delete_volume, VolumeId="vol-0bb00000000000002")[:2],
                         ("UnauthorizedOperation", 403))
        self.assertEqual(self.err(ec2.modify_volume, VolumeId="vol-0aa00000000000002", VolumeType="gp3")[0],
                         "InvalidVolume.NotFound")
        self.assertEqual(self.err(ec2.create_tags, Resources=["i-0aa00000000000001"],
                                  Tags=[{"Key": "a", "Value": "b"}])[0], "InvalidInstanceID.NotFound")

    def test_modify_cloudwatch_cloudtrail_in_the_account(self):
        ec2 = self.client_as("ec2", ANALYTICS, ExternalId="ebs-ext-42")
        m = ec2.modify_volume(VolumeId="vol-0cc00000000000001", VolumeType="gp3")["VolumeModification"]
        self.assertEqual(m["TargetVolumeType"], "gp3")
        state = self.sim.state()
        self.assertEqual(state["modifications"]["vol-0cc00000000000001"][-1]["target"]["type"], "gp3")
        self.assertEqual(state["accounts"][ANALYTICS], {"status": "ACTIVE", "volumes": [
            "vol-0cc00000000000001", "vol-0cc00000000000002"]})
        self.assertEqual(state["accounts"][MGMT]["volumes"], ["vol-0aa00000000000001", "vol-0aa00000000000002"])
        end = datetime.datetime.fromisoformat(self.sim.state()["now"].replace("Z", "+00:00"))
        q = [{"Id": "m%d" % i, "MetricStat": {"Metric": {"Namespace": "AWS/EBS", "MetricName": "VolumeReadOps",
                                                          "Dimensions": [{"Name": "VolumeId", "Value": v}]},
                                               "Period": 3600, "Stat": "Sum"}}
             for i, v in enumerate(["vol-0bb00000000000001", "vol-0aa00000000000001"])]   # both attached
        cw = self.client_as("cloudwatch", PAYMENTS)
        res = {r["Id"]: r["Values"] for r in cw.get_metric_data(
            MetricDataQueries=q, StartTime=end - datetime.timedelta(days=1), EndTime=end)["MetricDataResults"]}
        self.assertTrue(res["m0"])          # its own volume
        self.assertEqual(res["m1"], [])     # the management account's volume: no data here
        res = {r["Id"]: r["Values"] for r in self.sim.client("cloudwatch").get_metric_data(
            MetricDataQueries=q, StartTime=end - datetime.timedelta(days=1), EndTime=end)["MetricDataResults"]}
        self.assertEqual(res["m0"], [])
        self.assertTrue(res["m1"])
        # CloudTrail: the scenario's modification of payments' volume is payments' event only
        self.sim.advance(3600)
        attrs = [{"AttributeKey": "EventName", "AttributeValue": "ModifyVolume"}]
        ct = self.client_as("cloudtrail", PAYMENTS)
        ev = ct.lookup_events(LookupAttributes=attrs)["Events"]
        self.assertEqual([e["Resources"][0]["ResourceName"] for e in ev], ["vol-0bb00000000000002"])
        self.assertEqual(json.loads(ev[0]["CloudTrailEvent"])["recipientAccountId"], PAYMENTS)
        time.sleep(0.6)
        ev = self.client_as("cloudtrail", ANALYTICS, ExternalId="ebs-ext-42").lookup_events(
            LookupAttributes=attrs)["Events"]
        self.assertEqual([e["Resources"][0]["ResourceName"] for e in ev], ["vol-0cc00000000000001"])
        detail = json.loads(ev[0]["CloudTrailEvent"])
        self.assertEqual((detail["recipientAccountId"], detail["userIdentity"]["accountId"]), (ANALYTICS, ANALYTICS))
        time.sleep(0.6)
        self.assertEqual(self.sim.client("cloudtrail").lookup_events(LookupAttributes=attrs)["Events"], [])

    def test_disabled_region(self):
        ec2 = self.client_as("ec2", PAYMENTS, region="ap-east-1")
        code, status, msg = self.err(ec2.describe_volumes)
        self.assertEqual((code, status, msg), ("AuthFailure", 401,
                                               "AWS was not able to validate the provided access credentials"))
        sts = self.client_as("sts", PAYMENTS, region="ap-east-1")
        self.assertEqual(self.err(sts.get_caller_identity)[:2], ("InvalidClientTokenId", 403))
        # another account (the management one) has the region: no refusal there
        self.assertEqual(self.sim.client("ec2", region="ap-east-1").describe_volumes()["Volumes"], [])


class Ec2RateLimit(unittest.TestCase):
    """Scenario `ec2_rate_limit`: EC2's token buckets, one per account, region and action."""

    def test_bucket_per_account_region(self):
        import tempfile
        scen = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios", "org.json")))
        scen["ec2_rate_limit"] = {"burst": 3, "rate": 0.2}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(scen, f)
        sim = SimProcess(f.name)
        try:
            os.unlink(f.name)
            base = sim.client("ec2")
            for _ in range(3):
                base.describe_volumes()
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                base.describe_volumes()
            r = c.exception.response
            self.assertEqual((r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"]), ("RequestLimitExceeded", 503))
            sim.client("ec2", region="eu-west-1").describe_volumes()       # another region: its own bucket
            base.describe_instances()                                      # another action: its own bucket
            c = sim.client("sts").assume_role(RoleArn=role(PAYMENTS), RoleSessionName="ok")["Credentials"]
            member = sim.client("ec2", keys=(c["AccessKeyId"], c["SecretAccessKey"]), token=c["SessionToken"])
            self.assertEqual(len(member.describe_volumes()["Volumes"]), 2)   # another account: its own bucket
            codes = [e["error_code"] for e in sim.requests("ec2")]
            self.assertEqual(codes, [None, None, None, "RequestLimitExceeded", None, None, None])
        finally:
            sim.stop()


class GeneratedOrg(unittest.TestCase):
    """`ebssim gen --accounts N`: the organization org_bench serves."""

    def test_generated_organization(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="ebssim-gen-org-")
        out = os.path.join(d, "org.json")
        subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ebssim"),
                        "gen", "--accounts", "3", "--volumes-per-account-region", "40", "--regions", "2",
                        "--volumes", "0", "--clusters", "0", "--ec2-rate-limit", "100/20", "--out", out],
                       check=True, capture_output=True)
        scen = json.load(open(out))
        self.assertEqual(scen["ec2_rate_limit"], {"burst": 100.0, "rate": 20.0})
        ids = [v["volume_id"] for a in scen["accounts"] for v in a["volumes"]]
        self.assertEqual((len(ids), len(set(ids))), (240, 240))
        sim = SimProcess(out)
        try:
            shutil.rmtree(d)
            accts = [a["Id"] for a in sim.client("organizations").list_accounts()["Accounts"]]
            self.assertEqual(accts, [MGMT, "200000000001", "200000000002", "200000000003"])
            for acct in accts:
                c = sim.client("sts").assume_role(RoleArn=role(acct), RoleSessionName="gen")["Credentials"]
                for region, want in (("us-east-1", 40), ("ap-northeast-2", 40), ("eu-west-1", 0)):
                    ec2 = sim.client("ec2", region=region, keys=(c["AccessKeyId"], c["SecretAccessKey"]),
                                     token=c["SessionToken"])
                    vols = ec2.describe_volumes()["Volumes"]
                    self.assertEqual(len(vols), 0 if acct == MGMT else want)
                    attached = [v for v in vols if v["Attachments"]]
                    insts = {i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]}
                    self.assertEqual({a["InstanceId"] for v in attached for a in v["Attachments"]}, insts)
        finally:
            sim.stop()


class NoOrganization(unittest.TestCase):
    def test_not_in_use_and_unchanged_sts(self):
        sim = SimProcess("basic")
        try:
            org = sim.client("organizations")
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                org.list_accounts()
            self.assertEqual(c.exception.response["Error"]["Code"], "AWSOrganizationsNotInUseException")
            with self.assertRaises(botocore.exceptions.ClientError) as c:
                sim.client("sts").assume_role(RoleArn=role("222233334444"), RoleSessionName="ok")
            self.assertEqual(c.exception.response["Error"]["Code"], "AccessDenied")
            self.assertEqual(sim.client("sts").get_caller_identity()["Account"], MGMT)
        finally:
            sim.stop()


def find_aws():
    if os.access("/usr/bin/aws", os.X_OK):
        return "/usr/bin/aws"
    return shutil.which("aws")


@unittest.skipIf(find_aws() is None, "no AWS CLI")
class Cli(unittest.TestCase):
    """What a user scripting the AWS CLI sees (endpoints passed with --endpoint-url: Debian's CLI
    v2.9 does not read AWS_ENDPOINT_URL_<SERVICE>)."""

    @classmethod
    def setUpClass(cls):
        cls.sim = SimProcess("org")
        cls.aws = find_aws()
        cls.env = dict(os.environ, **cls.sim.env)
        cls.env.update({"AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                        "AWS_PAGER": ""})
        cls.env.pop("AWS_PROFILE", None)

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def run_aws(self, args, endpoint, env=None):
        p = subprocess.run([self.aws] + args + ["--endpoint-url", self.sim.env[endpoint], "--output", "json"],
                           env=env or self.env, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def test_list_accounts_paginated(self):
        self.sim.reset_requests()
        rc, out, err = self.run_aws(["organizations", "list-accounts", "--page-size", "3"],
                                    "AWS_ENDPOINT_URL_ORGANIZATIONS")
        self.assertEqual(rc, 0, err)
        self.assertEqual([a["Id"] for a in json.loads(out)["Accounts"]], ALL)
        self.assertEqual(len(self.sim.requests("organizations")), 3)
        rc, out, err = self.run_aws(["organizations", "list-accounts", "--max-items", "2"],
                                    "AWS_ENDPOINT_URL_ORGANIZATIONS")
        self.assertEqual(rc, 0, err)
        self.assertIn("NextToken", json.loads(out))

    def assume(self, acct, *extra):
        return self.run_aws(["sts", "assume-role", "--role-arn", role(acct), "--role-session-name", "cli-test"]
                            + list(extra), "AWS_ENDPOINT_URL_STS")

    def test_assume_role_then_describe_volumes(self):
        for acct, extra, vols in ((PAYMENTS, [], ["vol-0bb00000000000001", "vol-0bb00000000000002"]),
                                  (ANALYTICS, ["--external-id", "ebs-ext-42"],
                                   ["vol-0cc00000000000001", "vol-0cc00000000000002"])):
            rc, out, err = self.assume(acct, *extra)
            self.assertEqual(rc, 0, err)
            c = json.loads(out)["Credentials"]
            env = dict(self.env, AWS_ACCESS_KEY_ID=c["AccessKeyId"], AWS_SECRET_ACCESS_KEY=c["SecretAccessKey"],
                       AWS_SESSION_TOKEN=c["SessionToken"])
            rc, out, err = self.run_aws(["ec2", "describe-volumes", "--region", "us-east-1"],
                                        "AWS_ENDPOINT_URL_EC2", env)
            self.assertEqual(rc, 0, err)
            self.assertEqual(sorted(v["VolumeId"] for v in json.loads(out)["Volumes"]), vols)
            if acct == PAYMENTS:
                rc, out, err = self.run_aws(["ec2", "describe-volumes", "--region", "ap-east-1"],
                                            "AWS_ENDPOINT_URL_EC2", env)
                self.assertNotEqual(rc, 0)
                self.assertIn("An error occurred (AuthFailure) when calling the DescribeVolumes operation: "
                              "AWS was not able to validate the provided access credentials", err)

    def test_denied_and_suspended(self):
        for acct, extra in ((ANALYTICS, []), (ANALYTICS, ["--external-id", "nope-42"]), (SANDBOX, []),
                            (LEGACY, [])):
            rc, out, err = self.assume(acct, *extra)
            self.assertNotEqual(rc, 0, out)
            self.assertIn("An error occurred (AccessDenied) when calling the AssumeRole operation: User: "
                          "arn:aws:iam::%s:user/admin is not authorized to perform: sts:AssumeRole on "
                          "resource: %s" % (MGMT, role(acct)), err)


if __name__ == "__main__":
    unittest.main()
