#!/usr/bin/env node
// `npm run docs:check [-- --url http://127.0.0.1:8787]`: opens /docs in headless Chromium and checks
// that the API reference renders, lists every tag of /openapi.json, shows no console error and asks
// for nothing outside this service. Without --url it starts `npm start` on a free port itself.
// Needs a Chromium (`apt-get install -y chromium`, or CHROMIUM=/path); `npm test` never needs one.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import puppeteer from "puppeteer-core";

const { values } = parseArgs({ options: { url: { type: "string" } } });
const chromium = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find(existsSync);
if (!chromium) {
  console.error("docs:check: no Chromium found; install one (apt-get install -y chromium) or set CHROMIUM=/path/to/chrome");
  process.exit(2);
}

async function waitFor(url, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${ms / 1000} s`);
}

let server;
let base = values.url;
if (!base) {
  const port = String(20000 + Math.floor(Math.random() * 20000));
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ["scripts/start.mjs"], { env: { ...process.env, PORT: port, LOG_LEVEL: "error" }, stdio: "ignore", detached: true });
  await waitFor(`${base}/health`, 120_000);
}

const failures = [];
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox"] });
try {
  const page = await browser.newPage();
  const origin = new URL(base).origin;
  page.on("console", (m) => m.type() === "error" && failures.push(`console error: ${m.text()}`));
  page.on("pageerror", (e) => failures.push(`page error: ${e.message}`));
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    const url = req.url();
    if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return req.continue();
    failures.push(`asked for something outside this service: ${url}`);
    req.abort();
  });
  const spec = await (await fetch(`${base}/openapi.json`)).json();
  await page.goto(`${base}/docs`, { waitUntil: "networkidle0", timeout: 60_000 });
  const shown = await page
    .waitForFunction((title) => document.body.innerText.includes(title), { timeout: 30_000 }, spec.info.title)
    .then(() => true, () => false);
  // textContent: what the page holds, whatever CSS does to its case or visibility (collapsed groups).
  const text = await page.evaluate(() => document.body.textContent ?? "");
  if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT });
  if (!shown) failures.push(`the page never showed "${spec.info.title}"; it shows: ${text.slice(0, 300) || "(nothing)"}`);
  const tags = spec.tags.map((t) => t.name);
  const missing = tags.filter((t) => !text.includes(t));
  if (missing.length) failures.push(`tags not shown: ${missing.join(", ")}`);
  console.log(`docs:check ${base}/docs: title shown, ${tags.length - missing.length}/${tags.length} tags listed`);
} finally {
  await browser.close();
  if (server) process.kill(-server.pid, "SIGTERM");
}
if (failures.length) {
  for (const f of failures) console.error(`docs:check: ${f}`);
  process.exit(1);
}
console.log("docs:check: OK (renders, every tag listed, no console errors, nothing fetched from elsewhere)");
