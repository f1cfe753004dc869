import { defineConfig } from "vite";

// Relative asset URLs, so dist-web/ can be served from any path of a static host.
export default defineConfig({
  base: "./",
  build: { target: "es2022" },
});
