import { app } from "./app";
import { issuingCountry } from "./countries";
import { withLogContext } from "./lib/log";
import { newId } from "./lib/ids";
import { consumeQueue, onQueue, onScheduled } from "./operations/handlers";
import { handleEmail } from "./reception/email";
import { useSimulatedRegister } from "./reception/test-register";
import { registerReceived } from "./countries/cl/simulator/received-register";

export { FolioAllocator } from "./folios/allocator";
export { DocumentStore } from "./operations/objects/document-store";
export { ControlDirectory } from "./operations/objects/control-directory";

// In simulator mode the SII client's requests are answered by this Worker's own app, in process.
issuingCountry().useInProcessSimulator((req, env, ctx) => app.fetch(req, env, ctx));
// In test mode the documents a company receives and verifies are registered in the simulated SII.
useSimulatedRegister(registerReceived);

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
  queue: onQueue((batch, env, ctx) => consumeQueue(batch, env, ctx)),
  /** Suppliers' mail to dte+<token>@<RECEPTION_DOMAIN> (Cloudflare Email Routing): reception intake. */
  email: (message, env) => withLogContext({ email_id: newId("req") }, () => handleEmail(message, env)),
  scheduled: onScheduled((env) => env),
} satisfies ExportedHandler<Env>;
