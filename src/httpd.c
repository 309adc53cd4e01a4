/*
 * httpd.c - the small HTTP server of `metrics --listen` (see httpd.h): libmicrohttpd without
 * threads of its own, driven by httpd_serve on the caller's thread, so the handler (which reads
 * the database) runs where the command runs and never concurrently.
 *
 * Entry points: httpd_start, httpd_url, httpd_serve, httpd_stop, httpd_host_name_ok,
 * httpd_host_allowed, httpd_library_version.
 * Invariants: only GET and HEAD reach the handler (others: 405 with Allow), and only with a Host
 * this server answers to (else 403: a DNS-rebinding page's name never reads the figures); a
 * request body is never read; nothing is printed (libmicrohttpd's own error log is off).
 * No client can hold the server down: every connection is tracked from accept to close, a
 * client (one address) keeps at most HTTPD_MAX_PER_CLIENT connections and the server at most
 * HTTPD_MAX_CONNECTIONS (a new one closes the oldest beyond that, so a new scrape always gets
 * in), and a connection must send its whole request within HTTPD_REQUEST_DEADLINE_S of being
 * accepted, or of its previous answer, and take its answer within as long again: a client that
 * trickles header lines is cut off then, however active it keeps the connection (libmicrohttpd's
 * own timeout only counts idle time). Cutting off is shutdown(2) on the socket, which
 * libmicrohttpd then sees as the client's close.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/httpd.h"

/* One connection, from libmicrohttpd's accept to its close (its socket context). */
struct httpd_conn {
	struct httpd_conn *prev, *next; /* the server's list, oldest first */
	int fd;
	struct sockaddr_storage client;
	int64_t deadline_ms;            /* monotonic: the request (or the answer) must be done by then */
	int cut;                        /* shut down, waiting for libmicrohttpd to close it */
};

struct httpd {
	struct MHD_Daemon *d;
	httpd_handler handler;
	void *ctx;
	char *url;
	char *listen_host;              /* the host part of --listen, as given */
	struct strlist allow_hosts;     /* --allow-host: more names the Host header may carry */
	struct httpd_conn *first, *last;
};

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void cut(struct httpd_conn *k)
{
	if (!k->cut) {
		shutdown(k->fd, SHUT_RDWR);
		k->cut = 1;
	}
}

static int same_client(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)a)->sin_addr, &((const struct sockaddr_in *)b)->sin_addr,
			      sizeof(struct in_addr)) == 0;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return 0;
}

/* The limits on a new connection k: past HTTPD_MAX_PER_CLIENT of its client's, or
 * HTTPD_MAX_CONNECTIONS in all, the oldest connection (of that client; of all) is cut. The
 * oldest, not the new one: a connection that has been open longest has had its chance, and a
 * scrape arriving behind a crowd of trickling clients (from the same address too) gets in. */
static void enforce_limits(struct httpd *s, struct httpd_conn *k)
{
	size_t mine = 0, all = 0;
	for (struct httpd_conn *o = s->first; o; o = o->next) {
		if (o->cut)
			continue;
		all++;
		mine += same_client(&o->client, &k->client);
	}
	for (struct httpd_conn *o = s->first; o && o != k && mine > HTTPD_MAX_PER_CLIENT; o = o->next)
		if (!o->cut && same_client(&o->client, &k->client)) {
			cut(o);
			mine--;
			all--;
		}
	for (struct httpd_conn *o = s->first; o && o != k && all > HTTPD_MAX_CONNECTIONS; o = o->next)
		if (!o->cut) {
			cut(o);
			all--;
		}
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct httpd *s = cls;
	struct httpd_conn *k = *socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		k = xcalloc(1, sizeof *k);
		k->fd = fd ? fd->connect_fd : -1;
		if (addr && addr->client_addr)
			memcpy(&k->client, addr->client_addr,
			       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
									 : sizeof(struct sockaddr_in));
		k->deadline_ms = monotonic_ms() + HTTPD_REQUEST_DEADLINE_S * 1000;
		k->prev = s->last;
		if (s->last)
			s->last->next = k;
		else
			s->first = k;
		s->last = k;
		*socket_context = k;
		if (k->fd >= 0)
			enforce_limits(s, k);
		return;
	}
	if (!k) /* MHD_CONNECTION_NOTIFY_CLOSED */
		return;
	if (k->prev)
		k->prev->next = k->next;
	else
		s->first = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		s->last = k->prev;
	free(k);
	*socket_context = NULL;
}

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

/* The address an IP literal names (v4, or v6 with or without brackets), in out; 0 when host is
 * not one. A v4-mapped v6 address is taken as its v4 address. */
static int ip_literal(const char *host, size_t len, struct sockaddr_storage *out)
{
	char text[INET6_ADDRSTRLEN + 2];
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']')
		host++, len -= 2;
	if (!len || len >= sizeof text)
		return 0;
	memcpy(text, host, len);
	text[len] = '\0';
	memset(out, 0, sizeof *out);
	struct in6_addr v6;
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)out)->sin_addr) == 1) {
		out->ss_family = AF_INET;
		return 1;
	}
	if (inet_pton(AF_INET6, text, &v6) != 1)
		return 0;
	if (IN6_IS_ADDR_V4MAPPED(&v6)) {
		out->ss_family = AF_INET;
		memcpy(&((struct sockaddr_in *)out)->sin_addr, v6.s6_addr + 12, 4);
	} else {
		out->ss_family = AF_INET6;
		((struct sockaddr_in6 *)out)->sin6_addr = v6;
	}
	return 1;
}

/* A v4-mapped v6 address (a dual-stack socket's view of a v4 peer) as its v4 address. */
static void unmap_v4(struct sockaddr_storage *a)
{
	if (a->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)a)->sin6_addr))
		return;
	struct in_addr v4;
	memcpy(&v4, ((struct sockaddr_in6 *)a)->sin6_addr.s6_addr + 12, 4);
	memset(a, 0, sizeof *a);
	a->ss_family = AF_INET;
	((struct sockaddr_in *)a)->sin_addr = v4;
}

static int name_is(const char *host, size_t len, const char *name)
{
	return name && strlen(name) == len && strncasecmp(host, name, len) == 0;
}

int httpd_host_allowed(const char *header, const char *listen_host, const struct strlist *allow_hosts,
		       const struct sockaddr *local)
{
	if (!header || !*header)
		return 0;
	size_t len = strlen(header);
	if (header[0] == '[') {
		const char *end = strchr(header, ']');
		len = end ? (size_t)(end - header) + 1 : len;
	} else {
		const char *colon = strrchr(header, ':');
		if (colon && !memchr(header, ':', (size_t)(colon - header)))
			len = (size_t)(colon - header);
	}
	if (len > 1 && header[len - 1] == '.')
		len--;
	if (!len)
		return 0;
	if (name_is(header, len, "localhost") || name_is(header, len, listen_host))
		return 1;
	for (size_t i = 0; allow_hosts && i < allow_hosts->n; i++)
		if (name_is(header, len, allow_hosts->items[i]))
			return 1;
	struct sockaddr_storage named, here;
	if (!local || !ip_literal(header, len, &named))
		return 0;
	memset(&here, 0, sizeof here);
	memcpy(&here, local, local->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	unmap_v4(&here);
	return same_client(&named, &here);
}

/* Does the Host header name this server, as the connection k reached it? */
static int host_allowed(const struct httpd *s, const struct httpd_conn *k, const char *header)
{
	struct sockaddr_storage local;
	socklen_t len = sizeof local;
	int known = k && k->fd >= 0 && getsockname(k->fd, (struct sockaddr *)&local, &len) == 0;
	return httpd_host_allowed(header, s->listen_host, &s->allow_hosts, known ? (struct sockaddr *)&local : NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	(void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;
	struct httpd *s = cls;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct httpd_conn *k = ci ? ci->socket_context : NULL;
	struct httpd_reply rp = {200, NULL, BUF_INIT};
	int allow = 0;
	if (!host_allowed(s, k, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))) {
		rp.status = MHD_HTTP_FORBIDDEN;
		buf_adds(&rp.body, "forbidden: this server does not answer to that Host (see --allow-host)\n");
	} else if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		rp.status = MHD_HTTP_METHOD_NOT_ALLOWED;
		buf_adds(&rp.body, "method not allowed\n");
		allow = 1;
	} else {
		struct httpd_request rq = {method, url, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept")};
		s->handler(s->ctx, &rq, &rp);
	}
	enum MHD_Result ok = send_reply(c, rp.status, rp.content_type ? rp.content_type : "text/plain; charset=utf-8",
					&rp.body, allow);
	buf_release(&rp.body);
	if (k) /* the answer (and a next request on this connection) get a deadline of their own */
		k->deadline_ms = monotonic_ms() + HTTPD_REQUEST_DEADLINE_S * 1000;
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

int httpd_host_name_ok(const char *name)
{
	struct sockaddr_storage ignored;
	size_t len = name ? strlen(name) : 0;
	if (len && ip_literal(name, len, &ignored))
		return 1;
	if (!len || len > 253 || name[0] == '.' || name[0] == '-')
		return 0;
	for (size_t i = 0; i < len; i++) {
		char ch = name[i];
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
			 ch == '_' || (ch == '.' && name[i + 1] != '.');
		if (!ok)
			return 0;
	}
	return 1;
}

int httpd_start(struct httpd **out, const char *addr_port, const struct strlist *allow_hosts, httpd_handler h,
		void *ctx, struct buf *err)
{
	*out = NULL;
	for (size_t i = 0; allow_hosts && i < allow_hosts->n; i++)
		if (!httpd_host_name_ok(allow_hosts->items[i]))
			return em_err(err, EM_EINPUT,
				      "--allow-host: '%s' is not a host name or an IP address (give the name clients put in "
				      "the URL, without a port)",
				      allow_hosts->items[i]);
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
	s->allow_hosts = (struct strlist)STRLIST_INIT_DUP;
	for (size_t i = 0; allow_hosts && i < allow_hosts->n; i++)
		strlist_append(&s->allow_hosts, allow_hosts->items[i]);
	unsigned flags = ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0;
	/* the hard limit is above ours: past HTTPD_MAX_CONNECTIONS a new connection is still taken,
	 * and the oldest is cut (enforce_limits) */
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTPD_REQUEST_DEADLINE_S,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)(2 * HTTPD_MAX_CONNECTIONS),
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
	int v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	if (!s->d) {
		int rc = em_err(err, EM_EIO, "--listen: cannot listen on '%s' (address in use, or not this host's)",
				addr_port);
		free(host);
		strlist_release(&s->allow_hosts);
		free(s);
		return rc;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	struct buf url = BUF_INIT;
	buf_addf(&url, v6 ? "http://[%s]:%u" : "http://%s:%u", host, info ? (unsigned)info->port : 0u);
	s->url = buf_detach(&url);
	s->listen_host = host;
	*out = s;
	return 0;
}

const char *httpd_url(const struct httpd *s)
{
	return s->url;
}

void httpd_serve(struct httpd *s, volatile sig_atomic_t *stop)
{
	while (!*stop) {
		MHD_run_wait(s->d, 200);
		int64_t now = monotonic_ms();
		for (struct httpd_conn *k = s->first; k; k = k->next)
			if (now >= k->deadline_ms)
				cut(k);
	}
}

void httpd_stop(struct httpd *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d); /* closes every connection: on_connection frees each */
	free(s->url);
	free(s->listen_host);
	strlist_release(&s->allow_hosts);
	free(s);
}

const char *httpd_library_version(void)
{
	return MHD_get_version();
}
