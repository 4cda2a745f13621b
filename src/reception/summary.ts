/** What the API shows of a received DTE's content (names, amounts, lines): read from the verified element at intake. */
export type { DteContent as Summary } from "../countries/cl";
