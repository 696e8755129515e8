// puppeteer-core beside bench_cdp: connect, page.click and page.type on the
// same page of the same browser. Usage: node cdp_puppeteer.mjs PORT URL N
import puppeteer from "puppeteer-core";

const [port, url, nArg] = process.argv.slice(2);
const n = +(nArg || 50);
const browserURL = `http://127.0.0.1:${port}`;

function row(name, v) {
  v.sort((a, b) => a - b);
  console.log(`ROW ${name} ${v[n >> 1].toFixed(3)} ${v[Math.floor(n * 9 / 10)].toFixed(3)} ${n}`);
}

const t = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  const b = await puppeteer.connect({ browserURL, defaultViewport: null });
  const pages = await b.pages(); // attach to a page, as ksr_cdp_connect does
  t.push(performance.now() - t0);
  if (!pages.length) throw new Error("no page");
  await b.disconnect();
}
row("puppeteer.connect", t);

const browser = await puppeteer.connect({ browserURL, defaultViewport: null });
const page = (await browser.pages())[0];
await page.goto(url);
const click = [], type = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  await page.click("#b");
  click.push(performance.now() - t0);
}
row("puppeteer.click", click);
// The same checks as ours (visible, enabled, a box stable over animation
// frames, in the viewport): puppeteer's Locator API; page.click has none of
// them (scroll into view, then the click point).
const lclick = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  await page.locator("#b").click();
  lclick.push(performance.now() - t0);
}
row("puppeteer.locator_click", lclick);
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  await page.type("#t", "hello");
  type.push(performance.now() - t0);
}
row("puppeteer.type5", type);
const clicks = await page.$eval("#b", (e) => +(e.dataset.n || 0));
console.log(`CHECK puppeteer clicks counted by the page: ${clicks} of ${2 * n}`);
await browser.disconnect();
process.exit(clicks === 2 * n ? 0 : 1);
