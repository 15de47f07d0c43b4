-- The `seq` column now holds the job's key (job::JobId::key): the sequence number shifted left
-- by 32 bits, plus index + 1 for an array subjob. Rows written before hold plain sequence
-- numbers; shift them. Portable SQL (SQLite and PostgreSQL).
UPDATE jobs SET seq = seq * 4294967296;
