/** Vite `?raw` imports (text fixtures such as base64 test files). */
declare module "*?raw" {
  const text: string;
  export default text;
}
