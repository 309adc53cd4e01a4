/*
 * httpd.h - a small HTTP server for `metrics --listen`: GET (and HEAD) requests answered by a
 * handler, one at a time, on the caller's thread. The only libmicrohttpd user.
 *
 * Ownership: struct httpd is opaque; httpd_stop frees it. The handler fills a reply whose body
 * the server copies; content_type is borrowed until the handler returns.
 */
#ifndef EBSMIGRATE_HTTPD_H
#define EBSMIGRATE_HTTPD_H

#include <signal.h>

#include "ebsmigrate/buf.h"

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
 * EM_EINPUT for an address that does not parse, EM_EIO when it cannot be bound; message in err. */
int httpd_start(struct httpd **out, const char *addr_port, httpd_handler h, void *ctx, struct buf *err);
/* "http://127.0.0.1:40123" (the port bound), for messages. */
const char *httpd_url(const struct httpd *s);
/* Serves requests until *stop is set (checked at least every 200 ms, and after each signal). */
void httpd_serve(struct httpd *s, volatile sig_atomic_t *stop);
/* Closes the listening socket and every connection; frees s. NULL is ignored. */
void httpd_stop(struct httpd *s);
/* The version of the libmicrohttpd loaded ("0.9.75"), for `ebsmigrate version`. */
const char *httpd_library_version(void);

#endif
