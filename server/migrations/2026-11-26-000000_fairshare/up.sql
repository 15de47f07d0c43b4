-- Fair share (issue 16): each job's eligible time (OpenPBS `eligible_time`: seconds accrued up
-- to the last stop of its clock, and when the clock last started while it runs), and the
-- decayed usage of users and groups (weighted resource-hours as of `stamp`; a user's `grp` is
-- the group of its last charged job). Portable SQL (SQLite and PostgreSQL).
ALTER TABLE jobs ADD COLUMN eligible_time BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN eligible_since BIGINT;

CREATE TABLE fairshare_usage (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    usage DOUBLE PRECISION NOT NULL,
    stamp BIGINT NOT NULL,
    grp TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);
