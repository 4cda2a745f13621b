import { describe, expect, it } from "vitest";
import { parse } from "smol-toml";
import { REQUIRED_SECRETS } from "../../src/config";
import readme from "../../README.md?raw";
import wranglerToml from "../../wrangler.toml?raw";

type Toml = Record<string, any>;
const config = parse(wranglerToml) as Toml;
const production = config.env.production as Toml;
const deploySection = readme.slice(readme.indexOf("## Deploy to Cloudflare"), readme.indexOf("\n## ", readme.indexOf("## Deploy to Cloudflare") + 5));
const configurationSection = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 5));

/** Every binding name a block declares, by kind. */
function bindings(block: Toml): Record<string, string[]> {
  const names = (list: Toml[] | undefined, key: string) => (list ?? []).map((b) => String(b[key])).sort();
  return {
    d1: names(block.d1_databases, "binding"),
    r2: names(block.r2_buckets, "binding"),
    queueProducers: names(block.queues?.producers, "binding"),
    queueConsumers: names(block.queues?.consumers, "queue"),
    durableObjects: names(block.durable_objects?.bindings, "name"),
    sendEmail: names(block.send_email, "name"),
    rateLimits: names(block.ratelimits, "name"),
    vars: Object.keys(block.vars ?? {}).sort(),
    crons: [...(block.triggers?.crons ?? [])].sort(),
  };
}

function queueNames(block: Toml): string[] {
  const q = block.queues ?? {};
  return [...new Set([...(q.producers ?? []).map((p: Toml) => p.queue), ...(q.consumers ?? []).flatMap((c: Toml) => [c.queue, c.dead_letter_queue].filter(Boolean))])].sort() as string[];
}

describe("the production configuration and its README deploy steps", () => {
  it("[env.production] declares every binding, queue, var and cron of the top level (wrangler does not inherit them)", () => {
    expect(bindings(production)).toEqual(bindings(config));
    expect(queueNames(production)).toEqual(queueNames(config));
  });

  it("the README creates every D1 database, R2 bucket and queue of the production block", () => {
    for (const db of production.d1_databases) expect(deploySection).toContain(`wrangler d1 create ${db.database_name}`);
    for (const bucket of production.r2_buckets) expect(deploySection).toContain(`wrangler r2 bucket create ${bucket.bucket_name}`);
    for (const queue of queueNames(production)) expect(deploySection).toMatch(new RegExp(`wrangler queues create ${queue}$`, "m"));
  });

  it("the README sets every required secret, applies migrations and deploys the production environment", () => {
    for (const secret of REQUIRED_SECRETS) {
      expect(deploySection).toContain(`wrangler secret put ${secret} --env production`);
      expect(configurationSection).toContain(`\`${secret}\``);
    }
    for (const name of Object.keys(production.vars)) expect(configurationSection).toContain(`\`${name}\``);
    expect(deploySection).toContain(`wrangler d1 migrations apply ${production.d1_databases[0].binding} --remote --env production`);
    expect(deploySection).toContain("wrangler deploy --env production");
    expect(deploySection).toContain("npm run build");
    if ((production.send_email ?? []).length > 0) expect(deploySection).toMatch(/email routing/i);
    for (const rl of production.ratelimits ?? []) expect(readme).toContain(rl.name);
  });
});
