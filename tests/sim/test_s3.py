"""The simulator's S3 (ebssim_s3.py) against botocore's own S3 client (path-style, as SDKs use a
custom endpoint): PutObject stores what GetObject returns and what the state dir holds; the
signature is checked with S3's rules (path signed as sent); a wrong x-amz-content-sha256, a
missing one, a bad signature and a principal without s3:PutObject are refused as S3 refuses them."""
import hashlib
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import botocore.auth  # noqa: E402
import botocore.awsrequest  # noqa: E402
import botocore.config  # noqa: E402
import botocore.credentials  # noqa: E402
import botocore.exceptions  # noqa: E402
import botocore.session  # noqa: E402

import simtest  # noqa: E402


class S3Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = simtest.SimProcess()

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def s3(self, keys=simtest.ADMIN):
        session = botocore.session.Session()
        session.set_config_variable("config_file", os.devnull)
        session.set_config_variable("credentials_file", os.devnull)
        return session.create_client(
            "s3", region_name="us-east-1", endpoint_url=self.sim.env["AWS_ENDPOINT_URL_S3"], verify=self.sim.ca,
            aws_access_key_id=keys[0], aws_secret_access_key=keys[1],
            config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}))

    def test_put_get_round_trip(self):
        body = "# report\n\u00e9t\u00e9 \u2014 100%\n".encode()
        self.s3().put_object(Bucket="reports", Key="nightly/report-1.md", Body=body, ContentType="text/markdown")
        got = self.s3().get_object(Bucket="reports", Key="nightly/report-1.md")
        self.assertEqual(got["Body"].read(), body)
        self.assertEqual(got["ContentType"], "text/markdown")
        self.assertEqual(got["ETag"], '"%s"' % hashlib.md5(body).hexdigest())
        with open(os.path.join(self.sim.state_dir, "s3", "reports", "nightly", "report-1.md"), "rb") as f:
            self.assertEqual(f.read(), body)
        log = [e for e in self.sim.requests("s3") if e["params"].get("Key") == "nightly/report-1.md"]
        self.assertEqual([(e["action"], e["status"]) for e in log], [("PutObject", 200), ("GetObject", 200)])

    def test_key_needing_encoding_signed_as_sent(self):
        # botocore encodes the space once and S3SigV4Auth signs that path; a double-encoding
        # verifier would refuse it
        self.s3().put_object(Bucket="reports", Key="a b/c+d.txt", Body=b"x")
        self.assertEqual(self.s3().get_object(Bucket="reports", Key="a b/c+d.txt")["Body"].read(), b"x")

    def test_missing_key(self):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.s3().get_object(Bucket="reports", Key="nope")
        self.assertEqual(cm.exception.response["Error"]["Code"], "NoSuchKey")

    def test_denied_without_permission(self):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.s3(simtest.READONLY).put_object(Bucket="reports", Key="x", Body=b"x")
        self.assertEqual(cm.exception.response["Error"]["Code"], "AccessDenied")
        self.assertIn("s3:PutObject", cm.exception.response["Error"]["Message"])

    def signed_put(self, body, payload_hash, secret=simtest.ADMIN[1]):
        url = self.sim.env["AWS_ENDPOINT_URL_S3"] + "/reports/raw.txt"
        req = botocore.awsrequest.AWSRequest(method="PUT", url=url, data=body)
        creds = botocore.credentials.Credentials(simtest.ADMIN[0], secret)
        botocore.auth.S3SigV4Auth(creds, "s3", "us-east-1").add_auth(req)  # signs the real hash
        del req.headers["X-Amz-Content-SHA256"]
        if payload_hash is not None:  # then claim another one (or none)
            req.headers["X-Amz-Content-SHA256"] = payload_hash
        return simtest.raw("PUT", url, dict(req.headers.items()), body, self.sim.ca)

    def test_content_sha256_checked(self):
        st, _, _ = self.signed_put(b"hello", hashlib.sha256(b"hello").hexdigest())
        self.assertEqual(st, 200)
        st, _, body = self.signed_put(b"hello", hashlib.sha256(b"other").hexdigest())
        self.assertEqual(st, 400)
        self.assertIn(b"<Code>XAmzContentSHA256Mismatch</Code>", body)
        st, _, body = self.signed_put(b"hello", None)
        self.assertEqual(st, 400)
        self.assertIn(b"x-amz-content-sha256", body)

    def test_bad_signature(self):
        st, _, body = self.signed_put(b"hello", hashlib.sha256(b"hello").hexdigest(), secret="wrong")
        self.assertEqual(st, 403)
        self.assertIn(b"<Code>SignatureDoesNotMatch</Code>", body)


if __name__ == "__main__":
    unittest.main()
