/**
 * Loads the Worker's composition root (src/index.ts) before each test file, as the runtime does
 * before any request: it wires what lower layers are handed (the in-process simulated SII), so
 * that a test calling a module directly meets the same wiring as the deployed Worker.
 */
import "../../src/index";
