// Copies the OpenAPI renderer (Scalar's standalone bundle) from node_modules into public/docs-assets/,
// where the Worker serves it as a static asset for /docs. Run by `npm install` (postinstall), `npm start`
// and `npm run build`; the copy is not committed (public/docs-assets/scalar.standalone.js is in .gitignore).
import { copyFileSync, mkdirSync } from "node:fs";
import { readFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const pkgDir = path.join(root, "node_modules", "@scalar", "api-reference");
// The package's `browser` field names its standalone bundle (the package exports no package.json subpath).
const { browser } = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8"));
const source = path.join(pkgDir, browser);
const target = path.join(root, "public", "docs-assets", "scalar.standalone.js");
mkdirSync(path.dirname(target), { recursive: true });
copyFileSync(source, target);
