"""Self-tests of authentication: SigV4 verification on every protocol, clock skew, expired and
unknown credentials, permissions, STS (signed, presigned, web identity, EKS tokens),
IMDSv2 and the container credentials endpoint.
Run: /usr/bin/python3 -m unittest tests/sim/test_auth.py"""

import json
import time
import unittest
import urllib.parse
import xml.etree.ElementTree as ET

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import botocore.exceptions
import botocore.session

import ebssim_core
from simtest import ADMIN, READONLY, SimTestCase, raw

EXPIRED = ("ASIASIMEXPIRED00001", "ebssim/expired/secret/key/000000000000001")
WRONG = (ADMIN[0], "not-the-secret")
UNKNOWN = ("AKIANOBODY000000000", "whatever")
FORM = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}


def skewed_request(sim, endpoint_var, service, body, headers, offset_s, keys=ADMIN, region="us-east-1"):
    """Sign with a clock `offset_s` away from now (the signature itself is right)."""
    url = sim.env[endpoint_var] + "/"
    host = urllib.parse.urlsplit(url).netloc
    amz = ebssim_core.amz_date(time.time() + offset_s)
    h = dict(headers, **{"host": host, "x-amz-date": amz})
    lower = {k.lower(): v for k, v in h.items()}
    signed = sorted(lower)
    sig = ebssim_core.sigv4_signature(keys[1], service, region, amz, "POST", url, lower, body.encode(), signed)
    h["Authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s"
                          % (keys[0], amz[:8], region, service, ";".join(signed), sig))
    del h["host"]
    return raw("POST", url, h, body, sim.ca)


class SignedProtocols(SimTestCase):

    def err(self, client, op, **kw):
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            getattr(client, op)(**kw)
        r = c.exception.response
        return r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"], r["Error"]["Message"]

    def test_ec2_auth_errors(self):
        self.assertEqual(self.err(self.sim.client("ec2", keys=WRONG), "describe_volumes")[:2], ("AuthFailure", 401))
        self.assertEqual(self.err(self.sim.client("ec2", keys=UNKNOWN), "describe_volumes")[:2], ("AuthFailure", 401))
        self.assertEqual(self.err(self.sim.client("ec2", keys=EXPIRED, token="ebssim-expired-session-token"),
                                  "describe_volumes")[0], "RequestExpired")
        self.assertEqual(self.err(self.sim.client("ec2", keys=EXPIRED, token="another-token"),
                                  "describe_volumes")[:2], ("AuthFailure", 401))
        status, _, body = skewed_request(self.sim, "AWS_ENDPOINT_URL_EC2", "ec2",
                                         "Action=DescribeVolumes&Version=2016-11-15", FORM, -600)
        self.assertEqual(ET.fromstring(body).find("Errors/Error/Code").text, "RequestExpired")
        status, _, body = skewed_request(self.sim, "AWS_ENDPOINT_URL_EC2", "ec2",
                                         "Action=DescribeVolumes&Version=2016-11-15", FORM, -200)
        self.assertEqual(status, 200)
        status, _, body = raw("POST", self.sim.env["AWS_ENDPOINT_URL_EC2"] + "/", FORM,
                              "Action=DescribeVolumes&Version=2016-11-15", self.sim.ca)
        self.assertEqual((status, ET.fromstring(body).find("Errors/Error/Code").text),
                         (401, "MissingAuthenticationToken"))
        # a request signed for another service is refused
        status, _, body = self.sim.signed("ec2", "AWS_ENDPOINT_URL_EC2", "Action=DescribeVolumes&Version=2016-11-15",
                                          FORM, signing_name="monitoring")
        self.assertEqual(status, 401)
        # a payload hash header that does not match the body is refused even if signed
        status, _, body = self.sim.signed("ec2", "AWS_ENDPOINT_URL_EC2", "Action=DescribeVolumes&Version=2016-11-15",
                                          dict(FORM, **{"X-Amz-Content-SHA256": "0" * 64}))
        self.assertEqual(status, 401)
        # the body is part of the signature: a body changed after signing is refused
        url = self.sim.env["AWS_ENDPOINT_URL_EC2"] + "/"
        req = botocore.awsrequest.AWSRequest(method="POST", url=url, headers=FORM,
                                             data="Action=DescribeVolumes&Version=2016-11-15")
        botocore.auth.SigV4Auth(botocore.credentials.Credentials(*ADMIN), "ec2", "us-east-1").add_auth(req)
        headers = dict(req.headers.items())
        self.assertEqual(raw("POST", url, headers, req.body, self.sim.ca)[0], 200)
        tampered = "Action=DescribeVolumes&Version=2016-11-15&MaxResults=5"
        self.assertEqual(raw("POST", url, headers, tampered, self.sim.ca)[0], 401)

    def test_cloudwatch_json_auth_errors(self):
        body = json.dumps({"MetricDataQueries": [{"Id": "e", "Expression": "1"}],
                           "StartTime": time.time() - 3600, "EndTime": time.time()})
        h = {"Content-Type": "application/x-amz-json-1.0",
             "X-Amz-Target": "GraniteServiceVersion20100801.GetMetricData"}
        status, headers, out = self.sim.signed("monitoring", "AWS_ENDPOINT_URL_CLOUDWATCH", body, h, keys=WRONG)
        self.assertEqual((status, json.loads(out)["__type"]), (403, "InvalidSignatureException"))
        status, headers, out = self.sim.signed("monitoring", "AWS_ENDPOINT_URL_CLOUDWATCH", body, h, keys=UNKNOWN)
        self.assertEqual((status, json.loads(out)["__type"]), (403, "UnrecognizedClientException"))
        status, headers, out = skewed_request(self.sim, "AWS_ENDPOINT_URL_CLOUDWATCH", "monitoring", body, h, 900)
        self.assertEqual((status, json.loads(out)["__type"]), (403, "InvalidSignatureException"))
        self.assertIn("Signature not yet current", json.loads(out)["message"])
        status, headers, out = skewed_request(self.sim, "AWS_ENDPOINT_URL_CLOUDWATCH", "monitoring", body, h, -900)
        self.assertRegex(json.loads(out)["message"], r"^Signature expired: \d{8}T\d{6}Z is now earlier than")
        self.assertEqual(self.err(self.sim.client("cloudwatch", keys=WRONG), "get_metric_data",
                                  MetricDataQueries=[{"Id": "e", "Expression": "1"}],
                                  StartTime=time.time() - 3600, EndTime=time.time())[:2],
                         ("SignatureDoesNotMatch", 403))  # the query protocol (this botocore)

    def test_pricing_and_sts_auth_errors(self):
        p = self.sim.client("pricing", keys=UNKNOWN)
        self.assertEqual(self.err(p, "get_products", ServiceCode="AmazonEC2")[:2], ("UnrecognizedClientException", 403))
        p = self.sim.client("pricing", region="ap-northeast-2")
        self.assertEqual(self.err(p, "get_products", ServiceCode="AmazonEC2")[0], "InvalidSignatureException")
        s = self.sim.client("sts", keys=WRONG)
        self.assertEqual(self.err(s, "get_caller_identity")[:2], ("SignatureDoesNotMatch", 403))
        s = self.sim.client("sts", keys=UNKNOWN)
        self.assertEqual(self.err(s, "get_caller_identity")[:2], ("InvalidClientTokenId", 403))
        s = self.sim.client("sts", keys=EXPIRED, token="ebssim-expired-session-token")
        self.assertEqual(self.err(s, "get_caller_identity")[0], "ExpiredToken")

    def test_permissions_per_service(self):
        ro_cw = self.sim.client("cloudwatch", keys=READONLY)
        ro_cw.get_metric_data(MetricDataQueries=[{"Id": "e", "Expression": "1"}],
                              StartTime=time.time() - 3600, EndTime=time.time())
        ro = self.sim.client("sts", keys=READONLY)
        self.assertTrue(ro.get_caller_identity()["Arn"].endswith(":user/readonly"))

    def test_policy_conditions(self):
        """`ctl policy`: a principal's IAM policy with aws:RequestedRegion and ec2:ResourceTag
        conditions, as `ebsmigrate iam-policy --region --require-tag` writes them."""
        policy = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": ["ec2:Describe*"], "Resource": "*",
             "Condition": {"StringEquals": {"aws:RequestedRegion": ["us-east-1"]}}},
            {"Effect": "Allow", "Action": ["ec2:ModifyVolume"], "Resource": "*",
             "Condition": {"StringEquals": {"aws:RequestedRegion": ["us-east-1"], "ec2:ResourceTag/ebssim-test": "db"}}}]}
        self.sim.ctl("POST", "/policy", {"principal": "readonly", "policy": policy})
        try:
            east = self.sim.client("ec2", keys=READONLY)
            self.assertGreater(len(east.describe_volumes()["Volumes"]), 0)
            seoul = self.sim.client("ec2", keys=READONLY, region="ap-northeast-2")
            self.assertEqual(self.err(seoul, "describe_volumes")[:2], ("UnauthorizedOperation", 403))
            # untagged: refused before EC2 judges the request; tagged: allowed (DryRun says so)
            self.assertEqual(self.err(east, "modify_volume", VolumeId="vol-0aa00000000000001", VolumeType="gp3",
                                      DryRun=True)[:2], ("UnauthorizedOperation", 403))
            self.sim.client("ec2").create_tags(Resources=["vol-0aa00000000000001"], Tags=[{"Key": "ebssim-test", "Value": "db"}])
            self.assertEqual(self.err(east, "modify_volume", VolumeId="vol-0aa00000000000001", VolumeType="gp3",
                                      DryRun=True)[:2], ("DryRunOperation", 412))
            # a pricing call: no statement allows it
            self.assertEqual(self.err(self.sim.client("pricing", keys=READONLY), "get_products",
                                      ServiceCode="AmazonEC2")[0], "AccessDeniedException")
        finally:
            self.sim.ctl("POST", "/policy", {"principal": "readonly", "policy": None})
        self.assertGreater(len(self.sim.client("pricing", keys=READONLY).get_products(
            ServiceCode="AmazonEC2", MaxResults=1)["PriceList"]), 0)

    def test_caller_identity_signed_and_presigned(self):
        ident = self.sim.client("sts").get_caller_identity()
        self.assertEqual((ident["Account"], ident["Arn"]), ("111122223333", "arn:aws:iam::111122223333:user/admin"))
        url = self.sim.client("sts").generate_presigned_url("get_caller_identity", ExpiresIn=60, HttpMethod="GET")
        status, _, body = raw("GET", url, {}, None, self.sim.ca)
        self.assertEqual(status, 200, body)
        self.assertIn(b"<Arn>arn:aws:iam::111122223333:user/admin</Arn>", body)
        status, _, body = raw("GET", url.replace("X-Amz-Signature=", "X-Amz-Signature=0"), {}, None, self.sim.ca)
        self.assertEqual(status, 403)

    def test_web_identity(self):
        sts = botocore.session.get_session().create_client(
            "sts", region_name="us-east-1", endpoint_url=self.sim.env["AWS_ENDPOINT_URL_STS"], verify=self.sim.ca,
            config=botocore.config.Config(signature_version=botocore.UNSIGNED))
        token = open(self.sim.env["EBSSIM_WEB_IDENTITY_TOKEN_FILE"]).read()
        r = sts.assume_role_with_web_identity(RoleArn=self.sim.env["EBSSIM_ROLE_ARN"],
                                              RoleSessionName="t1", WebIdentityToken=token)
        c = r["Credentials"]
        self.assertTrue(c["AccessKeyId"].startswith("ASIA"))
        self.assertEqual(r["AssumedRoleUser"]["Arn"], "arn:aws:sts::111122223333:assumed-role/ebsmigrate/t1")
        ec2 = self.sim.client("ec2", keys=(c["AccessKeyId"], c["SecretAccessKey"]), token=c["SessionToken"])
        self.assertEqual(len(ec2.describe_volumes()["Volumes"]), 10)
        ident = self.sim.client("sts", keys=(c["AccessKeyId"], c["SecretAccessKey"]),
                                token=c["SessionToken"]).get_caller_identity()
        self.assertEqual(ident["Arn"], "arn:aws:sts::111122223333:assumed-role/ebsmigrate/t1")
        # the role may not read pricing through another service's permissions, but has its own list
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            sts.assume_role_with_web_identity(RoleArn=self.sim.env["EBSSIM_ROLE_ARN"], RoleSessionName="t2",
                                              WebIdentityToken="forged")
        self.assertEqual(e.exception.response["Error"]["Code"], "InvalidIdentityToken")
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            sts.assume_role_with_web_identity(RoleArn="arn:aws:iam::111122223333:role/nope", RoleSessionName="t3",
                                              WebIdentityToken=token)
        self.assertEqual(e.exception.response["Error"]["Code"], "AccessDenied")
        log = [x for x in self.sim.requests("sts") if x["action"] == "AssumeRoleWithWebIdentity"]
        self.assertNotIn("WebIdentityToken", log[0]["params"])

    def test_imds_v2(self):
        base = self.sim.env["AWS_EC2_METADATA_SERVICE_ENDPOINT"]
        self.assertEqual(raw("GET", base + "/latest/meta-data/iam/security-credentials/", {}, None)[0], 401)
        self.assertEqual(raw("PUT", base + "/latest/api/token", {}, None)[0], 400)
        status, h, token = raw("PUT", base + "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "60"}, None)
        self.assertEqual(status, 200)
        hdr = {"X-aws-ec2-metadata-token": token.decode()}
        status, _, role = raw("GET", base + "/latest/meta-data/iam/security-credentials/", hdr, None)
        self.assertEqual((status, role), (200, b"ebsmigrate"))
        status, _, doc = raw("GET", base + "/latest/meta-data/iam/security-credentials/ebsmigrate", hdr, None)
        creds = json.loads(doc)
        self.assertEqual(creds["Code"], "Success")
        ec2 = self.sim.client("ec2", keys=(creds["AccessKeyId"], creds["SecretAccessKey"]), token=creds["Token"])
        self.assertEqual(len(ec2.describe_volumes()["Volumes"]), 10)
        self.assertEqual(raw("GET", base + "/latest/meta-data/placement/region", hdr, None)[2], b"us-east-1")
        self.assertEqual(raw("GET", base + "/latest/meta-data/iam/security-credentials/ebsmigrate",
                             {"X-aws-ec2-metadata-token": "forged"}, None)[0], 401)

    def test_container_credentials(self):
        url = self.sim.env["AWS_CONTAINER_CREDENTIALS_FULL_URI"]
        token = open(self.sim.env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"]).read()
        self.assertEqual(raw("GET", url, {}, None)[0], 400)
        self.assertEqual(raw("GET", url, {"Authorization": "wrong"}, None)[0], 401)
        status, _, doc = raw("GET", url, {"Authorization": token}, None)
        creds = json.loads(doc)
        self.assertEqual(sorted(creds), ["AccessKeyId", "AccountId", "Expiration", "SecretAccessKey", "Token"])
        ec2 = self.sim.client("ec2", keys=(creds["AccessKeyId"], creds["SecretAccessKey"]), token=creds["Token"])
        self.assertEqual(len(ec2.describe_volumes()["Volumes"]), 10)
        # IMDS-issued credentials without the session token are refused
        with self.assertRaises(botocore.exceptions.ClientError):
            self.sim.client("ec2", keys=(creds["AccessKeyId"], creds["SecretAccessKey"])).describe_volumes()


class EksToken(unittest.TestCase):
    """sim.verify_presigned_sts on URLs presigned the way `aws eks get-token` does it."""

    @classmethod
    def setUpClass(cls):
        cls.sim = ebssim_core.Sim(ebssim_core.load_scenario("basic"), "/nonexistent")

    def presign(self, cluster, keys=ADMIN, sign_header=True, region="us-east-1"):
        sts = botocore.session.get_session().create_client(
            "sts", region_name=region, aws_access_key_id=keys[0], aws_secret_access_key=keys[1])

        def add_header(request, **kw):
            if sign_header:
                request.headers["x-k8s-aws-id"] = cluster
        sts.meta.events.register("before-sign.sts.GetCallerIdentity", add_header)
        return sts.generate_presigned_url("get_caller_identity", Params={}, ExpiresIn=60, HttpMethod="GET")

    def test_valid_token(self):
        url = self.presign("prod")
        self.assertEqual(self.sim.verify_presigned_sts(url, {"x-k8s-aws-id": "prod"}), ("admin", None))
        url = self.presign("prod", region="ap-northeast-2")
        self.assertEqual(self.sim.verify_presigned_sts(url, {"x-k8s-aws-id": "prod"}), ("admin", None))

    def test_wrong_cluster_and_unsigned_header(self):
        name, why = self.sim.verify_presigned_sts(self.presign("prod"), {"x-k8s-aws-id": "legacy"})
        self.assertIsNone(name)
        self.assertIn("signature", why)
        name, why = self.sim.verify_presigned_sts(self.presign("prod", sign_header=False), {"x-k8s-aws-id": "prod"})
        self.assertIsNone(name)
        self.assertIn("x-k8s-aws-id", why)

    def test_expiry_and_host(self):
        url = self.presign("prod")
        old = ebssim_core.amz_date(time.time() - 16 * 60)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        stale = url.replace("X-Amz-Date=" + q["X-Amz-Date"][0], "X-Amz-Date=" + old)
        name, why = self.sim.verify_presigned_sts(stale, {"x-k8s-aws-id": "prod"})
        self.assertIn("expired", why)
        host = urllib.parse.urlsplit(url).netloc
        name, why = self.sim.verify_presigned_sts(url.replace(host, "evil.example.com"), {"x-k8s-aws-id": "prod"})
        self.assertIn("hostname", why)


if __name__ == "__main__":
    unittest.main()
