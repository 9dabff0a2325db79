// What `ajv` and `ajv-formats` resolve to in the deployed bundle (wrangler.toml
// [alias]). The MCP SDK's Server imports its ajv validator at load, but uses it
// only to check elicitation answers, which this server never asks for; routes
// validate tool arguments themselves. Leaving ajv out saves 138 KB minified and
// its module initialisation at startup. Tests and Node use the real packages.
export default class AjvLeftOut {
  constructor() {
    throw new Error("ajv is not bundled: pass the MCP Server a jsonSchemaValidator");
  }
}
