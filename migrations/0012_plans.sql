CREATE TABLE `plan_visits` (
	`plan_id` text NOT NULL,
	`k` integer NOT NULL,
	`org_id` text NOT NULL,
	`due_date` text NOT NULL,
	`incident_id` text,
	`decided_at` integer NOT NULL,
	PRIMARY KEY(`plan_id`, `k`),
	FOREIGN KEY (`plan_id`) REFERENCES `plans`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `plans` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`every_count` integer NOT NULL,
	`every_unit` text NOT NULL,
	`visits` integer,
	`service_id` text,
	`postal_code` text,
	`client_name` text NOT NULL,
	`insect_name` text NOT NULL,
	`phone` text,
	`account_id` text,
	`notes` text,
	`technician_id` text,
	`local_time` text NOT NULL,
	`first_visit_date` text NOT NULL,
	`visits_made` integer NOT NULL,
	`next_due_date` text,
	`decide_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`cancelled_at` integer,
	`cancel_reason` text,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`technician_id`) REFERENCES `technicians`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `plans_org_created` ON `plans` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `plans_org_status_created` ON `plans` (`org_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `plans_org_phone_created` ON `plans` (`org_id`,`phone`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `plans_org_account_created` ON `plans` (`org_id`,`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `plans_active_decide` ON `plans` (`decide_at`) WHERE "plans"."status" = 'active';--> statement-breakpoint
DROP INDEX `incidents_scheduled_org_starts_occupied`;--> statement-breakpoint
ALTER TABLE `incidents` ADD `closed_at` integer;--> statement-breakpoint
ALTER TABLE `incidents` ADD `outcome_note` text;--> statement-breakpoint
ALTER TABLE `incidents` ADD `plan_id` text;--> statement-breakpoint
CREATE INDEX `incidents_occupying_org_starts_occupied` ON `incidents` (`org_id`,`starts_at`,`occupied_until`,`technician_id`,`status`) WHERE "incidents"."status" IN ('scheduled', 'completed', 'no_show');--> statement-breakpoint
CREATE INDEX `incidents_org_plan_starts` ON `incidents` (`org_id`,`plan_id`,`starts_at`);