CREATE TABLE `holds` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`starts_at` integer NOT NULL,
	`ends_at` integer NOT NULL,
	`occupied_until` integer NOT NULL,
	`service_id` text,
	`technician_id` text,
	`postal_code` text,
	`expires_at` integer NOT NULL,
	`ended_at` integer,
	`incident_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `holds_org_starts` ON `holds` (`org_id`,`starts_at`,`occupied_until`,`technician_id`,`expires_at`);--> statement-breakpoint
CREATE INDEX `holds_org_technician_starts` ON `holds` (`org_id`,`technician_id`,`starts_at`);--> statement-breakpoint
CREATE INDEX `holds_org_expires` ON `holds` (`org_id`,`expires_at`);--> statement-breakpoint
CREATE INDEX `holds_expires` ON `holds` (`expires_at`);