DROP TABLE server_lease;
