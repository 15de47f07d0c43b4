-- Accounting records committed with the change they record, until the accounting writer has
-- appended and fsynced them to server_priv/accounting (then it deletes them).
CREATE TABLE accounting (
    id BIGINT PRIMARY KEY NOT NULL,
    time BIGINT NOT NULL,
    line TEXT NOT NULL
);
