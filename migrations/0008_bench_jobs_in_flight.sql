-- 0008_bench_jobs_in_flight.sql - how many fio jobs a bench result stands for, so verdicts know
-- the I/Os a run kept in flight (jobs x iodepth, Little's law: docs/bench.md). Conventions as in
-- 0001_init.sql.
-- jobs: numjobs when fio's group_reporting folded the job's clones into one result (the normal
-- output's "jobs=N"), else 1. Rows recorded before this migration get it from their stored
-- options; a job with more than one I/O in flight is no longer 'latency' (queue depth 1 alone
-- said so before: seeds/003's 7 jobs at queue depth 1 keep 7 in flight). Also from here on:
-- read_ios/write_ios are NULL when fio did not report a count (fio 2.x), where 0 was stored.

ALTER TABLE bench_jobs ADD COLUMN jobs INTEGER NOT NULL DEFAULT 1 CHECK (jobs >= 1);

UPDATE bench_jobs SET jobs = CAST(json_extract(options_json, '$.numjobs') AS INTEGER)
 WHERE json_valid(options_json)
   AND json_type(options_json, '$.group_reporting') IS NOT NULL
   AND json_extract(options_json, '$.group_reporting') IS NOT '0'
   AND CAST(json_extract(options_json, '$.numjobs') AS INTEGER) > 1;

UPDATE bench_jobs SET kind = CASE WHEN COALESCE(bs, 0) >= 131072 THEN 'throughput' ELSE 'iops' END
 WHERE kind = 'latency' AND jobs * COALESCE(NULLIF(iodepth, 0), 1) > 1;
