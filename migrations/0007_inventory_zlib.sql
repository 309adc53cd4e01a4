-- 0007_inventory_zlib.sql - inventory documents stored compressed, as plans are since 0006: a
-- 100,000-volume inventory document is ~92 MB of JSON per `inventory` run. Conventions as in
-- 0001_init.sql.
-- inventory_zlib: the document as one zlib stream (RFC 1950, sqlar_uncompress reads it back with
-- inventory_size, its length uncompressed). ledger.c writes new runs this way with
-- inventory_json = ''; a row whose inventory_json is not empty (recorded before this migration,
-- or by a caller that hands the text) keeps its document there.

ALTER TABLE inventory_runs ADD COLUMN inventory_zlib BLOB;
ALTER TABLE inventory_runs ADD COLUMN inventory_size INTEGER CHECK (inventory_size >= 0);
