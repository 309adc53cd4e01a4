/*
 * httpd.c - the small HTTP server of `metrics --listen` (see httpd.h): libmicrohttpd without
 * threads of its own, driven by httpd_serve on the caller's thread, so the handler (which reads
 * the database) runs where the command runs and never concurrently.
 *
 * Entry points: httpd_start, httpd_url, httpd_serve, httpd_stop, httpd_library_version.
 * Invariants: only GET and HEAD reach the handler (others: 405 with Allow); a request body is
 * never read; connections time out after 10 s idle and at most 32 are open; nothing is printed
 * (libmicrohttpd's own error log is off).
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/httpd.h"

struct httpd {
	struct MHD_Daemon *d;
	httpd_handler handler;
	void *ctx;
	char *url;
};

static enum MHD_Result send_reply(struct MHD_Connection *c, int status, const char *type, const struct buf *body,
				  int allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(body->len, (void *)body->s, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	(void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;
	struct httpd *s = cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		struct buf b = BUF_INIT;
		buf_adds(&b, "method not allowed\n");
		enum MHD_Result ok = send_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", &b, 1);
		buf_release(&b);
		return ok;
	}
	struct httpd_request rq = {method, url, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept")};
	struct httpd_reply rp = {200, NULL, BUF_INIT};
	s->handler(s->ctx, &rq, &rp);
	enum MHD_Result ok =
		send_reply(c, rp.status, rp.content_type ? rp.content_type : "text/plain; charset=utf-8", &rp.body, 0);
	buf_release(&rp.body);
	return ok;
}

/* "HOST:PORT" or "[V6]:PORT" into host and port (copies). */
static int split_addr(const char *arg, char **host, char **port)
{
	const char *colon;
	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');
		if (!end || end[1] != ':')
			return -1;
		*host = xstrndup(arg + 1, (size_t)(end - arg - 1));
		colon = end + 1;
	} else {
		colon = strrchr(arg, ':');
		if (!colon || colon == arg || memchr(arg, ':', (size_t)(colon - arg)))
			return -1;
		*host = xstrndup(arg, (size_t)(colon - arg));
	}
	int64_t p;
	if (em_parse_i64(colon + 1, &p) || p < 0 || p > 65535) {
		free(*host);
		return -1;
	}
	*port = xstrdup(colon + 1);
	return 0;
}

int httpd_start(struct httpd **out, const char *addr_port, httpd_handler h, void *ctx, struct buf *err)
{
	*out = NULL;
	char *host = NULL, *port = NULL;
	if (split_addr(addr_port, &host, &port))
		return em_err(err, EM_EINPUT, "--listen: '%s' is not ADDRESS:PORT (e.g. 127.0.0.1:9101 or [::1]:9101)",
			      addr_port);
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int gai = getaddrinfo(host, port, &hints, &ai);
	free(port);
	if (gai != 0 || !ai) {
		int rc = em_err(err, EM_EINPUT, "--listen: cannot resolve '%s': %s", host, gai_strerror(gai));
		free(host);
		return rc;
	}
	struct httpd *s = xcalloc(1, sizeof *s);
	s->handler = h;
	s->ctx = ctx;
	unsigned flags = ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0;
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
				MHD_OPTION_END);
	int v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	if (!s->d) {
		int rc = em_err(err, EM_EIO, "--listen: cannot listen on '%s' (address in use, or not this host's)",
				addr_port);
		free(host);
		free(s);
		return rc;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	struct buf url = BUF_INIT;
	buf_addf(&url, v6 ? "http://[%s]:%u" : "http://%s:%u", host, info ? (unsigned)info->port : 0u);
	s->url = buf_detach(&url);
	free(host);
	*out = s;
	return 0;
}

const char *httpd_url(const struct httpd *s)
{
	return s->url;
}

void httpd_serve(struct httpd *s, volatile sig_atomic_t *stop)
{
	while (!*stop)
		MHD_run_wait(s->d, 200);
}

void httpd_stop(struct httpd *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s->url);
	free(s);
}

const char *httpd_library_version(void)
{
	return MHD_get_version();
}
