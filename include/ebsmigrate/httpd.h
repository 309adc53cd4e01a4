/*
 * httpd.h - a small HTTP server for `metrics --listen`: GET (and HEAD) requests answered by a
 * handler, one at a time, on the caller's thread. The only libmicrohttpd user.
 *
 * Safe to expose: a request whose Host header is not this server's (the address it was reached
 * at, "localhost", the --listen host, or an allowed name) is answered 403 before the handler, so
 * a DNS-rebinding page cannot read it from a browser; a client keeps at most
 * HTTPD_MAX_PER_CLIENT connections and the server HTTPD_MAX_CONNECTIONS (beyond, the oldest is
 * closed); each request must arrive whole within HTTPD_REQUEST_DEADLINE_S.
 *
 * Ownership: struct httpd is opaque; httpd_stop frees it. The handler fills a reply whose body
 * the server copies; content_type is borrowed until the handler returns.
 */
#ifndef EBSMIGRATE_HTTPD_H
#define EBSMIGRATE_HTTPD_H

#include <signal.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/strlist.h"

#define HTTPD_MAX_PER_CLIENT 4
#define HTTPD_MAX_CONNECTIONS 32
#define HTTPD_REQUEST_DEADLINE_S 10

struct httpd;

struct httpd_request {
	const char *method; /* GET or HEAD (others are answered 405 before the handler) */
	const char *path;   /* "/metrics" */
	const char *accept; /* the Accept header, NULL when none */
};

struct httpd_reply {
	int status;               /* 200 unless set */
	const char *content_type; /* "text/plain; charset=utf-8" unless set */
	struct buf body;
};

typedef void (*httpd_handler)(void *ctx, const struct httpd_request *rq, struct httpd_reply *rp);

/* Listens on ADDR:PORT ("127.0.0.1:9101", "[::1]:9101", "localhost:0"; port 0 picks a free one).
 * allow_hosts (may be NULL) names more hosts the Host header may carry (a Service name, a DNS name
 * the scraper uses); each must pass httpd_host_name_ok. EM_EINPUT for an address that does not
 * parse or a bad allowed host, EM_EIO when it cannot be bound; message in err. */
int httpd_start(struct httpd **out, const char *addr_port, const struct strlist *allow_hosts, httpd_handler h,
		void *ctx, struct buf *err);
/* 1 when name can be a Host header's host: an IP address, or letters, digits, '-', '_' and
 * single dots (no port). */
int httpd_host_name_ok(const char *name);
struct sockaddr;
/* The Host check (header: the Host header's value, any bytes; NULL = none): 1 when its host part
 * (without the port, a trailing dot ignored, case-insensitive) is "localhost", listen_host, one
 * of allow_hosts (may be NULL), or an IP literal of the address local (the one the connection
 * arrived at; NULL = unknown: no IP literal matches; v4-mapped v6 taken as v4). */
int httpd_host_allowed(const char *header, const char *listen_host, const struct strlist *allow_hosts,
		       const struct sockaddr *local);
/* "http://127.0.0.1:40123" (the port bound), for messages. */
const char *httpd_url(const struct httpd *s);
/* Serves requests until *stop is set (checked at least every 200 ms, and after each signal),
 * cutting off connections past their deadline as often. */
void httpd_serve(struct httpd *s, volatile sig_atomic_t *stop);
/* Closes the listening socket and every connection; frees s. NULL is ignored. */
void httpd_stop(struct httpd *s);
/* The version of the libmicrohttpd loaded ("0.9.75"), for `ebsmigrate version`. */
const char *httpd_library_version(void);

#endif
