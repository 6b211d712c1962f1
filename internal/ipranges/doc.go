// Package ipranges reads the IP ranges crawler operators publish, so that a
// request naming a crawler can be checked against the addresses its
// operator uses, and keeps dated copies of them in the proxy's data
// directory ("robotsproxy ipranges update").
//
// Three formats are read (Parse):
//
//   - Google's: {"creationTime": ..., "prefixes": [{"ipv4Prefix": ...},
//     {"ipv6Prefix": ...}]}, the shape Google, Bing, OpenAI, Perplexity,
//     Apple and others publish;
//   - JAFAR, the JSON format for publishing the IP ranges of automated
//     HTTP clients that draft-illyes-webbotauth-jafar-00 (April 2026)
//     standardises from Google's: "formatVersion", "synctoken", "notes"
//     and a prefix's "service" (or "services") besides;
//   - plain text: an address or CIDR prefix a line, "#" comments.
//
// Sources lists the published files robotsproxy knows (Google's common
// crawlers, special crawlers and user-triggered fetchers, Bing, OpenAI,
// Perplexity, Apple, Common Crawl, ...), each with the product tokens it
// covers. Update fetches them through the proxy's own fetcher (its
// destination guard, timeouts and redirect limit) and replaces each stored
// copy atomically, only once the new one has parsed; Load reads them back.
package ipranges
