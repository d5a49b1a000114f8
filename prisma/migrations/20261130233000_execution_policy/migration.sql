-- AlterTable
ALTER TABLE "plans" ADD COLUMN "execution_policy" JSONB;

-- AlterTable
ALTER TABLE "actions" ADD COLUMN "execution" JSONB;

