// `npm run client:generate`: writes the OpenAPI document the service serves (without its `servers`,
// which name the address it is reached at) to clients/typescript/openapi.json, and the TypeScript
// types of it (openapi-typescript) to clients/typescript/schema.d.ts. `npm test` checks both are
// current: test/client/document.test.ts (served document = openapi.json) and
// test/client/types.node.test.ts (schema.d.ts = openapi-typescript of openapi.json).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { app } from "../src/app";
import { openApiDocument } from "../src/http/openapi/document";
import { clientTypes } from "../clients/typescript/generate";

const dir = path.resolve(import.meta.dirname, "../clients/typescript");
const doc = openApiDocument(app);
writeFileSync(path.join(dir, "openapi.json"), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(path.join(dir, "schema.d.ts"), await clientTypes(doc));
console.log(`clients/typescript: openapi.json and schema.d.ts written (${Object.keys((doc as { paths: object }).paths).length} paths)`);
