/** Outgoing mail through the SEND_EMAIL binding (Cloudflare Email Service; `wrangler dev` records what is sent). */

export interface MailFile {
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

const base64Lines = (b: Uint8Array) => {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s).replace(/.{76}/g, "$&\r\n");
};

/**
 * The header that names what a message is about (`reference`): a mail service may replace the
 * Message-ID (Cloudflare's does), but a bounce that quotes the original headers keeps this one.
 */
export const REFERENCE_HEADER = "X-DTE-Reference";

/** A multipart/mixed message of `files` (names, subject and reference are ours: ASCII, no line breaks). */
export function mimeMessage(m: { from: string; to: string; subject: string; messageId: string; reference?: string; text: string; files: MailFile[] }): string {
  const boundary = `b${m.messageId.replace(/[^A-Za-z0-9]/g, "")}`;
  const parts = [
    `--${boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${m.text}\r\n`,
    ...m.files.map((f) => `--${boundary}\r\nContent-Type: ${f.contentType}; name="${f.name}"\r\nContent-Disposition: attachment; filename="${f.name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(f.bytes)}\r\n`),
  ];
  return [`From: ${m.from}`, `To: ${m.to}`, `Subject: ${m.subject}`, `Message-ID: <${m.messageId}>`, ...(m.reference ? [`${REFERENCE_HEADER}: ${m.reference}`] : []), "MIME-Version: 1.0", `Content-Type: multipart/mixed; boundary="${boundary}"`, "", ...parts, `--${boundary}--`, ""].join("\r\n");
}

type EmailMessageClass = typeof import("cloudflare:email").EmailMessage;
let emailMessage: EmailMessageClass | undefined;

/** The runtime's EmailMessage, imported once: dynamically, since Node scripts that load the app (the OpenAPI generator) have no cloudflare:email. */
export async function emailMessageClass(): Promise<EmailMessageClass> {
  return (emailMessage ??= (await import("cloudflare:email")).EmailMessage);
}

/** What the mail service answered: the id it gave the message (what its Email Sending events name), when it said one. */
export interface SentMail {
  messageId: string | null;
}

/** Sends `raw` from `from` to `to`; null when no binding is configured (nothing sent). */
export async function sendMail(env: Pick<Env, "SEND_EMAIL">, from: string, to: string, raw: string): Promise<SentMail | null> {
  const binding = env.SEND_EMAIL as SendEmail | undefined;
  if (!binding) return null;
  const EmailMessage = await emailMessageClass();
  const answer: unknown = await binding.send(new EmailMessage(from, to, raw));
  const id = answer && typeof answer === "object" ? (answer as { messageId?: unknown }).messageId : undefined;
  return { messageId: typeof id === "string" && id.length > 0 && id.length <= 300 ? id : null };
}
