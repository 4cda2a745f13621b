/** What the API shows of a received document's content: read from the verified document at intake. */
export type { ReceivedContent as Summary } from "../countries/port";
