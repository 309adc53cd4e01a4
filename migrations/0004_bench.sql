-- 0004_bench.sql - fio benchmark runs: what was run where, every job's results, the raw fio
-- JSON, and the per-second IOPS series. Conventions as in 0001_init.sql. Written by bench.c
-- as results arrive (a run row first with status 'running', each fio result when fio returns
-- it, the final status last), read by `bench list/compare` and the report.

CREATE TABLE bench_runs (
	id                INTEGER PRIMARY KEY,
	label             TEXT,
	source            TEXT NOT NULL CHECK (source IN ('local', 'kube', 'import')),
	target            TEXT,                 -- directory, 'pvc NS/NAME', 'storage-class SC', imported file
	status            TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
	created_at        TEXT NOT NULL,
	finished_at       TEXT,
	fio_version       TEXT,                 -- 'fio-3.33'
	options_json      TEXT NOT NULL DEFAULT '{}', -- profiles, runtime, size, job file, image
	phase             TEXT CHECK (phase IN ('before', 'after')),
	error             TEXT,
	-- The volume under test, when known (NULL = unknown).
	volume_id         TEXT,
	volume_type       TEXT,
	volume_size_gib   INTEGER,
	volume_iops       INTEGER,              -- provisioned (gp3/io*) or baseline (gp2) IOPS
	volume_throughput INTEGER,              -- MiB/s
	burst_balance     REAL,                 -- percent, at the start of the run
	instance_type     TEXT,                 -- the node's, e.g. 'm5.xlarge'
	node              TEXT,
	pvc               TEXT,                 -- 'NS/NAME'
	-- The migration this run is the before or after of.
	apply_volume_id   INTEGER REFERENCES apply_volumes (id)
);
CREATE INDEX bench_runs_volume ON bench_runs (volume_id, created_at);
CREATE INDEX bench_runs_label ON bench_runs (label, created_at);

-- The JSON documents fio printed, as it printed them (minus any notices before the '{').
CREATE TABLE bench_outputs (
	id         INTEGER PRIMARY KEY,
	run_id     INTEGER NOT NULL REFERENCES bench_runs (id) ON DELETE CASCADE,
	fio_json   TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX bench_outputs_run ON bench_outputs (run_id);

-- One row per fio job. Latencies in ms (fio's ns / 1e6), NULL when fio did not report them;
-- a direction without I/O has NULL iops.
CREATE TABLE bench_jobs (
	id                INTEGER PRIMARY KEY,
	run_id            INTEGER NOT NULL REFERENCES bench_runs (id) ON DELETE CASCADE,
	output_id         INTEGER REFERENCES bench_outputs (id) ON DELETE CASCADE,
	seq               INTEGER NOT NULL,     -- order within the run
	name              TEXT NOT NULL,
	profile           TEXT,                 -- 'randread-qd32', ... or NULL for custom jobs
	kind              TEXT NOT NULL CHECK (kind IN ('iops', 'throughput', 'latency')),
	bs                INTEGER,
	iodepth           INTEGER,
	hostname          TEXT,                 -- client/server fio: the server
	options_json      TEXT NOT NULL DEFAULT '{}',
	lat_source        TEXT,                 -- 'clat_ns', 'lat_ns', 'clat', 'lat'
	error             INTEGER NOT NULL DEFAULT 0,
	runtime_ms        INTEGER NOT NULL DEFAULT 0,
	read_iops         REAL, read_mibps REAL, read_ios INTEGER, read_bytes INTEGER,
	read_lat_mean_ms  REAL, read_lat_p50_ms REAL, read_lat_p95_ms REAL, read_lat_p99_ms REAL,
	read_lat_p99_9_ms REAL,
	write_iops        REAL, write_mibps REAL, write_ios INTEGER, write_bytes INTEGER,
	write_lat_mean_ms REAL, write_lat_p50_ms REAL, write_lat_p95_ms REAL, write_lat_p99_ms REAL,
	write_lat_p99_9_ms REAL,
	cliff_at_s        REAL,                 -- NULL = no cliff in the series
	cliff_before_iops REAL,
	cliff_after_iops  REAL,
	created_at        TEXT NOT NULL,
	UNIQUE (run_id, seq)
);

-- The IOPS log at 1 s: read + write IOPS of each window, by the window's end (ms from the start).
CREATE TABLE bench_series (
	job_id INTEGER NOT NULL REFERENCES bench_jobs (id) ON DELETE CASCADE,
	t_ms   INTEGER NOT NULL,
	iops   REAL NOT NULL,
	PRIMARY KEY (job_id, t_ms)
) WITHOUT ROWID;
