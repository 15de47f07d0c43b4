DROP TABLE node_resources;
DROP TABLE resource_defs;
