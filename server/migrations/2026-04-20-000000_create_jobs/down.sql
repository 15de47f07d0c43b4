-- Undoes up.sql.
DROP TABLE meta;
DROP TABLE jobs;
