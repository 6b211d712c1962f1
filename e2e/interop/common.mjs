// Shared by the interop origins (origin-*.mjs): command line, keys, the
// HTTP(S) server, and the checks neither verifier library makes itself
// (a nonce seen before, Content-Digest against the body). The signature
// itself is always checked by the library named on the origin.
import { createHash, createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer as createHTTPServer } from "node:http";
import { createServer as createHTTPSServer } from "node:https";
import { parseArgs } from "node:util";
import { parseDictionary } from "structured-headers";

// version returns "name@version" of an installed package.
export function version(pkg) {
  const file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return `${pkg}@${JSON.parse(readFileSync(file, "utf8")).version}`;
}

// options parses the command line every origin takes:
//   --port N            loopback port to listen on (0: any; the port is printed)
//   --key FILE          a PEM public key (SPKI, Ed25519) the origin trusts; repeatable
//   --tls-cert/--tls-key PEM files: serve HTTPS instead of HTTP
//   --ignore-keyid      verify with the first key whatever keyid names
//   --raw               (web-bot-auth only) no RFC 9421 section 2.1.2 adapter
export function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string", default: "0" },
      key: { type: "string", multiple: true, default: [] },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "ignore-keyid": { type: "boolean", default: false },
      raw: { type: "boolean", default: false },
    },
  });
  if (values.key.length === 0) throw new Error("--key PEM is required");
  return values;
}

// loadKeys reads the PEM public keys: [{keyid, jwk, keyObject}], keyid the
// RFC 7638 SHA-256 thumbprint (RFC 8037 A.3) computed here.
export function loadKeys(files) {
  return files.map((f) => {
    const keyObject = createPublicKey(readFileSync(f));
    const jwk = keyObject.export({ format: "jwk" });
    if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519") throw new Error(`${f}: not an Ed25519 key`);
    const canonical = `{"crv":"Ed25519","kty":"OKP","x":"${jwk.x}"}`;
    const keyid = createHash("sha256").update(canonical).digest("base64url");
    return { keyid, jwk, keyObject };
  });
}

// NonceStore remembers the nonces of accepted signatures.
export class NonceStore {
  #seen = new Set();
  // check throws when nonce is missing or was seen, else remembers it.
  check(nonce) {
    if (typeof nonce !== "string" || nonce === "") throw new Error("signature has no nonce");
    if (this.#seen.has(nonce)) throw new Error(`nonce replayed: ${nonce}`);
    this.#seen.add(nonce);
  }
}

// checkContentDigest compares a Content-Digest header (RFC 9530) with the
// body: "absent", "sha-256 ok", or throws.
export function checkContentDigest(headers, body) {
  const h = headers["content-digest"];
  if (h === undefined) {
    if (body.length > 0) throw new Error("body without Content-Digest");
    return "absent";
  }
  const sha = parseDictionary(h).get("sha-256");
  if (!sha) throw new Error(`Content-Digest has no sha-256: ${h}`);
  const want = createHash("sha256").update(body).digest();
  if (!Buffer.from(sha[0]).equals(want)) throw new Error("Content-Digest does not match the body");
  return "sha-256 ok";
}

const ROBOTS = "User-agent: *\nAllow: /\n";

// serve starts the origin. verify(message, body) returns what was
// verified (an object) or throws; message is {method, url, headers} with
// the absolute URL the client asked for.
export function serve(opts, name, verify) {
  const tls = opts["tls-cert"] !== undefined;
  const handler = async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const url = `${tls ? "https" : "http"}://${req.headers.host}${req.url}`;
    const reply = (status, obj) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ verifier: name, ...obj }) + "\n");
    };
    // The proxy fetches robots.txt itself (unsigned): allow all, unchecked.
    if (req.method === "GET" && req.url === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(ROBOTS);
      return;
    }
    const seen = {
      method: req.method, url,
      signature: req.headers["signature"], "signature-input": req.headers["signature-input"],
      "signature-agent": req.headers["signature-agent"], "content-digest": req.headers["content-digest"],
    };
    try {
      if (req.headers["signature-input"] === undefined) throw new Error("request is not signed");
      const verified = await verify({ method: req.method, url, headers: req.headers }, body);
      reply(200, { ok: true, ...verified, content_digest: checkContentDigest(req.headers, body), seen });
    } catch (e) {
      reply(401, { ok: false, error: String(e?.message ?? e), seen });
    }
  };
  const server = tls
    ? createHTTPSServer({ cert: readFileSync(opts["tls-cert"]), key: readFileSync(opts["tls-key"]) }, handler)
    : createHTTPServer(handler);
  server.listen(Number(opts.port), "127.0.0.1", () => {
    const { port } = server.address();
    process.stdout.write(JSON.stringify({ listening: `127.0.0.1:${port}`, verifier: name, tls }) + "\n");
  });
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
