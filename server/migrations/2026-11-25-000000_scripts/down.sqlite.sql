UPDATE jobs SET spec_json = json_set(spec_json, '$.script', script) WHERE script IS NOT NULL AND spec_json <> '';
ALTER TABLE jobs DROP COLUMN script_bytes;
ALTER TABLE jobs DROP COLUMN script;
