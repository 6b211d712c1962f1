// An origin that verifies every request with http-message-signatures
// (npm, an RFC 9421 implementation independent of web-bot-auth): its
// verifyMessage() rebuilds the signature base, requires the parameters
// and components below, rejects a past expires or a future created, and
// checks the Ed25519 signature with a node:crypto key (createVerifier).
// This file adds the key lookup by keyid and tag, and a replayed-nonce
// check.
//
//   node origin-http-message-signatures.mjs --port 0 --key public.pem [--tls-cert c.pem --tls-key k.pem]
import * as hms from "http-message-signatures";
import { parseDictionary, serializeItem } from "structured-headers";
import { options, loadKeys, NonceStore, serve, version } from "./common.mjs";

const opts = options(process.argv.slice(2));
const keys = loadKeys(opts.key);
const nonces = new NonceStore();
const name = version("http-message-signatures");

serve(opts, name, async (message) => {
  let used;
  const keyLookup = async (params) => {
    if (params.tag !== "web-bot-auth") return null;
    const key = opts["ignore-keyid"] ? keys[0] : keys.find((k) => k.keyid === params.keyid);
    if (!key) return null;
    const check = hms.createVerifier(key.keyObject, "ed25519");
    return {
      id: key.keyid, algs: ["ed25519"],
      verify: async (data, signature, p) => {
        const ok = await check(data, signature);
        if (ok) used = p;
        return ok;
      },
    };
  };
  const ok = await hms.httpbis.verifyMessage({
    keyLookup,
    requiredParams: ["created", "expires", "keyid", "nonce", "tag"],
    requiredFields: ["@authority", "@method", "@path", "signature-agent"],
  }, message);
  if (ok === null) throw new Error("no signature with tag web-bot-auth and a known keyid");
  if (!ok) throw new Error("invalid signature");
  nonces.check(used.nonce);
  let label, items;
  for (const [l, [its, params]] of parseDictionary(message.headers["signature-input"])) {
    if (params.get("keyid") === used.keyid && params.get("nonce") === used.nonce) [label, items] = [l, its];
  }
  return {
    keyid: used.keyid, created: used.created.getTime() / 1000, expires: Number(used.expires), tag: used.tag,
    nonce: used.nonce, label, components: items.map((i) => serializeItem(i)),
  };
});
