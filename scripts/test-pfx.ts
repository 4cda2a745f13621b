// `npm run --silent pfx:test -- [--out firma.pfx] [--password secreto] [--rut 11111111-1]`: writes a
// TEST signing certificate (.pfx, AES-256/PBKDF2) of a fake person whose RUT (valid check digit) is in
// the certificate as Chilean ones carry it. Good for test keys (the SII simulator accepts any
// well-formed certificate); the real SII accepts only certificates of an accredited authority.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isValidRut, normalizeRut } from "../src/countries/cl/documents/rut";
import { makeFakeCertificate, makeFakePfx } from "../test/helpers/fake-certificates";

const { values } = parseArgs({ options: { out: { type: "string", default: "firma.pfx" }, password: { type: "string", default: "secreto" }, rut: { type: "string", default: "11111111-1" } } });
if (!isValidRut(values.rut!)) {
  process.stderr.write(`pfx:test: ${values.rut} is not a RUT with a valid check digit (e.g. 11111111-1)\n`);
  process.exit(2);
}
const cert = await makeFakeCertificate({ rut: normalizeRut(values.rut!), cn: "PERSONA DE PRUEBA", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
writeFileSync(values.out!, makeFakePfx(cert, values.password!, "modern"));
process.stdout.write(`${JSON.stringify({ file: values.out, password: values.password, rut: normalizeRut(values.rut!) })}\n`);
