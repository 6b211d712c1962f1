// An origin that verifies every request with Cloudflare's web-bot-auth
// (npm): its verify() checks tag="web-bot-auth", created (not in the
// future), expires (not past), that keyid is set, and the Ed25519
// signature (its verifierFromJWK). This file adds the key lookup by keyid,
// a replayed-nonce check and, unless --raw, the adapter below.
//
//   node origin-web-bot-auth.mjs --port 0 --key public.pem [--tls-cert c.pem --tls-key k.pem]
import { verify } from "web-bot-auth";
import { verifierFromJWK } from "web-bot-auth/crypto";
import { parseDictionary, serializeItem } from "structured-headers";
import { options, loadKeys, NonceStore, serve, version } from "./common.mjs";

const opts = options(process.argv.slice(2));
const keys = await Promise.all(loadKeys(opts.key).map(async (k) => ({ ...k, verify: await verifierFromJWK(k.jwk) })));
const nonces = new NonceStore();
const name = version("web-bot-auth");

// memberAdapter works around web-bot-auth 0.1.3, which signs and verifies
// a covered "signature-agent";key="L" over the whole field value, where
// RFC 9421 section 2.1.2 takes the Dictionary member L's value: it
// replaces the field with that member's value before verify() runs.
function memberAdapter(headers) {
  const input = parseDictionary(headers["signature-input"] ?? "");
  for (const [, [items]] of input) {
    for (const [component, params] of Array.isArray(items) ? items : []) {
      if (component !== "signature-agent" || !params.has("key")) continue;
      const member = parseDictionary(headers["signature-agent"] ?? "").get(params.get("key"));
      if (!member) throw new Error(`Signature-Agent has no member ${params.get("key")}`);
      return { ...headers, "signature-agent": serializeItem(member) };
    }
  }
  return headers;
}

serve(opts, name, async (message) => {
  const headers = opts.raw ? message.headers : memberAdapter(message.headers);
  let used;
  const result = await verify({ ...message, headers }, async (data, signature, params) => {
    const key = opts["ignore-keyid"] ? keys[0] : keys.find((k) => k.keyid === params.keyid);
    if (!key) throw new Error(`unknown keyid ${params.keyid}`);
    await key.verify(data, signature, params);
    used = { keyid: params.keyid, created: params.created.getTime() / 1000, expires: params.expires.getTime() / 1000, tag: params.tag, nonce: params.nonce };
    return used;
  });
  nonces.check(result.nonce);
  const input = parseDictionary(message.headers["signature-input"]);
  const [[label, [items]]] = input;
  return { ...used, label, components: items.map((i) => serializeItem(i)), adapter: !opts.raw };
});
