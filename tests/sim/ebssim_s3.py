"""ebssim_s3: the part of Amazon S3 ebsmigrate uses (`report --report-s3`): PutObject and
GetObject, path-style (`/BUCKET/KEY`, what SDKs send to a custom endpoint such as this
simulator's loopback address), over the shared signed-request flow (ebssim_aws.ServiceApp).

Signatures are checked with botocore's S3SigV4Auth (the path is signed as sent, never
normalized or encoded twice). As S3 does, a signed request must carry `x-amz-content-sha256`
(the body's SHA-256 hex or UNSIGNED-PAYLOAD); a value that is not the body's hash is refused
before the signature is looked at (ebssim_core.check_sigv4). Errors are S3's XML
`<Error><Code/><Message/><RequestId/></Error>`. Permissions: `s3:PutObject`, `s3:GetObject`.

Objects live in memory and are also written to STATE_DIR/s3/BUCKET/KEY (and KEY.meta.json with
the content type and ETag), so a test can read what was stored without a client.
Not emulated: virtual-hosted style, multipart uploads, listing, versioning, checksums other
than the SigV4 payload hash.
"""

import hashlib
import json
import os
import re
import urllib.parse

import ebssim_aws
from ebssim_core import ApiError, Response

BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def _error_xml(err, request_id):
    esc = lambda t: (str(t).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))  # noqa: E731
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s</Message>'
            '<RequestId>%s</RequestId></Error>' % (esc(err.code), esc(err.message), request_id))


class S3App(ebssim_aws.ServiceApp):
    service = "s3"
    iam_prefix = "s3"

    def __init__(self, apis):
        super().__init__(apis)
        self.objects = {}  # (bucket, key) -> {"body", "content_type", "etag"}

    def parse(self, req):
        parts = req.path.lstrip("/").split("/", 1)
        bucket = urllib.parse.unquote(parts[0])
        key = urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
        action = {"PUT": "PutObject", "GET": "GetObject"}.get(req.method)
        if not action or not key:
            raise ApiError("MethodNotAllowed", "The specified method is not allowed against this resource.", 405)
        if not BUCKET_RE.match(bucket):
            raise ApiError("InvalidBucketName", "The specified bucket is not valid.", 400)
        if ".." in key.split("/"):
            raise ApiError("InvalidArgument", "Invalid key", 400)
        if req.headers.get("authorization") and not req.headers.get("x-amz-content-sha256"):
            raise ApiError("InvalidRequest", "Missing required header for this request: x-amz-content-sha256", 400)
        return action, {"Bucket": bucket, "Key": key, "ContentLength": len(req.body)}, "rest-xml"

    def auth_error(self, af, proto):
        k = af.kind
        if k == "missing":
            return ApiError("AccessDenied", "Access Denied", 403)
        if k == "malformed":
            return ApiError("AuthorizationHeaderMalformed", af.message, 400)
        if k in ("unknown_key", "invalid_token"):
            return ApiError("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our "
                            "records.", 403)
        if k == "expired_token":
            return ApiError("ExpiredToken", "The provided token has expired.", 400)
        if k == "expired_sig":
            return ApiError("RequestTimeTooSkewed", af.message, 403)
        if "x-amz-content-sha256" in af.message:
            return ApiError("XAmzContentSHA256Mismatch", af.message, 400)
        return ApiError("SignatureDoesNotMatch", af.message, 403)

    def throttle_error(self, proto):
        return ApiError("SlowDown", "Please reduce your request rate.", 503, sender=False)

    def server_error(self, proto):
        return ApiError("InternalError", "We encountered an internal error. Please try again.", 500, sender=False)

    def denied(self, principal, perm, region, params, proto):
        return ApiError("AccessDenied", "User: %s is not authorized to perform: %s on resource: "
                        "\"arn:aws:s3:::%s/%s\"" % (principal.get("arn", principal.get("name")), perm,
                                                    params["Bucket"], params["Key"]), 403)

    def render_ok(self, action, body, request_id, proto):
        return body

    def render_error(self, err, request_id, proto):
        resp = Response(err.status, {"Content-Type": "application/xml", "x-amz-request-id": request_id},
                        _error_xml(err, request_id))
        resp.error_code = err.code
        return resp

    def _path(self, bucket, key):
        return os.path.join(self.sim.state_dir, "s3", bucket, *key.split("/"))

    def run(self, action, p, principal, region, req, proto):
        bucket, key = p["Bucket"], p["Key"]
        if action == "PutObject":
            etag = '"%s"' % hashlib.md5(req.body).hexdigest()
            ctype = req.headers.get("content-type") or "binary/octet-stream"
            with self.sim.lock:
                self.objects[(bucket, key)] = {"body": req.body, "content_type": ctype, "etag": etag}
                path = self._path(bucket, key)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(req.body)
                with open(path + ".meta.json", "w") as f:
                    json.dump({"content_type": ctype, "etag": etag, "length": len(req.body)}, f)
            return Response(200, {"ETag": etag, "Content-Length": "0"}, b"")
        with self.sim.lock:
            obj = self.objects.get((bucket, key))
        if obj is None:
            raise ApiError("NoSuchKey", "The specified key does not exist.", 404)
        return Response(200, {"ETag": obj["etag"], "Content-Type": obj["content_type"]}, obj["body"])
