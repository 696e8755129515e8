// puppeteer-core beside `bench_cdp --firefox`: connect, page.click (and
// Locator.click, the same checks as ours) and page.type on the same page of
// the same Firefox, over WebDriver BiDi (puppeteer's protocol:
// "webDriverBiDi"). Usage: node bidi_puppeteer.mjs PORT URL N
import puppeteer from "puppeteer-core";

const [port, url, nArg] = process.argv.slice(2);
const n = +(nArg || 50);
const browserWSEndpoint = `ws://127.0.0.1:${port}/session`;
const connect = () => puppeteer.connect({ browserWSEndpoint, protocol: "webDriverBiDi",
                                          defaultViewport: null });

function row(name, v) {
  v.sort((a, b) => a - b);
  console.log(`ROW ${name} ${v[n >> 1].toFixed(3)} ${v[Math.floor(n * 9 / 10)].toFixed(3)} ${n}`);
}

// Firefox holds one session at a time: each connect's ends with close()
// (for a connected browser: session.end; the browser keeps running).
const t = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  const b = await connect();
  const pages = await b.pages(); // a page to act on, as ksr_bidi_connect takes a context
  t.push(performance.now() - t0);
  if (!pages.length) throw new Error("no page");
  await b.disconnect();
}
row("puppeteer.ff.connect", t);

const browser = await connect();
const page = (await browser.pages())[0];
await page.goto(url);
const click = [], lclick = [], type = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  await page.click("#b");
  click.push(performance.now() - t0);
}
row("puppeteer.ff.click", click);
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  await page.locator("#b").click();
  lclick.push(performance.now() - t0);
}
row("puppeteer.ff.locator_click", lclick);
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  await page.type("#t", "hello");
  type.push(performance.now() - t0);
}
row("puppeteer.ff.type5", type);
const clicks = await page.$eval("#b", (e) => +(e.dataset.n || 0));
console.log(`CHECK puppeteer Firefox clicks counted by the page: ${clicks} of ${2 * n}`);
await browser.disconnect();
process.exit(clicks === 2 * n ? 0 : 1);
