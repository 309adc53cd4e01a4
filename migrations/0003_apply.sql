-- 0003_apply.sql - the apply ledger: every intended and performed modification.
-- Conventions as in 0001_init.sql. Written by apply (every transition committed before the
-- API call it describes), read by status and report (realized savings).

CREATE TABLE apply_runs (
	id           INTEGER PRIMARY KEY,
	plan_id      INTEGER NOT NULL REFERENCES plans (id),
	started_at   TEXT NOT NULL,
	finished_at  TEXT,
	options_json TEXT NOT NULL DEFAULT '{}',
	pid          INTEGER,                   -- the process holding the run (lock diagnostics)
	outcome      TEXT                       -- NULL while running; 'ok' | 'partial' | 'failed' | 'interrupted'
);

-- One row per (plan, volume) the ledger has acted on or deferred. state follows
--   planned -> submitted -> modifying -> optimizing -> completed | failed, or deferred.
CREATE TABLE apply_volumes (
	id                    INTEGER PRIMARY KEY,
	plan_id               INTEGER NOT NULL REFERENCES plans (id),
	run_id                INTEGER REFERENCES apply_runs (id),
	volume_id             TEXT NOT NULL,
	account               TEXT,
	region                TEXT NOT NULL,
	cluster               TEXT,
	namespace             TEXT,
	pvc                   TEXT,
	method                TEXT NOT NULL CHECK (method IN ('vac', 'annotation', 'ec2')),
	state                 TEXT NOT NULL CHECK (state IN ('planned', 'submitted', 'modifying', 'optimizing',
	                                                     'completed', 'failed', 'deferred')),
	target_type           TEXT NOT NULL,
	target_iops           INTEGER NOT NULL,
	target_throughput     INTEGER NOT NULL,
	target_class          TEXT,            -- VolumeAttributesClass name (vac method)
	current_monthly_micro INTEGER NOT NULL, -- cost before, from the plan
	target_monthly_micro  INTEGER NOT NULL, -- cost after, from the plan
	eligible_at           TEXT,
	submitted_at          TEXT,
	started_at            TEXT,            -- modification seen started (EC2 modifying / PVC InProgress)
	completed_at          TEXT,
	error_code            TEXT,
	error_message         TEXT,
	updated_at            TEXT NOT NULL,
	UNIQUE (plan_id, volume_id)
);
CREATE INDEX apply_volumes_volume ON apply_volumes (volume_id, updated_at);
CREATE INDEX apply_volumes_state ON apply_volumes (state);

-- Every state transition, for audit and for counting modifications per rolling 24 h.
CREATE TABLE apply_events (
	id              INTEGER PRIMARY KEY,
	apply_volume_id INTEGER NOT NULL REFERENCES apply_volumes (id),
	at              TEXT NOT NULL,
	from_state      TEXT,
	to_state        TEXT NOT NULL,
	detail          TEXT
);
CREATE INDEX apply_events_volume ON apply_events (apply_volume_id, at);
