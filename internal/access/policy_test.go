package access_test

// uaExampleBot is a crawler's User-Agent header.
const uaExampleBot = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"
