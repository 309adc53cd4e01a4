/*
 * fio.c - the named benchmark profiles, the job files that run them, and the parsers for fio's
 * JSON report (also as kubestr wraps it) and IOPS logs. fio's normal text output: fio_text.c.
 *
 * Entry points: fio_profiles / fio_profile_find / fio_profile_infer / fio_kind_of /
 * fio_effective_depth, fio_parse_size / fio_format_size, fio_job_file, fio_parse_output (fio_text.c; either
 * form) / fio_parse_report / fio_report_extent, fio_parse_iops_log, fio_parse_eta_line.
 *
 * The report parser reads what every fio 3.x writes (and fio 2.x's microsecond latencies):
 *   { "fio version", "timestamp", "global options": {..},
 *     "jobs" | "client_stats": [ { "jobname", "error", "job options": {..}, "job_runtime",
 *        "hostname" (client/server), "iodepth_level": {"1": pct, .., ">=64": pct},
 *        "read" | "write": { "io_bytes", "bw_bytes" | "bw" (KiB/s), "iops", "total_ios", "runtime",
 *        "clat_ns" | "lat_ns": { "mean", "N", "percentile": {"99.000000": ns} },
 *        fio 2.x: "clat" | "lat" in us } } ] }
 * json+ adds "bins" beside "percentile"; they are not needed and ignored. kubestr's `fio -o json`
 * is {"size", "storageClass": {metadata.name, ..}, "fioConfig": "JOB FILE", "result": that
 * document re-encoded by Go (zeros omitted, percentiles and most options dropped)}: the options
 * come from the job file's [global] and [JOB] sections first, then from what fio reported.
 *
 * How many I/Os a job kept in flight (what Little's law needs, bench.c): iodepth from the options,
 * bounded by the IO-depth distribution, times numjobs when group_reporting folds the job's clones
 * into one result (jobs); without group_reporting every clone is its own result.
 *
 * Invariants: a latency here is fio's number divided once by 1e6 (ns) or 1e3 (us), never
 * recomputed from buckets, so reports agree with fio's own JSON to the last bit; cJSON values
 * never leave this file.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fio.h"
#include "ebsmigrate/jsonx.h"

const struct fio_profile fio_profiles[] = {
	{"randread-qd32", "randread", 4096, 32, FIO_KIND_IOPS, "4 KiB random reads at queue depth 32: the IOPS limit"},
	{"randwrite-qd32", "randwrite", 4096, 32, FIO_KIND_IOPS, "4 KiB random writes at queue depth 32: the IOPS limit"},
	{"latency-qd1", "randread", 4096, 1, FIO_KIND_LATENCY,
	 "4 KiB random reads at queue depth 1: the round-trip latency (judged on latency, not IOPS)"},
	{"seq-read-1m", "read", 1048576, 8, FIO_KIND_THROUGHPUT, "1 MiB sequential reads at queue depth 8: the throughput limit"},
	{"seq-write-1m", "write", 1048576, 8, FIO_KIND_THROUGHPUT,
	 "1 MiB sequential writes at queue depth 8: the throughput limit"},
	{NULL, NULL, 0, 0, 0, NULL},
};

const struct fio_profile *fio_profile_find(const char *name)
{
	for (const struct fio_profile *p = fio_profiles; name && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static const char *const kind_names[] = {"iops", "throughput", "latency"}; /* enum fio_kind's order */

const char *fio_kind_name(enum fio_kind k)
{
	return (unsigned)k <= FIO_KIND_LATENCY ? kind_names[k] : kind_names[FIO_KIND_IOPS];
}

enum fio_kind fio_kind_parse(const char *s)
{
	int i = em_name_index(kind_names, FIO_KIND_LATENCY + 1, s);
	return i < 0 ? FIO_KIND_IOPS : (enum fio_kind)i;
}

int fio_parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return EM_EINPUT;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return EM_EINPUT;
	int shift = 0;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': shift = 10; break;
		case 'm': shift = 20; break;
		case 'g': shift = 30; break;
		case 't': shift = 40; break;
		case 'p': shift = 50; break;
		case 'b': shift = 0; break;
		default: return EM_EINPUT;
		}
		end++;
		if (shift && (*end == 'i' || *end == 'I'))
			end++;
		if (shift && (*end == 'b' || *end == 'B'))
			end++;
		if (*end)
			return EM_EINPUT;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return EM_EINPUT;
	*out = (uint64_t)v << shift;
	return 0;
}

void fio_format_size(struct buf *out, uint64_t bytes)
{
	static const char units[] = "PTGMK";
	for (int i = 0; i < 5; i++) {
		int shift = 10 * (5 - i);
		uint64_t unit = (uint64_t)1 << shift;
		if (bytes >= unit && bytes % unit == 0) {
			buf_addf(out, "%llu%c", (unsigned long long)(bytes >> shift), units[i]);
			return;
		}
	}
	buf_addf(out, "%llu", (unsigned long long)bytes);
}

/* fio's bs may be "4k", "4k,8k" (read,write) or absent (4 KiB). */
static unsigned parse_bs(const char *bs)
{
	if (!bs || !*bs)
		return 4096;
	char first[64];
	size_t n = strcspn(bs, ",:");
	if (n == 0 || n >= sizeof first)
		return 0;
	memcpy(first, bs, n);
	first[n] = '\0';
	uint64_t v;
	if (fio_parse_size(first, &v) || v == 0 || v > UINT32_MAX)
		return 0;
	return (unsigned)v;
}

static unsigned parse_uint_opt(const char *s, unsigned def)
{
	if (!s || !*s)
		return def;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	return (*end || v > 1000000) ? 0 : (unsigned)v;
}

const struct fio_profile *fio_profile_infer(const char *rw, const char *bs, const char *iodepth,
					    const char *numjobs)
{
	unsigned b = parse_bs(bs), qd = parse_uint_opt(iodepth, 1), nj = parse_uint_opt(numjobs, 1);
	const char *r = rw && *rw ? rw : "read";
	if (nj != 1 || !b || !qd)
		return NULL;
	for (const struct fio_profile *p = fio_profiles; p->name; p++)
		if (strcmp(p->rw, r) == 0 && p->bs == b && p->iodepth == qd)
			return p;
	return NULL;
}

enum fio_kind fio_kind_of(unsigned bs, unsigned in_flight)
{
	if (in_flight == 1)
		return FIO_KIND_LATENCY;
	if (bs >= 131072)
		return FIO_KIND_THROUGHPUT;
	return FIO_KIND_IOPS;
}

unsigned fio_effective_depth(unsigned option_depth, const double dist[FIO_DEPTH_BUCKETS])
{
	size_t busiest = FIO_DEPTH_BUCKETS;
	for (size_t i = 0; dist && i < FIO_DEPTH_BUCKETS; i++)
		if (dist[i] > 0 && (busiest == FIO_DEPTH_BUCKETS || dist[i] > dist[busiest]))
			busiest = i;
	if (busiest == FIO_DEPTH_BUCKETS)
		return option_depth ? option_depth : 1;
	unsigned low = 1u << busiest; /* buckets 1, 2-3, 4-7, ..., 32-63, 64 and more */
	if (!option_depth)
		return low;
	if (busiest + 1 < FIO_DEPTH_BUCKETS && option_depth > 2 * low - 1)
		return 2 * low - 1;
	return option_depth;
}

const char *fio_output_format_name(enum fio_output_format f)
{
	switch (f) {
	case FIO_OUTPUT_TEXT: return "text";
	case FIO_OUTPUT_KUBESTR: return "kubestr";
	case FIO_OUTPUT_JSON: break;
	}
	return "json";
}

void fio_job_file(struct buf *out, const struct fio_job_spec *s)
{
	const struct fio_profile *p = s->profile;
	buf_addf(out, "; ebsmigrate bench profile %s: %s\n", p->name, p->description);
	buf_adds(out, "[global]\n");
	buf_addf(out, "ioengine=%s\n", s->ioengine ? s->ioengine : "libaio");
	buf_adds(out, "direct=1\ntime_based=1\n");
	buf_addf(out, "runtime=%d\n", s->runtime_s);
	buf_adds(out, "size=");
	fio_format_size(out, s->size);
	buf_addc(out, '\n');
	if (s->directory)
		buf_addf(out, "directory=%s\n", s->directory);
	buf_addf(out, "filename=%s\n", s->filename ? s->filename : "ebsmigrate-bench.dat");
	buf_adds(out, "group_reporting=1\n");
	if (s->iops_log)
		buf_addf(out, "write_iops_log=%s\nlog_avg_msec=1000\nper_job_logs=0\n", s->iops_log);
	buf_addf(out, "\n[%s]\nrw=%s\nbs=", p->name, p->rw);
	fio_format_size(out, p->bs);
	buf_addf(out, "\niodepth=%u\n", p->iodepth);
}

/* ---- report ---- */

void fio_report_init(struct fio_report *r)
{
	memset(r, 0, sizeof *r);
}

static void job_release(struct fio_job *j)
{
	EM_FREE_ALL(j->name, j->profile, j->hostname, j->options_json, j->lat_source, j->iops_log, j->error_text);
}

void fio_report_release(struct fio_report *r)
{
	for (size_t i = 0; i < r->n_jobs; i++)
		job_release(&r->jobs[i]);
	free(r->jobs);
	EM_FREE_ALL(r->fio_version, r->storage_class, r->size);
	fio_report_init(r);
}

size_t fio_report_extent(const char *text, size_t len)
{
	const char *open = memchr(text, '{', len);
	if (!open)
		return 0;
	size_t off = (size_t)(open - text);
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(open, len - off, &end, 0);
	if (!j)
		return 0;
	cJSON_Delete(j);
	return (size_t)(end - open);
}

/* A number member as a double: absent/null -> NAN (ok); present but not a number -> error. */
static int get_num(const cJSON *obj, const char *key, double *out, const char *origin, const char *path,
		   struct buf *err)
{
	const cJSON *v = jsonx_get(obj, key);
	*out = NAN;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return em_err(err, EM_EINPUT, "%s: %s.%s: expected a number", origin, path, key);
	*out = v->valuedouble;
	return 0;
}

/* The latency object to take percentiles from; *scale is its unit in ms. */
static const cJSON *pick_latency(const cJSON *dir, const char **name, double *scale)
{
	static const struct {
		const char *key;
		double ms;
	} order[] = {{"clat_ns", 1e6}, {"lat_ns", 1e6}, {"clat", 1e3}, {"lat", 1e3}};
	for (size_t i = 0; i < 4; i++) {
		const cJSON *o = jsonx_get(dir, order[i].key);
		if (cJSON_IsObject(o) && cJSON_IsObject(jsonx_get(o, "percentile"))) {
			*name = order[i].key;
			*scale = order[i].ms;
			return o;
		}
	}
	/* No percentiles at all (clat_percentiles=0): the mean is still worth having. */
	for (size_t i = 0; i < 4; i++) {
		const cJSON *o = jsonx_get(dir, order[i].key);
		if (cJSON_IsObject(o)) {
			*name = order[i].key;
			*scale = order[i].ms;
			return o;
		}
	}
	*name = NULL;
	return NULL;
}

static double percentile(const cJSON *pct, double want)
{
	for (const cJSON *e = cJSON_IsObject(pct) ? pct->child : NULL; e; e = e->next) {
		char *end;
		if (!e->string) /* a member of an object always has a name; defensive against hand-built trees */
			continue;
		double k = strtod(e->string, &end);
		if (end != e->string && fabs(k - want) < 1e-6 && cJSON_IsNumber(e))
			return e->valuedouble;
	}
	return NAN;
}

static int parse_dir(struct fio_dir *d, const cJSON *o, const char **lat_name, const char *origin, const char *path,
		     struct buf *err)
{
	struct fio_lat nolat = {NAN, NAN, NAN, NAN, NAN};
	memset(d, 0, sizeof *d);
	d->lat = nolat;
	d->iops = d->mibps = 0;
	if (!o || cJSON_IsNull(o))
		return 0;
	if (!cJSON_IsObject(o))
		return em_err(err, EM_EINPUT, "%s: %s: expected an object", origin, path);
	double iops, bw_bytes, bw_kib, io_bytes, io_kbytes, total;
	int rc = get_num(o, "iops", &iops, origin, path, err);
	if (!rc)
		rc = get_num(o, "bw_bytes", &bw_bytes, origin, path, err);
	if (!rc)
		rc = get_num(o, "bw", &bw_kib, origin, path, err);
	if (!rc)
		rc = get_num(o, "io_bytes", &io_bytes, origin, path, err);
	if (!rc)
		rc = get_num(o, "io_kbytes", &io_kbytes, origin, path, err);
	if (!rc)
		rc = get_num(o, "total_ios", &total, origin, path, err);
	if (rc)
		return rc;
	if (isnan(iops)) {
		/* kubestr re-encodes fio's JSON without its zeros: a direction without I/O is {} */
		if (!(io_bytes > 0) && !(io_kbytes > 0) && !(total > 0) && !(bw_bytes > 0) && !(bw_kib > 0))
			return 0;
		return em_err(err, EM_EINPUT, "%s: %s: no \"iops\"", origin, path);
	}
	d->iops = iops;
	d->mibps = !isnan(bw_bytes) ? bw_bytes / 1048576.0 : !isnan(bw_kib) ? bw_kib / 1024.0 : 0;
	/* fio 2.x wrote KiB under "io_bytes" (3.0 renamed it io_kbytes and made io_bytes bytes). */
	int legacy = isnan(io_kbytes) && !jsonx_get(o, "clat_ns") && !jsonx_get(o, "lat_ns") &&
		     (jsonx_get(o, "clat") || jsonx_get(o, "lat"));
	double bytes = !isnan(io_bytes) ? io_bytes * (legacy ? 1024 : 1) : !isnan(io_kbytes) ? io_kbytes * 1024 : 0;
	if (!(bytes >= 0 && bytes < 9e18) || !(isnan(total) || (total >= 0 && total < 9e18))) /* int64 range */
		return em_err(err, EM_EINPUT, "%s: %s: io_bytes, io_kbytes or total_ios is negative or too large", origin,
			      path);
	d->bytes = (int64_t)bytes;
	d->ios = !isnan(total) ? (int64_t)total : -1; /* fio 2.x wrote no count: unknown, not 0 */
	d->present = d->ios > 0 || d->bytes > 0 || d->iops > 0;
	if (!d->present)
		return 0;

	const char *name;
	double scale = 1;
	const cJSON *lat = pick_latency(o, &name, &scale);
	if (!lat)
		return 0;
	double n;
	rc = get_num(lat, "N", &n, origin, path, err);
	double mean;
	if (!rc)
		rc = get_num(lat, "mean", &mean, origin, path, err);
	if (rc)
		return rc;
	if (!isnan(n) && n <= 0)
		return 0;
	const cJSON *pct = jsonx_get(lat, "percentile");
	if (pct && !cJSON_IsObject(pct))
		return em_err(err, EM_EINPUT, "%s: %s.%s.percentile: must be an object of \"P\": value pairs", origin,
			      path, name);
	d->lat.mean = mean / scale;
	d->lat.p50 = percentile(pct, 50) / scale;
	d->lat.p95 = percentile(pct, 95) / scale;
	d->lat.p99 = percentile(pct, 99) / scale;
	d->lat.p99_9 = percentile(pct, 99.9) / scale;
	if (!*lat_name)
		*lat_name = name;
	return 0;
}

static const char *opt_str(const cJSON *opts, const char *key)
{
	return jsonx_str(opts, key);
}

/* Copies every member of src into dst, replacing members of the same name. */
static void overlay_options(cJSON *dst, const cJSON *src)
{
	for (const cJSON *e = cJSON_IsObject(src) ? src->child : NULL; e; e = e->next) {
		if (!e->string)
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(dst, e->string);
		cJSON_AddItemToObject(dst, e->string, cJSON_Duplicate(e, 1));
	}
}

/* The options a fio job file gives job: its [global] section overlaid with its [job] section,
 * as fio's JSON writes options ({"numjobs": "4", "group_reporting": ""}). kubestr hands the job
 * file beside a report that lost most options. Lines are "key=value", a bare "key", "[section]"
 * or comments (';', '#'); anything else is skipped: fio itself had read the file. */
static void job_file_options(cJSON *opts, const char *ini, const char *job)
{
	cJSON *sections[2] = {cJSON_CreateObject(), cJSON_CreateObject()}; /* global, the job's */
	cJSON *into = NULL;
	for (const char *p = ini; p && *p;) {
		size_t n = strcspn(p, "\r\n");
		const char *line = p, *next = p + n + (p[n] ? 1 : 0);
		p = next;
		while (n && (*line == ' ' || *line == '\t'))
			line++, n--;
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			n--;
		if (!n || *line == ';' || *line == '#')
			continue;
		if (*line == '[') {
			const char *close = memchr(line, ']', n);
			size_t len = close ? (size_t)(close - line - 1) : 0;
			into = !close ? NULL
			       : len == 6 && memcmp(line + 1, "global", 6) == 0 ? sections[0]
			       : strlen(job) == len && memcmp(line + 1, job, len) == 0 ? sections[1]
										  : NULL;
			continue;
		}
		if (!into)
			continue;
		const char *eq = memchr(line, '=', n);
		size_t klen = eq ? (size_t)(eq - line) : n;
		while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
			klen--;
		if (!klen)
			continue;
		char *key = xstrndup(line, klen), *value = xstrdup("");
		if (eq) {
			const char *v = eq + 1, *stop = line + n;
			while (v < stop && (*v == ' ' || *v == '\t'))
				v++;
			free(value);
			value = xstrndup(v, (size_t)(stop - v));
		}
		cJSON_DeleteItemFromObjectCaseSensitive(into, key);
		cJSON_AddItemToObject(into, key, cJSON_CreateString(value));
		free(key);
		free(value);
	}
	overlay_options(opts, sections[0]);
	overlay_options(opts, sections[1]);
	cJSON_Delete(sections[0]);
	cJSON_Delete(sections[1]);
}

/* fio's "iodepth_level" into the buckets of FIO_DEPTH_BUCKETS; 1 when there is one. Keys it does
 * not know ("0", kubestr's) are skipped; a share that is not a number from 0 to 100 is an error. */
static int parse_depth_levels(double dist[FIO_DEPTH_BUCKETS], const cJSON *levels, const char *origin,
			      const char *path, int *have, struct buf *err)
{
	static const char *const keys[FIO_DEPTH_BUCKETS][2] = {{"1", NULL}, {"2", NULL},  {"4", NULL},   {"8", NULL},
							      {"16", NULL}, {"32", NULL}, {">=64", "64"}};
	*have = 0;
	for (size_t i = 0; i < FIO_DEPTH_BUCKETS; i++)
		dist[i] = 0;
	if (!levels || cJSON_IsNull(levels))
		return 0;
	if (!cJSON_IsObject(levels))
		return em_err(err, EM_EINPUT, "%s: %s.iodepth_level: expected an object", origin, path);
	for (size_t i = 0; i < FIO_DEPTH_BUCKETS; i++) {
		for (size_t k = 0; k < 2 && keys[i][k]; k++) {
			const cJSON *v = jsonx_get(levels, keys[i][k]);
			if (!v)
				continue;
			if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 100.0001))
				return em_err(err, EM_EINPUT, "%s: %s.iodepth_level.%s: expected a percentage", origin, path,
					      keys[i][k]);
			dist[i] += v->valuedouble;
			*have |= v->valuedouble > 0;
		}
	}
	return 0;
}

/* fio's boolean options are set by their bare name or a non-zero value. */
static int option_set(const cJSON *opts, const char *key)
{
	const cJSON *v = jsonx_get(opts, key);
	return v && (!cJSON_IsString(v) || strcmp(v->valuestring, "0") != 0);
}

static int parse_job(struct fio_job *j, const cJSON *o, const cJSON *global, const char *job_file,
		     const char *origin, const char *arr, size_t idx, struct buf *err)
{
	char path[64];
	snprintf(path, sizeof path, "%s[%zu]", arr, idx);
	if (!cJSON_IsObject(o))
		return em_err(err, EM_EINPUT, "%s: %s: expected an object", origin, path);
	const char *name = jsonx_str(o, "jobname");
	if (!name)
		return em_err(err, EM_EINPUT, "%s: %s: no \"jobname\"", origin, path);
	j->name = xstrdup(name);
	const char *host = jsonx_str(o, "hostname");
	j->hostname = xstrdup(host);

	/* Options: the job file's (kubestr), then the global section overlaid with the job's own. */
	cJSON *opts = cJSON_CreateObject();
	if (job_file)
		job_file_options(opts, job_file, name);
	overlay_options(opts, global);
	overlay_options(opts, jsonx_get(o, "job options"));
	char *printed = cJSON_PrintUnformatted(opts);
	if (!printed) {
		cJSON_Delete(opts);
		return em_err(err, EM_EINPUT, "%s: %s: cannot print the job options", origin, path);
	}
	j->options_json = xstrdup(printed);
	cJSON_free(printed);
	double dist[FIO_DEPTH_BUCKETS];
	int have_dist, rc = parse_depth_levels(dist, jsonx_get(o, "iodepth_level"), origin, path, &have_dist, err);
	if (rc) {
		cJSON_Delete(opts);
		return rc;
	}
	const char *rw = opt_str(opts, "rw") ? opt_str(opts, "rw") : opt_str(opts, "readwrite");
	const char *bs = opt_str(opts, "bs") ? opt_str(opts, "bs") : opt_str(opts, "blocksize");
	const char *numjobs = opt_str(opts, "numjobs");
	j->bs = parse_bs(bs);
	j->iodepth = fio_effective_depth(parse_uint_opt(opt_str(opts, "iodepth"), 1), have_dist ? dist : NULL);
	unsigned nj = parse_uint_opt(numjobs, 1);
	j->jobs = option_set(opts, "group_reporting") && nj > 1 ? nj : 1;
	char depth[16];
	snprintf(depth, sizeof depth, "%u", j->iodepth);
	const struct fio_profile *p = fio_profile_infer(rw, bs, depth, numjobs);
	j->profile = p ? xstrdup(p->name) : NULL;
	j->kind = p ? p->kind : fio_kind_of(j->bs, j->jobs * j->iodepth);
	j->iops_log = xstrdup(opt_str(opts, "write_iops_log"));
	cJSON_Delete(opts);

	int64_t v;
	int present;
	rc = jsonx_int(o, "error", INT32_MIN, INT32_MAX, &v, &present, origin, path, err);
	if (rc)
		return rc;
	j->error = (int)v;

	char dpath[96];
	const char *lat_name = NULL;
	snprintf(dpath, sizeof dpath, "%s.read", path);
	rc = parse_dir(&j->read, jsonx_get(o, "read"), &lat_name, origin, dpath, err);
	if (!rc) {
		snprintf(dpath, sizeof dpath, "%s.write", path);
		rc = parse_dir(&j->write, jsonx_get(o, "write"), &lat_name, origin, dpath, err);
	}
	if (rc)
		return rc;
	if (!jsonx_get(o, "read") && !jsonx_get(o, "write"))
		return em_err(err, EM_EINPUT, "%s: %s: no \"read\" or \"write\" statistics", origin, path);
	j->lat_source = xstrdup(lat_name);

	/* How long the job ran: a direction's runtime is the longest of its group's jobs, while
	 * job_runtime adds them up under group_reporting (7 jobs of 180 s: 1,260 s). */
	double rt, r1 = NAN, r2 = NAN;
	rc = get_num(o, "job_runtime", &rt, origin, path, err);
	if (!rc)
		rc = get_num(jsonx_get(o, "read"), "runtime", &r1, origin, path, err);
	if (!rc)
		rc = get_num(jsonx_get(o, "write"), "runtime", &r2, origin, path, err);
	if (rc)
		return rc;
	double longest = fmax(isnan(r1) ? 0 : r1, isnan(r2) ? 0 : r2);
	if (isnan(rt) || (j->jobs > 1 && longest > 0))
		rt = longest;
	if (!(rt >= 0 && rt < 9e18)) /* int64 range */
		return em_err(err, EM_EINPUT, "%s: %s: job_runtime is negative or too large", origin, path);
	j->runtime_ms = (int64_t)rt;
	return 0;
}

/* The first line of text, shortened, for messages. */
void fio_first_line(struct buf *out, const char *text, size_t len)
{
	size_t i = 0;
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	size_t n = 0;
	while (i + n < len && text[i + n] != '\n' && text[i + n] != '\r')
		n++;
	if (n > 72) {
		buf_add(out, text + i, 69);
		buf_adds(out, "...");
	} else {
		buf_add(out, text + i, n);
	}
}

/* Bytes up to the '}' that closes the object text starts with (strings and escapes respected),
 * or 0 when the text ends first: that is how a truncated document looks. */
static size_t balanced_extent(const char *text, size_t len)
{
	int depth = 0, in_str = 0, esc = 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return i + 1;
	}
	return 0;
}

int fio_parse_report(struct fio_report *out, const char *text, size_t len, const char *origin, struct buf *err)
{
	fio_report_init(out);
	const char *open = len ? memchr(text, '{', len) : NULL;
	if (!open) {
		size_t blank = 0; /* text is len bytes, not a C string: no strspn */
		while (blank < len && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\r' || text[blank] == '\n'))
			blank++;
		if (blank == len)
			return em_err(err, EM_EINPUT, "%s: empty, expected fio JSON output (--output-format=json)", origin);
		struct buf fl = BUF_INIT;
		fio_first_line(&fl, text, len);
		int rc = em_err(err, EM_EINPUT,
				"%s: no JSON object in fio output (run fio with --output-format=json); it starts with '%s'",
				origin, fl.s);
		buf_release(&fl);
		return rc;
	}
	size_t off = (size_t)(open - text);
	const char *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(open, len - off, &end, 0);
	if (!doc) {
		size_t extent = balanced_extent(open, len - off);
		if (extent == 0)
			return em_err(err, EM_EINPUT, "%s: fio JSON is truncated (the document ends after %zu bytes)",
				      origin, len - off);
		struct buf sub = BUF_INIT;
		cJSON *none = jsonx_parse(open, extent, origin, &sub); /* for the line and column */
		cJSON_Delete(none);
		int rc = em_err(err, EM_EINPUT, "%s", sub.len ? sub.s : "not valid JSON");
		buf_release(&sub);
		return rc;
	}
	int rc = 0;
	const char *arr = "jobs", *job_file = NULL;
	const cJSON *report = doc, *jobs = jsonx_get(doc, "jobs");
	const cJSON *kubestr = jsonx_get(doc, "result");
	if (!cJSON_IsArray(jobs) && cJSON_IsObject(kubestr) && cJSON_IsArray(jsonx_get(kubestr, "jobs"))) {
		/* kubestr fio -o json: the report under "result", the job file beside it */
		report = kubestr;
		jobs = jsonx_get(report, "jobs");
		arr = "result.jobs";
		out->format = FIO_OUTPUT_KUBESTR;
		job_file = jsonx_str(doc, "fioConfig");
		out->storage_class = xstrdup(jsonx_path_str(doc, "storageClass.metadata.name"));
		out->size = xstrdup(jsonx_str(doc, "size"));
	} else if (!cJSON_IsArray(jobs)) {
		jobs = jsonx_get(doc, "client_stats");
		arr = "client_stats";
		out->client_server = 1;
	}
	if (!cJSON_IsObject(doc) || !cJSON_IsArray(jobs)) {
		rc = em_err(err, EM_EINPUT, "%s: not a fio report: no \"jobs\" or \"client_stats\" array", origin);
		goto done;
	}
	const char *ver = jsonx_str(report, "fio version");
	out->fio_version = xstrdup(ver);
	double ts;
	if (get_num(report, "timestamp", &ts, origin, "", err) == 0 && !isnan(ts)) {
		if (!(ts >= 0 && ts < 253402300800.0)) { /* up to 9999-12-31 */
			rc = em_err(err, EM_EINPUT, "%s: timestamp %g is not a time", origin, ts);
			goto done;
		}
		out->timestamp = (int64_t)ts;
	}
	const cJSON *global = jsonx_get(report, "global options");
	size_t idx = 0, alloc = 0;
	for (const cJSON *j = jobs->child; j && !rc; j = j->next, idx++) {
		const char *name = jsonx_str(j, "jobname");
		if (out->client_server && name && strcmp(name, "All clients") == 0)
			continue; /* the sum over the servers, not a job */
		XGROW(out->jobs, out->n_jobs, alloc);
		struct fio_job *job = &out->jobs[out->n_jobs++];
		memset(job, 0, sizeof *job);
		rc = parse_job(job, j, global, job_file, origin, arr, idx, err);
	}
	if (!rc && out->n_jobs == 0)
		rc = em_err(err, EM_EINPUT, "%s: fio report has no jobs", origin);
done:
	cJSON_Delete(doc);
	if (rc)
		fio_report_release(out);
	return rc;
}

/* ---- IOPS logs ---- */

void fio_series_release(struct fio_series *s)
{
	free(s->t_ms);
	free(s->iops);
	memset(s, 0, sizeof *s);
}

static void series_add(struct fio_series *s, int64_t t, double v)
{
	/* Logs arrive in time order: look from the end. */
	size_t i = s->n;
	while (i > 0 && s->t_ms[i - 1] > t)
		i--;
	if (i > 0 && s->t_ms[i - 1] == t) {
		s->iops[i - 1] += v;
		return;
	}
	if (s->n >= s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 256;
		s->t_ms = xrealloc(s->t_ms, s->alloc * sizeof *s->t_ms);
		s->iops = xrealloc(s->iops, s->alloc * sizeof *s->iops);
	}
	memmove(s->t_ms + i + 1, s->t_ms + i, (s->n - i) * sizeof *s->t_ms);
	memmove(s->iops + i + 1, s->iops + i, (s->n - i) * sizeof *s->iops);
	s->t_ms[i] = t;
	s->iops[i] = v;
	s->n++;
}

int fio_parse_iops_log(struct fio_series *out, const char *text, size_t len, int64_t interval_ms,
		       const char *origin, struct buf *err)
{
	size_t line = 0, pos = 0;
	while (pos < len) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		pos += n + (nl ? 1 : 0);
		line++;
		char tmp[256];
		if (n >= sizeof tmp)
			return em_err(err, EM_EINPUT, "%s: line %zu: too long for an IOPS log line", origin, line);
		memcpy(tmp, start, n);
		tmp[n] = '\0';
		if (strspn(tmp, " \t\r") == n)
			continue;
		/* time, value, ddir, bs[, offset[, prio]] */
		long long f[3];
		char *p = tmp;
		for (int k = 0; k < 3; k++) {
			while (*p == ' ' || *p == '\t')
				p++;
			char *e;
			errno = 0;
			f[k] = strtoll(p, &e, 10);
			if (e == p || errno)
				return em_err(err, EM_EINPUT, "%s: line %zu: expected 'time, value, direction, ...', got '%.60s'",
					      origin, line, tmp);
			p = e;
			while (*p == ' ' || *p == '\t')
				p++;
			if (k < 2 && *p != ',')
				return em_err(err, EM_EINPUT, "%s: line %zu: expected 'time, value, direction, ...', got '%.60s'",
					      origin, line, tmp);
			if (*p == ',')
				p++;
		}
		if (f[0] < 0 || f[1] < 0 || f[2] < 0 || f[2] > 2)
			return em_err(err, EM_EINPUT, "%s: line %zu: out-of-range value in '%.60s'", origin, line, tmp);
		if (f[2] == 2)
			continue; /* trim */
		int64_t t = f[0];
		if (interval_ms > 0) {
			t = (t + interval_ms / 2) / interval_ms * interval_ms;
			if (t == 0)
				t = interval_ms;
		}
		series_add(out, t, (double)f[1]);
	}
	return 0;
}

/* ---- live status (--eta=always) ---- */

struct eta_unit {
	const char *text; /* what follows the number, exactly */
	double mult;
};

/* A non-negative number followed by exactly one of units' texts, scaled by its multiplier. */
static int eta_number(const char *s, const struct eta_unit *units, size_t n_units, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return EM_EINPUT;
	for (size_t i = 0; i < n_units; i++)
		if (strcmp(end, units[i].text) == 0) {
			*out = v * units[i].mult;
			return 0;
		}
	return EM_EINPUT;
}

/* A number with fio's decimal suffix (IOPS: "10.5k", "8910", "1.2M"). */
static int eta_count(const char *s, double *out)
{
	static const struct eta_unit suffix[] = {{"", 1},    {"k", 1e3},  {"K", 1e3},  {"M", 1e6},
						 {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
	return eta_number(s, suffix, sizeof suffix / sizeof *suffix, out);
}

/* A rate as fio prints it: "41.0MiB/s", "1234KiB/s", "0B/s"; kb_base=1000 gives "kB/s", "MB/s". */
static int eta_rate(const char *s, double *out)
{
	static const struct eta_unit units[] = {
		{"B/s", 1},         {"KiB/s", 1024.0},   {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
		{"TiB/s", 1099511627776.0}, {"kB/s", 1e3}, {"KB/s", 1e3},       {"MB/s", 1e6},
		{"GB/s", 1e9},      {"TB/s", 1e12}};
	return eta_number(s, units, sizeof units / sizeof *units, out);
}

/* "r=41.0MiB/s,w=1KiB/s" or "r=8910,w=8881" (the " IOPS" already cut): values by direction. */
static int eta_pairs(char *s, double out[2], int (*value)(const char *, double *))
{
	double got[2] = {NAN, NAN};
	for (char *item = s; item && *item;) {
		char *comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		if (strlen(item) < 3 || item[1] != '=')
			return EM_EINPUT;
		double v;
		if (value(item + 2, &v))
			return EM_EINPUT;
		if (item[0] == 'r')
			got[0] = v;
		else if (item[0] == 'w')
			got[1] = v;
		else if (item[0] != 't') /* trim: not shown */
			return EM_EINPUT;
		item = comma ? comma + 1 : NULL;
	}
	out[0] = got[0];
	out[1] = got[1];
	return 0;
}

/* "00m:01s", "01h:02m:03s", "2d:01h:02m:03s" -> seconds. */
static long eta_time(const char *s)
{
	long total = 0;
	int parts = 0;
	while (*s) {
		char *end;
		errno = 0;
		long v = strtol(s, &end, 10);
		if (end == s || errno || v < 0 || v > 1000000)
			return -1;
		long mult = *end == 'd' ? 86400 : *end == 'h' ? 3600 : *end == 'm' ? 60 : *end == 's' ? 1 : 0;
		if (!mult || ++parts > 4)
			return -1;
		total += v * mult;
		s = end + 1;
		if (*s == ':')
			s++;
		else if (*s)
			return -1;
	}
	return parts ? total : -1;
}

int fio_parse_eta_line(struct fio_eta *out, const char *line, size_t len)
{
	char text[512];
	/* leading blanks: fio pads a shorter line over a longer one */
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len < 6 || len >= sizeof text || memcmp(line, "Jobs: ", 6) != 0 || memchr(line, '\0', len))
		return EM_EINPUT;
	memcpy(text, line, len);
	text[len] = '\0';
	struct fio_eta e;
	memset(&e, 0, sizeof e);
	e.percent = NAN;
	e.iops[0] = e.iops[1] = e.bw_bytes[0] = e.bw_bytes[1] = NAN;
	e.eta_s = -1;
	char *p = text + 6, *end;
	errno = 0;
	unsigned long jobs = strtoul(p, &end, 10);
	if (end == p || errno || jobs > 1000000 || *p == '-' || *p == '+')
		return EM_EINPUT;
	e.jobs = (unsigned)jobs;
	p = end;
	if (strncmp(p, " (f=", 4) == 0) {
		char *close = strchr(p, ')');
		if (!close)
			return EM_EINPUT;
		p = close + 1;
	}
	if (*p == ':')
		p++;
	while (*p == ' ')
		p++;
	while (*p == '[') {
		char *close = strchr(p, ']');
		if (!close)
			return EM_EINPUT;
		*close = '\0';
		char *g = p + 1;
		size_t gl = strlen(g);
		if (gl && g[gl - 1] == '%') {
			char *pe;
			double v = strtod(g, &pe);
			if (pe != g && pe == g + gl - 1 && v >= 0 && v <= 100)
				e.percent = v;
			else if (strcmp(g, "-.-%") != 0)
				return EM_EINPUT;
		} else if (strncmp(g, "eta ", 4) == 0) {
			e.eta_s = eta_time(g + 4);
		} else if (gl > 5 && strcmp(g + gl - 5, " IOPS") == 0) {
			g[gl - 5] = '\0';
			if (eta_pairs(g, e.iops, eta_count))
				return EM_EINPUT;
		} else if (gl > 2 && g[1] == '=' && strstr(g, "/s")) {
			if (eta_pairs(g, e.bw_bytes, eta_rate))
				return EM_EINPUT;
		} else if (!e.run[0] && gl < sizeof e.run) {
			memcpy(e.run, g, gl + 1);
		}
		p = close + 1;
	}
	*out = e;
	return 0;
}
