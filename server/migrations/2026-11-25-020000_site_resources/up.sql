-- Site-defined resources (qmgr `create resource NAME type=T, flag=F`), in qmgr's words
-- (`string`, `hn`), and the values nodes have for them (`set node N resources_available.NAME`),
-- in their shown form. Portable SQL (SQLite and PostgreSQL).
CREATE TABLE resource_defs (
    name TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    flags TEXT NOT NULL
);

CREATE TABLE node_resources (
    node TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (node, name)
);
