// Signs one request with a library nobody here wrote and prints the
// headers as JSON, so that the Go tests can prove the origins accept a
// known-good signature and reject a bad one before trusting them with the
// proxy's.
//
//   node sign.mjs --key private.pem --url URL [--method GET]
//        --signer web-bot-auth|http-message-signatures [--expires-in SECONDS]
//
// web-bot-auth signs with the older Signature-Agent form (an sf-string,
// covered as "signature-agent"), since 0.1.3 mishandles ;key= (see
// docs/interop.md); http-message-signatures signs with the RFC 9421
// Dictionary member form ("signature-agent";key="agent1").
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { generateNonce, signatureHeaders } from "web-bot-auth";
import { signerFromJWK } from "web-bot-auth/crypto";
import * as hms from "http-message-signatures";

const { values: o } = parseArgs({
  options: {
    key: { type: "string" }, url: { type: "string" }, method: { type: "string", default: "GET" },
    signer: { type: "string" }, "expires-in": { type: "string", default: "60" },
  },
});
const priv = createPrivateKey(readFileSync(o.key));
const created = new Date(Math.floor(Date.now() / 1000) * 1000);
const expires = new Date(created.getTime() + Number(o["expires-in"]) * 1000);
const agent = "https://bot.example";
let headers;
if (o.signer === "web-bot-auth") {
  const sa = `"${agent}"`;
  const signer = await signerFromJWK(priv.export({ format: "jwk" }));
  const h = await signatureHeaders({ method: o.method, url: o.url, headers: { "signature-agent": sa } }, signer,
    { created, expires, components: ["@authority", "signature-agent", "@method", "@path"] });
  headers = { "Signature-Agent": sa, ...h };
} else if (o.signer === "http-message-signatures") {
  const sa = `agent1="${agent}"`;
  // web-bot-auth's signer only names the key (its JWK thumbprint) here.
  const signer = await signerFromJWK(priv.export({ format: "jwk" }));
  const nonce = generateNonce();
  const signed = await hms.httpbis.signMessage({
    key: hms.createSigner(priv, "ed25519", signer.keyid), name: "sig1",
    fields: ["@authority", '"signature-agent";key="agent1"', "@method", "@path"],
    params: ["created", "expires", "keyid", "nonce", "tag"],
    paramValues: { created, expires, nonce, tag: "web-bot-auth" },
  }, { method: o.method, url: o.url, headers: { "Signature-Agent": sa } });
  headers = signed.headers;
} else {
  throw new Error("--signer web-bot-auth|http-message-signatures");
}
process.stdout.write(JSON.stringify(headers) + "\n");
