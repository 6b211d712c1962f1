"""The Scrapy recipe of docs/clients.md, run by e2e/clients_test.go.

    HTTPS_PROXY=http://127.0.0.1:8080 scrapy runspider spider.py -a urls=URL,URL

Scrapy drops responses outside 200-299 before a callback sees them, so
HTTPERROR_ALLOWED_CODES lets the proxy's refusals (403, 429, 503) through.
Prints "status<TAB>url" per URL, or "error<TAB>url<TAB>reason".
"""
import scrapy


class RecipeSpider(scrapy.Spider):
    name = "recipe"
    custom_settings = {
        "USER_AGENT": "ExampleBot/1.0",  # the test sets it with -s USER_AGENT=...
        "HTTPERROR_ALLOWED_CODES": [403, 429, 503],
        "RETRY_ENABLED": False,
        "LOG_LEVEL": "ERROR",
    }

    def start_requests(self):
        for url in self.urls.split(","):
            yield scrapy.Request(url, dont_filter=True, errback=self.failed)

    def parse(self, response):
        print(f"{response.status}\t{response.url}", flush=True)

    def failed(self, failure):
        print(f"error\t{failure.request.url}\t{failure.value!r}", flush=True)
