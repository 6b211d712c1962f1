// Package robots parses and matches robots.txt files as specified by
// RFC 9309 (the Robots Exclusion Protocol).
//
// A body is parsed once with [Parse] (or [Options.Parse]) into a compiled,
// immutable [Robots] value that is safe for concurrent use. [Robots.Test]
// then answers "may a crawler with these product tokens fetch this path, and
// which rule decided it" without re-parsing and without allocating.
//
//	r := robots.Parse(body)
//	v := r.Test("/private/page.html", "ExampleBot")
//	if v.Matched() { fmt.Println("decided by line", v.Rule.Line, v.Rule.Text()) }
//
// # Memory
//
// A compiled file does not keep the body. Its groups, rules, agents and
// records are encoded back to back in one string (see compile.go): on the
// project's corpus it takes less memory than the file itself. Patterns are
// kept normalised, and a rule's value as written is rebuilt on demand from
// its pattern and a few octets of edits ([Rule.Text]). Groups, records and
// sitemaps are decoded on demand by [Robots.Group], [Robots.Groups],
// [Robots.Records] and [Robots.Sitemaps], which allocate; [Robots.Test]
// does not, nor do [Robots.Extras] and [Robots.Usage] but in rare cases.
//
// # What is implemented (RFC 9309 section 2)
//
//   - Groups (2.1, 2.2.1): one or more user-agent lines followed by rules;
//     a group ends at the next user-agent line that follows a rule, or at
//     end of file. Several groups for one product token are merged.
//   - Product tokens are matched case-insensitively (2.2.1). When no group
//     names any of the crawler's tokens, the "*" group applies; when there
//     is none either, every URI is allowed.
//   - Allow and disallow rules (2.2.2) are matched from the first octet of
//     the path; the longest pattern in octets wins; an allow rule wins a tie
//     with an equivalent disallow rule. "/robots.txt" is always allowed.
//   - "*" matches any run of octets and a trailing "$" anchors the end of
//     the pattern (2.2.3). A "$" that is not the last octet is literal.
//     Matching never backtracks: it is linear in the length of the path
//     for each literal segment of a pattern. Only the rules whose first
//     literal octets agree with the path's are compared in full.
//   - Percent-encoding (2.2.2) is normalised the same way on both sides:
//     see [NormalizePath].
//   - Rules before the first user-agent line are ignored (2.2.2).
//   - Comments ("#" to end of line), CR, LF and CRLF line ends, leading and
//     trailing white space, and a UTF-8 byte order mark are accepted.
//   - Other records (sitemap, crawl-delay, host, ...) are kept, see
//     [Robots.Sitemaps] and [Robots.Records], and never end a group (2.2.4),
//     Content-Usage included.
//   - A parse limit (2.5): only the first [DefaultMaxBytes] bytes (or
//     [Options.MaxBytes]) are parsed; the rest is ignored, never an error.
//     A line cut by the limit is dropped whole.
//   - Two more limits guard the parser (RFC 9309 section 3) without
//     rejecting the rest of the file: lines longer than
//     [DefaultMaxLineBytes] are truncated (as Google's parser does), and a
//     group keeps at most [DefaultMaxRulesPerGroup] rules; see [Options].
//     Both are counted in [Robots.Limited], as are the Content-Usage lines
//     past [MaxContentUsageRules] in a file.
//
// # Other records that are read (2.2.4)
//
//   - Crawl-delay and Request-rate ([Robots.Extras], [ParseCrawlDelay],
//     [ParseRequestRate]): per group; merged groups keep the largest delay
//     and the longest interval.
//   - Content-Signal, Cloudflare's Content Signals Policy
//     ([GroupExtras.ContentSignal], [ParseContentSignal]): per group, or for
//     every crawler before the first user-agent line; "no" wins over "yes".
//   - Content-Usage, the rule of draft-ietf-aipref-attach-05 with the
//     statements of preference of draft-ietf-aipref-vocab-07, RFC 9651
//     Dictionaries such as "train-ai=n, search=y" ([Robots.Usage],
//     [ParseStatement]): the rules of the groups that apply whose path
//     matches longest, for paths those groups allow; conflicting rules
//     combine with any "n" winning, then "y".
//   - Sitemap ([Robots.SitemapURLs]): file-level, absolute http(s) URLs.
//   - License ([Robots.Licenses], [Robots.HasLicense]): RSL 1.0's
//     file-level record naming the site's license, absolute http(s) URLs,
//     with their line numbers. [Pattern] matches other documents' paths
//     (an RSL content element's url) as rules are matched.
//
// # Leniency (RFC 9309 2.2.4 and 2.3.1.5: parse each line, use what parses)
//
//   - A user-agent value is read up to the first octet that cannot be part
//     of an RFC 9309 identifier (letters, "_" and "-"), so "Googlebot/2.1"
//     and "Foo Bar" name the product tokens "Googlebot" and "Foo", and
//     "AB42bot" names "AB", as the conformance suite expects. A crawler's
//     own token is compared whole, case-insensitively.
//   - The name rule, a choice beyond RFC 9309 (see IsAgentName): a
//     user-agent value also names its whole leading run of RFC 9110 token
//     characters when that is a name, so "User-agent: AB42bot" applies to
//     the crawler "AB42bot" as well as to "AB", and "User-agent: MJ12bot"
//     to MJ12bot. Google's suite expects AB42bot to be allowed there; the
//     package's conformance test overrides those two cases.
//   - A missing colon is accepted when the key and value are separated by
//     white space ("disallow /x"), as Google's parser does (conformance
//     case accepted-mistakes).
//   - Common misspellings of the keys are accepted: "useragent",
//     "user agent", "user-agents", "dissallow", "dissalow", "disalow",
//     "diasllow", "disallaw", "sitemaps", "site-map", "crawldelay".
//   - Keys are case-insensitive.
//   - A partial UTF-8 byte order mark (its first one or two octets) at the
//     start of the file is skipped like a whole one.
//   - Files that are not UTF-8 are bridged (2.2.2, last paragraph: "MAY
//     bridge encoding mismatches"): each line that is not valid UTF-8 is
//     transcoded to UTF-8 from the charset the server declared
//     ([Options.Charset]), or from windows-1252 when none was declared or it
//     cannot decode the line, before percent-encoding. A Latin-1 rule
//     "Disallow: /gr\xfc\xdfe" then matches "/gr%C3%BC%C3%9Fe", the URL a
//     UTF-8 site serves. Such a rule also matches as its raw octets,
//     "/gr%FC%DFe", the URL a site that writes Latin-1 robots.txt may serve
//     (and the one Google's matcher compares with): when the two readings
//     differ, the line gives two rules of the same kind on the same line,
//     and the longest match among all rules decides as usual. [Rule.Text]
//     shows the bridged line for both. Lines that are valid UTF-8 are never
//     changed.
//
// Nothing in a hostile file can make parsing panic; unparseable lines are
// counted in [Robots.Ignored] and otherwise skipped.
package robots
