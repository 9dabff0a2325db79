DROP INDEX `incidents_org_starts_ends`;--> statement-breakpoint
ALTER TABLE `incidents` ADD `status` text DEFAULT 'scheduled' NOT NULL;--> statement-breakpoint
ALTER TABLE `incidents` ADD `phone` text;--> statement-breakpoint
ALTER TABLE `incidents` ADD `notes` text;--> statement-breakpoint
ALTER TABLE `incidents` ADD `updated_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `incidents` ADD `cancelled_at` integer;--> statement-breakpoint
ALTER TABLE `incidents` ADD `cancel_reason` text;--> statement-breakpoint
CREATE INDEX `incidents_scheduled_org_starts_ends` ON `incidents` (`org_id`,`starts_at`,`ends_at`) WHERE "incidents"."status" = 'scheduled';--> statement-breakpoint
CREATE INDEX `incidents_org_starts` ON `incidents` (`org_id`,`starts_at`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_org_status_starts` ON `incidents` (`org_id`,`status`,`starts_at`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_org_account_starts` ON `incidents` (`org_id`,`account_id`,`starts_at`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_org_phone_starts` ON `incidents` (`org_id`,`phone`,`starts_at`,`id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `mobile_e164` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `business_e164` text;--> statement-breakpoint
CREATE INDEX `accounts_org_mobile` ON `accounts` (`org_id`,`mobile_e164`);--> statement-breakpoint
CREATE INDEX `accounts_org_business` ON `accounts` (`org_id`,`business_e164`);--> statement-breakpoint
ALTER TABLE `contacts` ADD `mobile_e164` text;--> statement-breakpoint
ALTER TABLE `contacts` ADD `business_e164` text;--> statement-breakpoint
CREATE INDEX `contacts_org_mobile_created` ON `contacts` (`org_id`,`mobile_e164`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_org_business_created` ON `contacts` (`org_id`,`business_e164`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `leads` ADD `mobile_e164` text;--> statement-breakpoint
ALTER TABLE `leads` ADD `business_e164` text;--> statement-breakpoint
CREATE INDEX `leads_org_mobile` ON `leads` (`org_id`,`mobile_e164`);--> statement-breakpoint
CREATE INDEX `leads_org_business` ON `leads` (`org_id`,`business_e164`);--> statement-breakpoint
-- Incidents booked before this migration: scheduled (the column default), last changed when created.
UPDATE `incidents` SET `updated_at` = `created_at`;
