import { defineConfig } from 'vite';

/**
 * The web console's build: `npm run build:web` (and scripts/setup.sh) writes web/dist, which the
 * API serves at `/`. JSX is compiled for Preact by Vite's own transformer, without a plugin.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The map library is most of the weight: kept in a chunk of its own, loaded only with a map.
    chunkSizeWarningLimit: 700,
  },
});
