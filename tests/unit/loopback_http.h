/*
 * loopback_http.h - a scripted HTTP/1.1 server on 127.0.0.1 for the C unit tests (header-only).
 *
 * lb_start() binds an OS-chosen port and serves from a thread: each request it reads (keep-alive
 * honoured) gets the next scripted response, in order; past the end of the script it answers
 * 599. Every request is recorded (method, target, raw header block, body, connection number) so
 * tests assert exactly what the client sent. A response with status 0 drops the connection
 * without answering; delay_ms waits before answering (timeouts); close_after closes after it.
 *
 * Ownership: the script is borrowed and must outlive lb_stop(); recorded requests are owned
 * by the server and freed by lb_stop(). Read them only between requests (the client has its
 * answer, so the server is done with that request) or after lb_stop().
 */
#ifndef EBSMIGRATE_LOOPBACK_HTTP_H
#define EBSMIGRATE_LOOPBACK_HTTP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct lb_response {
	int status;            /* 0 = drop the connection without answering */
	const char *headers;   /* extra header lines, each ending "\r\n"; NULL = none */
	const char *body;      /* NULL = empty */
	int delay_ms;
	int close_after;
};

struct lb_request {
	char *method;
	char *target;
	char *head;            /* the header lines as received, "\r\n"-separated */
	char *body;
	size_t body_len;
	int conn;              /* 1-based connection number */
};

struct lb_server {
	int listen_fd;
	int port;
	pthread_t thread;
	pthread_mutex_t mu;
	int stop;
	const struct lb_response *script;
	size_t n_script, next;
	struct lb_request *reqs;
	size_t n_reqs, alloc_reqs;
	int n_conns;
	char url[64];          /* "http://127.0.0.1:PORT" */
};

/* memmem without _GNU_SOURCE */
static inline char *lb_find(const char *hay, size_t n, const char *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(hay + i, needle, m) == 0)
			return (char *)hay + i;
	return NULL;
}

static inline int lb_stopping(struct lb_server *s)
{
	pthread_mutex_lock(&s->mu);
	int st = s->stop;
	pthread_mutex_unlock(&s->mu);
	return st;
}

/* Reads until the socket has data, EOF or stop. Returns bytes read, 0 at EOF/stop, -1 error. */
static inline ssize_t lb_read(struct lb_server *s, int fd, char *p, size_t n)
{
	for (;;) {
		if (lb_stopping(s))
			return 0;
		struct pollfd pfd = {fd, POLLIN, 0};
		int pr = poll(&pfd, 1, 50);
		if (pr < 0 && errno != EINTR)
			return -1;
		if (pr <= 0)
			continue;
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

static inline void lb_send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static inline const char *lb_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

/* Serves one connection; returns when the peer closes or the script says so. */
static inline void lb_serve_conn(struct lb_server *s, int fd, int conn)
{
	char *in = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		char *end = NULL;
		while (!(in && (end = lb_find(in, len, "\r\n\r\n", 4)))) {
			if (len + 4096 > cap) {
				cap = cap ? cap * 2 : 8192;
				in = realloc(in, cap);
			}
			ssize_t r = lb_read(s, fd, in + len, cap - len);
			if (r <= 0) {
				free(in);
				return;
			}
			len += (size_t)r;
		}
		size_t head_len = (size_t)(end - in);
		size_t content_length = 0;
		for (char *p = in; p < end;) {
			char *eol = lb_find(p, (size_t)(end - p) + 2, "\r\n", 2);
			if (!eol)
				break;
			if ((size_t)(eol - p) > 15 && strncasecmp(p, "Content-Length:", 15) == 0)
				content_length = (size_t)strtoul(p + 15, NULL, 10);
			p = eol + 2;
		}
		size_t total = head_len + 4 + content_length;
		while (len < total) {
			if (total > cap) {
				cap = total + 1;
				in = realloc(in, cap);
			}
			ssize_t r = lb_read(s, fd, in + len, cap - len);
			if (r <= 0) {
				free(in);
				return;
			}
			len += (size_t)r;
		}
		/* Record the request. */
		struct lb_request rq = {0};
		char *line_end = lb_find(in, head_len + 2, "\r\n", 2);
		char *sp1 = memchr(in, ' ', (size_t)(line_end - in));
		char *sp2 = NULL;
		for (char *q = line_end - 1; sp1 && q > sp1; q--)
			if (*q == ' ') {
				sp2 = q;
				break;
			}
		rq.method = strndup(in, sp1 ? (size_t)(sp1 - in) : 0);
		rq.target = sp1 && sp2 ? strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1)) : strdup("");
		rq.head = strndup(line_end + 2, head_len > (size_t)(line_end + 2 - in) ? head_len - (size_t)(line_end + 2 - in) : 0);
		rq.body = malloc(content_length + 1);
		memcpy(rq.body, in + head_len + 4, content_length);
		rq.body[content_length] = '\0';
		rq.body_len = content_length;
		rq.conn = conn;
		memmove(in, in + total, len - total);
		len -= total;

		pthread_mutex_lock(&s->mu);
		if (s->n_reqs == s->alloc_reqs) {
			s->alloc_reqs = s->alloc_reqs ? s->alloc_reqs * 2 : 16;
			s->reqs = realloc(s->reqs, s->alloc_reqs * sizeof *s->reqs);
		}
		s->reqs[s->n_reqs++] = rq;
		struct lb_response resp = {599, NULL, "script exhausted", 0, 1};
		if (s->next < s->n_script)
			resp = s->script[s->next++];
		pthread_mutex_unlock(&s->mu);

		if (resp.delay_ms)
			usleep((useconds_t)resp.delay_ms * 1000);
		if (resp.status == 0) {
			free(in);
			return;
		}
		const char *body = resp.body ? resp.body : "";
		char head[512];
		int hn = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\n%s", resp.status,
				  lb_reason(resp.status), strlen(body), resp.close_after ? "Connection: close\r\n" : "");
		lb_send_all(fd, head, (size_t)hn);
		if (resp.headers)
			lb_send_all(fd, resp.headers, strlen(resp.headers));
		lb_send_all(fd, "\r\n", 2);
		lb_send_all(fd, body, strlen(body));
		if (resp.close_after) {
			free(in);
			return;
		}
	}
}

static inline void *lb_thread(void *arg)
{
	struct lb_server *s = arg;
	while (!lb_stopping(s)) {
		struct pollfd pfd = {s->listen_fd, POLLIN, 0};
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		int fd = accept(s->listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&s->mu);
		int conn = ++s->n_conns;
		pthread_mutex_unlock(&s->mu);
		lb_serve_conn(s, fd, conn);
		close(fd);
	}
	return NULL;
}

/* Starts a server answering with script[0..n). Returns 0 or -1. */
static inline int lb_start(struct lb_server *s, const struct lb_response *script, size_t n)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	s->script = script;
	s->n_script = n;
	s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->listen_fd < 0)
		return -1;
	int one = 1;
	setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	if (bind(s->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->listen_fd, 16) != 0 ||
	    getsockname(s->listen_fd, (struct sockaddr *)&a, &al) != 0) {
		close(s->listen_fd);
		return -1;
	}
	s->port = ntohs(a.sin_port);
	snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
	if (pthread_create(&s->thread, NULL, lb_thread, s) != 0) {
		close(s->listen_fd);
		return -1;
	}
	return 0;
}

static inline void lb_stop(struct lb_server *s)
{
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
	for (size_t i = 0; i < s->n_reqs; i++) {
		free(s->reqs[i].method);
		free(s->reqs[i].target);
		free(s->reqs[i].head);
		free(s->reqs[i].body);
	}
	free(s->reqs);
	pthread_mutex_destroy(&s->mu);
}

static inline size_t lb_count(struct lb_server *s)
{
	pthread_mutex_lock(&s->mu);
	size_t n = s->n_reqs;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static inline int lb_conns(struct lb_server *s)
{
	pthread_mutex_lock(&s->mu);
	int n = s->n_conns;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Request i (0-based), or NULL when fewer arrived. */
static inline const struct lb_request *lb_req(struct lb_server *s, size_t i)
{
	pthread_mutex_lock(&s->mu);
	const struct lb_request *r = i < s->n_reqs ? &s->reqs[i] : NULL;
	pthread_mutex_unlock(&s->mu);
	return r;
}

/* Value of header name in a recorded request (first occurrence), copied into out; NULL when
 * absent. */
static inline const char *lb_header(const struct lb_request *r, const char *name, char *out, size_t out_n)
{
	if (!r)
		return NULL;
	size_t nl = strlen(name);
	for (const char *p = r->head; p && *p;) {
		const char *eol = strstr(p, "\r\n");
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		if (ll > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (*v == ' ')
				v++;
			size_t vl = ll - (size_t)(v - p);
			if (vl >= out_n)
				vl = out_n - 1;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return out;
		}
		p = eol ? eol + 2 : p + ll;
	}
	return NULL;
}

/* A port on 127.0.0.1 with nothing listening (bound, then closed). */
static inline int lb_dead_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	bind(fd, (struct sockaddr *)&a, sizeof a);
	getsockname(fd, (struct sockaddr *)&a, &al);
	close(fd);
	return ntohs(a.sin_port);
}

#endif
