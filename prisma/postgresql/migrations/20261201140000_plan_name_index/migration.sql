-- CreateIndex
CREATE INDEX "plans_name_idx" ON "plans"("name");
