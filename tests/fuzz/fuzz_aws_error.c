/* fuzz_aws_error.c - AWS error answers (EC2/STS/Pricing XML envelopes, the JSON protocols'
 * __type/message) as aws_client decodes them. The first byte picks XML or JSON and whether an
 * x-amzn-ErrorType header accompanies the body. */
#include <stdlib.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/http.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	struct http_response r;
	http_response_init(&r);
	buf_add(&r.body, (const char *)data + 1, size - 1);
	if (data[0] & 2)
		http_headers_add(&r.headers, "x-amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/");
	char *code = NULL, *message = NULL;
	aws_error_parse(&r, data[0] & 1, &code, &message);
	free(code);
	free(message);
	http_response_release(&r);
	return 0;
}
