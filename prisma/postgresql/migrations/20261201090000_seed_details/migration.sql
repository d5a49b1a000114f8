-- AlterTable
ALTER TABLE "plans" ADD COLUMN     "files_created" INTEGER,
ADD COLUMN     "files_modified" INTEGER,
ADD COLUMN     "files_deleted" INTEGER,
ADD COLUMN     "files_moved" INTEGER;

-- AlterTable
ALTER TABLE "decisions" ADD COLUMN     "model_name" TEXT,
ADD COLUMN     "prompt_tokens" INTEGER,
ADD COLUMN     "completion_tokens" INTEGER;

-- AlterTable
ALTER TABLE "invariants" ADD COLUMN     "description" TEXT;
