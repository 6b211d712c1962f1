// label.js writes browsers.tsv: every distinct User-Agent header of the
// test fixtures beside it (browser-test.json, engine-test.json,
// os-test.json, device-test.json, in that order) for which ua-parser-js
// 1.0.41 names a browser, with the fixture file and that browser's name.
// Run it with ua-parser-js's source, from its npm tarball:
//
//	npm pack ua-parser-js@1.0.41 && tar xzf ua-parser-js-1.0.41.tgz
//	node label.js package/src/ua-parser.js > browsers.tsv
'use strict';
const fs = require('fs');
const path = require('path');
const UAParser = require(path.resolve(process.argv[2]));
const seen = new Set();
const out = ['file\tbrowser\tuser_agent'];
for (const file of ['browser-test.json', 'engine-test.json', 'os-test.json', 'device-test.json']) {
  for (const c of JSON.parse(fs.readFileSync(path.join(__dirname, file), 'utf8'))) {
    const ua = c.ua;
    if (typeof ua !== 'string' || ua === '' || /[\t\n\r]/.test(ua) || seen.has(ua)) continue;
    seen.add(ua);
    const name = new UAParser(ua).getBrowser().name;
    if (name) out.push(file + '\t' + name + '\t' + ua);
  }
}
process.stdout.write(out.join('\n') + '\n');
