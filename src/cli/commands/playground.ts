/**
 * `polgrad playground [BATCH]` (docs/playground.md#from-the-command-line): serve the playground
 * page shipped in the package (dist/web, built by Vite with the package) on 127.0.0.1, with BATCH
 * beside it at `./batch` for the page to load, and open it in the default browser. Nothing leaves
 * the machine: the server answers only the loopback address, only the page's own files and the
 * batch, with the page's Content-Security-Policy. Ctrl-C (or SIGTERM) stops it, exit 0.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { safeText } from "../../core/message.js";
import { fail, IoError, UsageError } from "../../errors.js";
import { fsPath } from "../../platform/fsPath.js";
import type { Command } from "../command.js";
import { intOption } from "../output.js";

/**
 * Where the built page is: dist/web beside dist/cli in the package; from the sources (the tests),
 * the built dist/web of the repository.
 */
const WEB =
  [new URL("../../web/", import.meta.url), new URL("../../../dist/web/", import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((d) => existsSync(fsPath(join(d, "index.html")))) ??
  fileURLToPath(new URL("../../web/", import.meta.url));

/** The page's own policy, also sent as a header. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'";

const MIME: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/** Largest batch served (the safetensors reader's own limit). */
const MAX_BATCH_BYTES = 4 * 2 ** 30;

/** The `playground` command. */
export const playgroundCommand: Command = {
  name: "playground",
  summary:
    "Serve the playground page from the installed package on 127.0.0.1 (no network) and open it, with your batch loaded.",
  usage: "playground [BATCH] [--port N] [--no-open]",
  positionals: 1,
  positionalRoles: ["input"],
  options: {
    port: {
      type: "string",
      argument: "N",
      description: "the port to serve on (0: any free one)",
      default: "0",
    },
    "no-open": {
      type: "boolean",
      description: "print the address without opening a browser",
    },
  },
  async run(values, positionals, io) {
    const fn = "polgrad playground";
    const port = intOption(values, "port", "playground", 0) ?? 0;
    if (port > 65535)
      throw fail(UsageError, fn, "--port", "a port number from 0 to 65535", String(port));
    let index: Buffer;
    try {
      index = readFileSync(fsPath(join(WEB, "index.html")));
    } catch {
      throw new IoError(
        fn,
        "web",
        `${fn}: the package must hold its built page (dist/web/index.html); got none at ${safeText(WEB)} (npm run build builds it)`,
      );
    }
    const path = positionals[0];
    let batch: { bytes: Buffer; name: string } | null = null;
    if (path !== undefined) {
      // The batch is read and checked here, so that a bad file is an error on the command line.
      const { readBatch } = await import("../../io/readBatch.js");
      readBatch(path);
      const { readFileBytes } = await import("../../io/_internal/files.js");
      batch = {
        bytes: Buffer.from(readFileBytes(fn, path, MAX_BATCH_BYTES)),
        name: basename(path),
      };
    }
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const headers = { "content-security-policy": CSP, "cache-control": "no-store" };
      if (req.method !== "GET") {
        res.writeHead(405, headers).end();
        return;
      }
      if (url.pathname === "/batch") {
        if (batch === null) res.writeHead(404, headers).end();
        else
          res
            .writeHead(200, {
              ...headers,
              "content-type": "application/octet-stream",
              "x-polgrad-batch-name": encodeURIComponent(batch.name),
            })
            .end(batch.bytes);
        return;
      }
      let file: string;
      try {
        file = normalize(join(WEB, decodeURIComponent(url.pathname)));
      } catch {
        res.writeHead(400, headers).end();
        return;
      }
      if (url.pathname === "/") file = join(WEB, "index.html");
      if (!file.startsWith(WEB.endsWith(sep) ? WEB : `${WEB}${sep}`)) {
        res.writeHead(404, headers).end();
        return;
      }
      try {
        const body = file === join(WEB, "index.html") ? index : readFileSync(fsPath(file));
        res
          .writeHead(200, {
            ...headers,
            "content-type": MIME[extname(file)] ?? "application/octet-stream",
          })
          .end(body);
      } catch {
        res.writeHead(404, headers).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e) =>
        reject(
          new IoError(
            fn,
            "--port",
            `${fn}: --port must be free on 127.0.0.1; got ${port} (${safeText(String((e as Error).message))})`,
          ),
        ),
      );
      server.listen(port, "127.0.0.1", () => resolve());
    });
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    io.stdout(
      `polgrad playground: serving ${batch === null ? "the built-in batch" : safeText(batch.name)} at ${address} (Ctrl-C stops)\n`,
    );
    if (values["no-open"] !== true) openBrowser(address, (t) => (io.notice ?? io.stderr)(t));
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        server.close(() => resolve());
        server.closeAllConnections();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    return 0;
  },
};

/** Open `url` in the default browser (xdg-open, open, start); a failure is a notice, not an error. */
function openBrowser(url: string, notice: (text: string) => void): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () =>
      notice(`polgrad playground: could not open a browser (${cmd}); open ${url} yourself\n`),
    );
    child.unref();
  } catch {
    notice(`polgrad playground: could not open a browser (${cmd}); open ${url} yourself\n`);
  }
}
