/**
 * The ids the reference's examples use, one per resource, so that the examples of different
 * operations tell one story: COMERCIAL LOS ANDES SPA (76086428-5) issues a factura to DISTRIBUIDORA
 * EL SIMULADOR S.A. (96790240-3) and receives one from it.
 */
export const EX = {
  client: "cli_01M8EK5MY0B4FXKPABA0GA71YY",
  apiKey: "key_01M8EK5NX81NAD5MW1SKNQX0KJ",
  company: "cmp_01M8EK5PWGVFHCB1C09F86QWZK",
  settings: "set_01M8EK5QVRCQAN9SRNSY0Q461X",
  certificate: "cer_01M8EK5RV07ENN8T6HG7SPZM3S",
  caf: "caf_01M8EK5ST84XGSRFAA2SNTZP82",
  invoice: "inv_p1_01M8EK5VRRGAVGZ9NTX1FQ1T8V",
  creditNote: "inv_p1_01M8EK6ADGHGYGG5DJH69NFV1J",
  envelope: "env_p1_01M8EK5WR0P9TRPAVM7QEH3GA1",
  user: "usr_01M8EK5XQ8VHEC0RMV1MM18PGA",
  userKey: "key_01M8EK5YPG7AF6QWR2BP3KXGS7",
  webhook: "whk_01M8EK5ZNRNANHNFCFYJW0NP6B",
  delivery: "dlv_p1_01M8EK60N0F5ZC39C3BGDQZ1ZJ",
  event: "evt_3f9c2b7d1e4a4c6b8a0d5e2f7c1b9a64",
  received: "rcv_p1_01M8EK64J047VZT0S42S5NCPTR",
  message: "inm_p1_01M8EK65H87FX5JTXAPWP7005N",
  replyMessage: "inm_p1_01M8EK66GG48P2NXAGYR5MGPPK",
  reply: "rpl_a1fdc138d5e846ae4bb5290380",
  deadLetter: "dlq_01M8EK68F0SG9HRZQCHN7YZA1X",
  logo: "lgo_01M8EK69E8EZ4J5FP4E8696P99",
  issuerRut: "76086428-5",
  buyerRut: "96790240-3",
  holderRut: "12345678-5",
  cession: "ces_p1_01M8EK6BCRWK0QXSD4VE1J2Y7P",
  factorRut: "76543210-3",
} as const;

/** A page of one or more examples, as every list answers. */
export function examplePage<T>(data: T[], total = data.length) {
  return { data, current_page: 1, per_page: 20, total, last_page: Math.max(1, Math.ceil(total / 20)) };
}
