-- AlterTable
ALTER TABLE "automation_profiles" ADD COLUMN "max_subplan_depth" INTEGER NOT NULL DEFAULT 3;
