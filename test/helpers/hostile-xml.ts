/**
 * Hostile XML shapes, each grown to a given length inside a signed EnvioDTE of one DTE: the payload
 * goes into the SetDTE, as attributes of its start tag or as content before its first DTE, so that
 * what the parser lets through reaches the verification (the envelope's signature covers the SetDTE). Used by test/engine/hostile-xml.test.ts
 * and bench/hostile/hostile.bench.test.ts.
 */

export interface Shape {
  name: string;
  /** What it is, for the bench's table. */
  label: string;
  /** `envelope` (a signed EnvioDTE) with this shape's payload, `length` characters in all. */
  build(envelope: string, length: number): string;
}

const SET_DTE = "<SetDTE";

/** `envelope` with `attributes` written into the SetDTE's start tag. */
function onSetDte(envelope: string, attributes: string): string {
  const at = envelope.indexOf(SET_DTE) + SET_DTE.length;
  return envelope.slice(0, at) + attributes + envelope.slice(at);
}

/** `envelope` with `content` right after the SetDTE's start tag. */
function inSetDte(envelope: string, content: string): string {
  const at = envelope.indexOf(">", envelope.indexOf(SET_DTE)) + 1;
  return envelope.slice(0, at) + content + envelope.slice(at);
}

/** Spaces that bring `s` to `room` characters (whitespace where the shape allows it). */
const padded = (s: string, room: number) => s + " ".repeat(Math.max(0, room - s.length));

/** `unit(i)` repeated while it fits in `room` characters. */
function repeated(room: number, unit: (i: number) => string): string {
  const parts: string[] = [];
  let used = 0;
  for (let i = 0; ; i++) {
    const u = unit(i);
    if (used + u.length > room) break;
    parts.push(u);
    used += u.length;
  }
  return parts.join("");
}

/** Content of `room` characters between `open` and `close`, the middle `unit` repeated. */
const wrapped = (room: number, open: string, unit: string, close: string) =>
  padded(open + unit.repeat(Math.max(0, Math.floor((room - open.length - close.length) / unit.length))) + close, room);

const attributeShape = (name: string, label: string, attribute: (i: number) => string): Shape => ({
  name,
  label,
  build: (envelope, length) => {
    const room = length - envelope.length;
    return onSetDte(envelope, padded(repeated(room, attribute), room));
  },
});

const contentShape = (name: string, label: string, content: (room: number) => string): Shape => ({
  name,
  label,
  build: (envelope, length) => {
    const room = length - envelope.length;
    return inSetDte(envelope, padded(content(room), room));
  },
});

/** `n` namespace declarations. */
const namespaces = (n: number) => Array.from({ length: n }, (_, i) => ` xmlns:p${i}="urn:p${i}"`).join("");

export const HOSTILE_SHAPES: Shape[] = [
  attributeShape("attributes", "attributes on one element (130k at 1 MB, 1.3M at 10 MB)", (i) => ` a${i.toString(36)}=""`),
  contentShape("nesting", "elements nested as deep as the file allows", (room) => {
    const k = Math.floor(room / 7);
    return "<a>".repeat(k) + "</a>".repeat(k);
  }),
  {
    name: "attribute-value",
    label: "one attribute value as long as the file",
    build: (envelope, length) => onSetDte(envelope, ` a="${"x".repeat(Math.max(0, length - envelope.length - 5))}"`),
  },
  contentShape("character-references", "character references &#65; (200k at 1 MB, 2M at 10 MB)", (room) => wrapped(room, "", "&#65;", "")),
  contentShape("long-name", "an element name as long as the file", (room) => `<${"E".repeat(Math.max(1, room - 3))}/>`),
  attributeShape("namespaces", "namespace declarations on one element", (i) => ` xmlns:p${i.toString(36)}="u"`),
  contentShape("namespaces-spread", "250 namespace declarations on each of many elements", (room) => repeated(room, () => `<n${namespaces(250)}/>`)),
  // As many declarations in scope as the bounds accept (XML_LIMITS.namespacesInScope is 64, the
  // envelope's root declares two), and below them many elements that declare one more: C14N copies
  // the scope at each.
  contentShape("namespaces-in-scope", "61 namespaces in scope over many elements declaring one more", (room) => wrapped(room, `<n${namespaces(61)}>`, '<a xmlns:q="u"/>', "</n>")),
  contentShape("comment", "one comment as long as the file", (room) => wrapped(room, "<!--", "x", "-->")),
  contentShape("pi", "one processing instruction as long as the file", (room) => wrapped(room, "<?pi ", "x", "?>")),
  contentShape("tiny-elements", "tiny elements <a/>", (room) => wrapped(room, "", "<a/>", "")),
  contentShape("tiny-nodes", "tiny elements with a text <a>x</a>", (room) => wrapped(room, "", "<a>x</a>", "")),
  contentShape("comments", "empty comments <!---->", (room) => wrapped(room, "", "<!---->", "")),
  contentShape("empty-dtes", "empty DTEs <DTE version=\"1.0\"></DTE>", (room) => wrapped(room, "", '<DTE version="1.0"></DTE>', "")),
];
