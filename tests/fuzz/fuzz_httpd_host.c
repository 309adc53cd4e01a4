/* fuzz_httpd_host.c - the Host header a `metrics --listen` request carries (httpd_host_allowed):
 * any bytes, checked for a server listening on 127.0.0.1 with --allow-host metrics.example. Knowing
 * the address connected to may only add IP literals to what is answered; a header answered without
 * it must name localhost, the --listen host or the allowed name (a DNS-rebinding page's own name
 * never passes), and one answered with it must at least start as one of those or as an IP literal. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "ebsmigrate/httpd.h"
#include "ebsmigrate/strlist.h"
#include "fuzz.h"

static int starts_with_name(const char *h)
{
	static const char *const names[] = {"localhost", "127.0.0.1", "metrics.example"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strncasecmp(h, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *header = fuzz_text(data, size, 4096);
	if (!header)
		return 0;
	struct strlist allow = STRLIST_INIT_NODUP;
	strlist_append(&allow, "metrics.example");
	struct sockaddr_in local;
	memset(&local, 0, sizeof local);
	local.sin_family = AF_INET;
	local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int with_local = httpd_host_allowed(header, "127.0.0.1", &allow, (const struct sockaddr *)&local);
	int without = httpd_host_allowed(header, "127.0.0.1", &allow, NULL);
	if (without && !with_local)
		abort();
	if (without && !starts_with_name(header))
		abort();
	if (with_local && !starts_with_name(header) && header[0] != '[' && !isxdigit((unsigned char)header[0]) &&
	    header[0] != ':')
		abort();
	strlist_release(&allow);
	free(header);
	return 0;
}
