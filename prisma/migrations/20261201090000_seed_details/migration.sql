-- AlterTable
ALTER TABLE "plans" ADD COLUMN "files_created" INTEGER;
ALTER TABLE "plans" ADD COLUMN "files_modified" INTEGER;
ALTER TABLE "plans" ADD COLUMN "files_deleted" INTEGER;
ALTER TABLE "plans" ADD COLUMN "files_moved" INTEGER;

-- AlterTable
ALTER TABLE "decisions" ADD COLUMN "model_name" TEXT;
ALTER TABLE "decisions" ADD COLUMN "prompt_tokens" INTEGER;
ALTER TABLE "decisions" ADD COLUMN "completion_tokens" INTEGER;

-- AlterTable
ALTER TABLE "invariants" ADD COLUMN "description" TEXT;
