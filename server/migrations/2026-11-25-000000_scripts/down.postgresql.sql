UPDATE jobs SET spec_json = jsonb_set(spec_json::jsonb, '{script}', to_jsonb(script))::text
 WHERE script IS NOT NULL AND spec_json <> '';
ALTER TABLE jobs DROP COLUMN script_bytes;
ALTER TABLE jobs DROP COLUMN script;
