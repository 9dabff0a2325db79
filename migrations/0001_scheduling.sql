CREATE TABLE `incidents` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`client_name` text NOT NULL,
	`insect_name` text NOT NULL,
	`account_id` text,
	`starts_at` integer NOT NULL,
	`ends_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `incidents_org_starts` ON `incidents` (`org_id`,`starts_at`);--> statement-breakpoint
ALTER TABLE `orgs` ADD `schedule` text;--> statement-breakpoint
ALTER TABLE `orgs` ADD `max_slot_minutes` integer DEFAULT 60 NOT NULL;