/**
 * examples/webhook-receiver.ts against real deliveries: an endpoint registered with the Worker gets
 * a test event through the webhook queue; the example accepts it once, knows its retry for a
 * duplicate, and refuses it altered, under another secret, or stale.
 */
import { describe, expect, it } from "vitest";
import { receive } from "../../examples/webhook-receiver";
import { call, newCompany, newOwner } from "../helpers/api";
import { register, receiverUrl, until } from "../webhooks/helpers";

describe("examples/webhook-receiver.ts", () => {
  it("accepts a delivery once, recognises its retry, and refuses it altered, re-signed or stale", async () => {
    const owner = await newOwner("Receiver example");
    const companyId = await newCompany(owner);
    const hook = receiverUrl("example-receiver");
    const endpoint = await register(owner, companyId, { url: hook.url, events: ["webhook.test"] });
    expect((await call("POST", `/api/companies/${companyId}/webhooks/${endpoint.id}/test`, { key: owner.key })).status).toBe(202);
    const [delivery] = await until(hook.path, (r) => r.length >= 1);
    const seen = new Set<string>();

    const first = receive(endpoint.secret, delivery!, seen);
    expect(first).toMatchObject({ status: 200, duplicate: false, event: { type: "webhook.test" } });
    expect(receive(endpoint.secret, delivery!, seen)).toMatchObject({ status: 200, duplicate: true });

    const altered = { ...delivery!, body: delivery!.body.replace("webhook.test", "invoice.accepted") };
    expect(receive(endpoint.secret, altered, new Set())).toMatchObject({ status: 401 });
    const otherSecret = `whsec_${btoa("another endpoint's secret, 32 b!")}`;
    expect(receive(otherSecret, delivery!, new Set())).toMatchObject({ status: 401 });
    const stale = { ...delivery!, headers: { ...delivery!.headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000) - 3600) } };
    expect(receive(endpoint.secret, stale, new Set())).toMatchObject({ status: 401 });
  });
});
