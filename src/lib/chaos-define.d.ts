/** Build constant: true only in builds that carry the chaos fault hook (src/lib/chaos.ts). */
declare const __CHAOS__: boolean;
