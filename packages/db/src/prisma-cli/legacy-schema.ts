/**
 * Turns our Prisma 7 schema into one the Prisma 6.19 CLI accepts: 6.19 requires a datasource
 * `url` (7 forbids it) and only knows the `prisma-client-js` generator. Models are untouched,
 * so the SQL it derives is the SQL Prisma 7 would derive.
 */
export function toLegacySchema(schema: string): string {
  const generators = /^generator\s+\w+\s*\{[^}]*\}/gm;
  const datasource = /^(datasource\s+\w+\s*\{)([^}]*)\}/m;
  if (!datasource.test(schema)) throw new Error("schema.prisma has no datasource block");
  return schema
    .replace(generators, 'generator client {\n  provider = "prisma-client-js"\n}')
    .replace(datasource, (_match, head: string, body: string) => {
      const withoutUrl = body.replace(/^\s*url\s*=.*$/m, "");
      return `${head}${withoutUrl.trimEnd()}\n  url = env("DATABASE_URL")\n}`;
    });
}
