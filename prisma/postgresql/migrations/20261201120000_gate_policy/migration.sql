-- AlterTable
ALTER TABLE "automation_profiles" ADD COLUMN "on_timeout" TEXT NOT NULL DEFAULT 'cancel';
ALTER TABLE "automation_profiles" ADD COLUMN "approvers" JSONB;
ALTER TABLE "automation_profiles" ADD COLUMN "required_approvals" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "plans" ADD COLUMN "gate_status" TEXT;
ALTER TABLE "plans" ADD COLUMN "paused" TEXT;
