DROP TABLE server_attrs;
DROP TABLE queue_attrs;
