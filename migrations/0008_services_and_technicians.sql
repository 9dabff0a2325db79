CREATE TABLE `services` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`name_lower` text NOT NULL,
	`duration_minutes` integer NOT NULL,
	`buffer_minutes` integer DEFAULT 0 NOT NULL,
	`arrival_window_minutes` integer DEFAULT 0 NOT NULL,
	`skills` text NOT NULL,
	`keywords` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `services_org_name` ON `services` (`org_id`,`name_lower`);--> statement-breakpoint
CREATE UNIQUE INDEX `services_org_default` ON `services` (`org_id`) WHERE "services"."is_default" = 1;--> statement-breakpoint
CREATE TABLE `technicians` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`skills` text NOT NULL,
	`postal_codes` text NOT NULL,
	`weekly_hours` text,
	`days_off` text NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `technicians_org` ON `technicians` (`org_id`,`id`);--> statement-breakpoint
DROP INDEX `incidents_scheduled_org_starts_ends`;--> statement-breakpoint
ALTER TABLE `incidents` ADD `service_id` text REFERENCES services(id);--> statement-breakpoint
ALTER TABLE `incidents` ADD `technician_id` text REFERENCES technicians(id);--> statement-breakpoint
ALTER TABLE `incidents` ADD `postal_code` text;--> statement-breakpoint
ALTER TABLE `incidents` ADD `occupied_until` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every visit booked so far occupies exactly its own span (no service, no buffer).
UPDATE `incidents` SET `occupied_until` = `ends_at`;--> statement-breakpoint
ALTER TABLE `incidents` ADD `arrival_window_minutes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `incidents_scheduled_org_starts_occupied` ON `incidents` (`org_id`,`starts_at`,`occupied_until`,`technician_id`) WHERE "incidents"."status" = 'scheduled';--> statement-breakpoint
CREATE INDEX `incidents_org_technician_starts` ON `incidents` (`org_id`,`technician_id`,`starts_at`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_org_service_starts` ON `incidents` (`org_id`,`service_id`,`starts_at`,`id`);--> statement-breakpoint
-- A row inserted without its occupied end (a raw insert of an older shape:
-- seeds, scripts) occupies its own span, as every visit booked before services did.
CREATE TRIGGER `incidents_occupied_until_default` AFTER INSERT ON `incidents` WHEN NEW.`occupied_until` = 0
BEGIN
  UPDATE `incidents` SET `occupied_until` = NEW.`ends_at` WHERE `id` = NEW.`id`;
END;
