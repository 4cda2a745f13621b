import type { TaxpayerRow } from "./csv";

/**
 * The simulated SII's own small directory of authorised taxpayers (fictitious companies, the RUTs
 * the README and tests use). Served by the taxpayer lookup in simulator mode when the imported
 * directory does not hold the RUT.
 */
export const SIMULATOR_TAXPAYERS: readonly TaxpayerRow[] = [
  { rut: "76086428-5", legalName: "COMERCIAL LOS ANDES SPA", resolutionNumber: 0, resolutionDate: "2020-01-01", exchangeEmail: "dte@losandes.example", url: null },
  { rut: "96790240-3", legalName: "DISTRIBUIDORA EL SIMULADOR S.A.", resolutionNumber: 80, resolutionDate: "2014-08-22", exchangeEmail: "intercambio@simulador.example", url: null },
  { rut: "11111111-1", legalName: "CONTRIBUYENTE DE PRUEBA", resolutionNumber: 0, resolutionDate: "2021-06-15", exchangeEmail: "prueba@contribuyente.example", url: null },
];
