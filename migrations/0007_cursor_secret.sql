ALTER TABLE `orgs` ADD `cursor_secret` text DEFAULT '' NOT NULL;--> statement-breakpoint
-- Every existing org gets its own random key (new orgs get one from the code that creates them).
UPDATE `orgs` SET `cursor_secret` = lower(hex(randomblob(32))) WHERE `cursor_secret` = '';
