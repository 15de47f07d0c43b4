DROP TABLE accounting;
