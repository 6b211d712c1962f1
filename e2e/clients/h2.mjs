// Node's http2 module through robotsproxy, run by e2e/tunnel_h2_test.go:
// a CONNECT tunnel (node:http), TLS offering h2 alone (node:tls, the
// proxy's CA from NODE_EXTRA_CA_CERTS), then one HTTP/2 session for the
// origin of the URLs, all requested at once, each on its own stream.
//
//   NODE_EXTRA_CA_CERTS=ca.pem HTTPS_PROXY=http://127.0.0.1:8080 node h2.mjs URL...
//
// USER_AGENT, when set, is the crawler's User-Agent. Prints per URL, in
// order, "status<TAB>X-Robotsproxy-Reason<TAB>body length", or
// "error<TAB>cause".
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";

const proxy = new URL(process.env.HTTPS_PROXY);
const ua = process.env.USER_AGENT || "ExampleBot/1.0";
const urls = process.argv.slice(2).map((u) => new URL(u));
const target = urls[0];

function tunnel(authority) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.hostname, port: proxy.port, method: "CONNECT", path: authority,
      headers: { host: authority, "user-agent": ua },
    });
    req.on("connect", (res, socket) =>
      res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT answered ${res.statusCode}`)));
    req.on("error", reject);
    req.end();
  });
}

function get(session, u) {
  return new Promise((resolve) => {
    const req = session.request({ ":path": u.pathname + u.search, "user-agent": ua });
    let status = 0, reason = "", length = 0;
    req.on("response", (h) => { status = h[":status"]; reason = h["x-robotsproxy-reason"] || ""; });
    req.on("data", (chunk) => { length += chunk.length; });
    req.on("end", () => resolve(`${status}\t${reason}\t${length}`));
    req.on("error", (err) => resolve(`error\t${err.code ?? err.message}`));
    req.end();
  });
}

try {
  const socket = await tunnel(target.host);
  const host = target.hostname;
  const session = http2.connect(target.origin, {
    createConnection: () => tls.connect({ socket, host, ALPNProtocols: ["h2"], servername: net.isIP(host) ? undefined : host }),
  });
  session.on("error", () => {});
  const lines = await Promise.all(urls.map((u) => get(session, u)));
  for (const l of lines) console.log(l);
  session.close();
} catch (err) {
  for (const _ of urls) console.log(`error\t${err.code ?? err.message}`);
}
