import { defineConfig } from "prisma/config";

// Prisma 7 takes the URL from here, not from schema.prisma. `generate` never connects, so a
// placeholder keeps it working without a database.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/unused" },
});
