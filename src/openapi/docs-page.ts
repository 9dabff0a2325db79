// A readable reference page rendered from the OpenAPI document ahead of time
// (`npm run openapi`): no scripts, no CDN, nothing to load but this HTML.
import { html, raw } from "hono/html";

type Json = Record<string, unknown>;

const json = (value: unknown) => JSON.stringify(value, null, 2);
const anchor = (ref: string) => ref.replace("#/components/schemas/", "schema-");

/** Pretty JSON with $ref strings turned into links to their schema. */
function schemaBlock(value: unknown) {
  const escaped = json(value).replace(/[&<>]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[ch] as string);
  return raw(
    escaped.replace(
      /"(#\/components\/schemas\/([A-Za-z]+))"/g,
      (_m, ref: string, name: string) => `"<a href="#${anchor(ref)}">${name}</a>"`,
    ),
  );
}

export function renderDocsPage(doc: Json) {
  const info = doc.info as Json;
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const schemas = ((doc.components as Json).schemas ?? {}) as Record<string, unknown>;
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${info.title} — reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h2{margin-top:2.5rem;border-bottom:1px solid #ddd}code,pre{font:13px/1.4 ui-monospace,monospace}
pre{background:#f6f8fa;padding:.75rem;overflow:auto;border-radius:6px}.m{font-weight:700;text-transform:uppercase;margin-right:.5rem}
details{margin:.25rem 0}summary{cursor:pointer}nav a{display:block}
</style></head><body>
<h1>${info.title} <small>v${info.version}</small></h1>
<p>${info.description}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json"><code>/api/v1/openapi.json</code></a> (OpenAPI 3.1).</p>
<nav>${operations.map(({ path, method, op }) => html`<a href="#${op.operationId}"><span class="m">${method}</span><code>${path}</code> — ${op.summary}</a>`)}</nav>
${operations.map(
  ({ path, method, op }) => html`<h2 id="${op.operationId}"><span class="m">${method}</span><code>${path}</code></h2>
<p><strong>${op.summary}.</strong> ${op.description}</p>
${op.parameters ? html`<details open><summary>Parameters</summary><pre>${schemaBlock(op.parameters)}</pre></details>` : ""}
${op.requestBody ? html`<details open><summary>Request body</summary><pre>${schemaBlock(op.requestBody)}</pre></details>` : ""}
<details><summary>Responses</summary><pre>${schemaBlock(op.responses)}</pre></details>`,
)}
<h2>Schemas</h2>
${Object.entries(schemas).map(([name, schema]) => html`<h3 id="schema-${name}">${name}</h3><pre>${schemaBlock(schema)}</pre>`)}
</body></html>`;
}
