-- Back to plain sequence numbers; subjob rows cannot be represented and are dropped.
DELETE FROM jobs WHERE seq % 4294967296 <> 0;
UPDATE jobs SET seq = seq / 4294967296;
