// Crawlee's HttpCrawler through robotsproxy, run by e2e/tunnel_h2_test.go:
// the URLs crawled eight at once through HTTPS_PROXY (Crawlee's
// ProxyConfiguration), its HTTP client (got-scraping) offering h2 as it
// does by default; the proxy's CA from NODE_EXTRA_CA_CERTS.
//
//   NODE_EXTRA_CA_CERTS=ca.pem HTTPS_PROXY=http://127.0.0.1:8080 node crawl.mjs URL...
//
// Prints "status<TAB>HTTP version<TAB>url" per URL, in any order, or
// "error<TAB>message<TAB>url".
import { HttpCrawler, ProxyConfiguration, Configuration } from "@crawlee/http";

Configuration.getGlobalConfig().set("persistStorage", false);
const proxyConfiguration = new ProxyConfiguration({ proxyUrls: [process.env.HTTPS_PROXY] });
const crawler = new HttpCrawler({
  proxyConfiguration,
  maxConcurrency: 8,
  maxRequestRetries: 0,
  ignoreSslErrors: false,
  additionalMimeTypes: ["text/plain"],
  ignoreHttpErrorStatusCodes: [403], // robotsproxy's refusals reach requestHandler
  sessionPoolOptions: { blockedStatusCodes: [] },
  requestHandler: async ({ request, response }) => {
    console.log(`${response.statusCode}\t${response.httpVersion}\t${request.url}`);
  },
  failedRequestHandler: async ({ request }, error) => {
    console.log(`error\t${error.message.split("\n")[0]}\t${request.url}`);
  },
  preNavigationHooks: [(_ctx, gotOptions) => { gotOptions.headers = { ...gotOptions.headers, "user-agent": process.env.USER_AGENT || "CrawleeBot/1.0" }; }],
});
await crawler.run(process.argv.slice(2));
