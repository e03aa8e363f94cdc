// Module hooks for the lazy-loading probe: posts the URL of every ES module resolved after
// registration (Prisma loads its query compiler by dynamic import, which require.cache never sees).
let port;

export function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}
