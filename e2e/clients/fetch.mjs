// The Node recipe of docs/clients.md, run by e2e/clients_test.go: Node's
// fetch and http.get ignore HTTPS_PROXY, so undici's EnvHttpProxyAgent
// carries every request through it (HTTPS_PROXY, HTTP_PROXY, NO_PROXY);
// the proxy's CA comes from NODE_EXTRA_CA_CERTS.
//
//   NODE_EXTRA_CA_CERTS=ca.pem HTTPS_PROXY=http://127.0.0.1:8080 node fetch.mjs URL...
//
// USER_AGENT, when set, is the crawler's User-Agent.
// Prints "status<TAB>body length" per URL, or "error<TAB>cause".
import { EnvHttpProxyAgent, setGlobalDispatcher, fetch } from "undici";

setGlobalDispatcher(new EnvHttpProxyAgent());

for (const url of process.argv.slice(2)) {
  try {
    const res = await fetch(url, { headers: { "user-agent": process.env.USER_AGENT || "ExampleBot/1.0" } });
    const body = await res.text();
    console.log(`${res.status}\t${body.length}`);
  } catch (err) {
    console.log(`error\t${err.cause?.code ?? err.cause?.message ?? err.message}`);
  }
}
