/** Build constant: true only in builds that carry the chaos fault hook (src/chaos/hook.ts). */
declare const __CHAOS__: boolean;
