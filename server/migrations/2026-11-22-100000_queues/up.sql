-- Queues and server attributes set with qmgr, one row per attribute in the text form qmgr
-- prints (`resources_max.walltime` = `01:00:00`). A queue exists while it has rows (every
-- queue has at least `enabled` and `started`). Portable SQL (SQLite and PostgreSQL).
CREATE TABLE queue_attrs (
    queue TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (queue, name)
);

CREATE TABLE server_attrs (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
