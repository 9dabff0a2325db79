/**
 * A file of src/assets/ (wrangler.toml [assets]) through the ASSETS binding,
 * asked for by its path alone: no conditional header, so always the whole
 * file. A missing file is a fault of the deployment, not of the request.
 */
export async function readAsset(assets: Fetcher, file: string, base: string): Promise<Response> {
  const response = await assets.fetch(new URL(file, base));
  if (!response.ok) throw new Error(`asset ${file}: ${response.status}`);
  return response;
}
