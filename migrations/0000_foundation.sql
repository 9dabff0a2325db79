CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`name_lower` text NOT NULL,
	`account_type` integer,
	`email` text,
	`mobile_phone` text,
	`business_phone` text,
	`building_location` text,
	`street1` text,
	`street2` text,
	`city` text,
	`postal_code` text,
	`state` text,
	`country` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `accounts_org_name` ON `accounts` (`org_id`,`name_lower`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	`last_used_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_org` ON `api_keys` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`first_name` text,
	`last_name` text,
	`email` text,
	`email_lower` text,
	`mobile_phone` text,
	`business_phone` text,
	`account_id` text,
	`building_location` text,
	`street1` text,
	`street2` text,
	`city` text,
	`postal_code` text,
	`state` text,
	`country` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `contacts_org_created` ON `contacts` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_org_account_created` ON `contacts` (`org_id`,`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_org_email_created` ON `contacts` (`org_id`,`email_lower`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_org_updated` ON `contacts` (`org_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `leads` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`first_name` text,
	`last_name` text,
	`title` text,
	`company_name` text,
	`email` text,
	`mobile_phone` text,
	`business_phone` text,
	`lead_source` integer,
	`account_type` integer,
	`rating` integer,
	`estimated_value` real,
	`estimated_close_date` integer,
	`building_location` text,
	`street1` text,
	`street2` text,
	`city` text,
	`postal_code` text,
	`state` text,
	`country` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `leads_org_created` ON `leads` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `orgs` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`time_zone` text DEFAULT 'UTC' NOT NULL,
	`created_at` integer NOT NULL
);
