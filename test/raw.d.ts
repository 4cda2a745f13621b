// Vite `?raw` imports (text fixtures) in tests.
declare module "*?raw" {
  const content: string;
  export default content;
}
