/**
 * A value built on first use and kept for the isolate's life. Schemas are
 * declared this way so that a cold isolate builds only what its first request
 * needs (zod builds a schema at a cost; startup builds none).
 */
export function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}
