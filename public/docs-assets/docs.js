// The reference of this service: its own /openapi.json, "try it" against this same address (no
// proxy), no fonts, telemetry or assistant from elsewhere, so the page works offline.
Scalar.createApiReference("#app", {
  url: "/openapi.json",
  proxyUrl: undefined,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  hideClientButton: false,
  documentDownloadType: "json",
  persistAuth: false,
  authentication: { preferredSecurityScheme: "ApiKey" },
});
