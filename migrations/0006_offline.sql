-- 0006_offline.sql - plan documents stored compressed: a 60,000-volume plan was 28 MB of JSON
-- per `plan` run. Conventions as in 0001_init.sql.
-- plan_zlib: the document as one zlib stream (RFC 1950; what SQLite's sqlar_compress and zlib's
-- compress() write), plan_size: its length in bytes uncompressed (so the sqlite3 shell reads it
-- back with sqlar_uncompress(plan_zlib, plan_size)). ledger.c writes new plans this way with
-- plan_json = ''; a row whose plan_json is not empty (recorded before this migration, or
-- edited by hand) is read from plan_json. plan_sha256 stays the hash of the document itself.

ALTER TABLE plans ADD COLUMN plan_zlib BLOB;
ALTER TABLE plans ADD COLUMN plan_size INTEGER CHECK (plan_size >= 0);
