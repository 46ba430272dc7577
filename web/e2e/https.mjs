// The page over HTTPS (serve --tls-cert/--tls-key, as with a certificate
// for a Tailscale name): pairing works at the certificate's name, and
// because no other program can serve that origin, a page opened after a
// restart comes back by itself with its stored secret, no code asked.
//
// Run by web/page_test.go (TestHTTPSPageInChromium), which makes the
// certificate for gatehouse.test; the browser finds that name at 127.0.0.1
// and accepts the test's certificate.
import { chromium } from 'playwright-core';
import { session, check } from './lib.mjs';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM, CERT, KEY } = process.env;
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS, serveArgs: ['--tls-cert', CERT, '--tls-key', KEY] });
const { step } = s;

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--host-resolver-rules=MAP gatehouse.test 127.0.0.1', '--ignore-certificate-errors'] });
  const link = s.gh('devices', 'link');
  check(link.startsWith('https://gatehouse.test:'), `the link is not at the certificate's name: ${link}`);
  const page = await s.pair(browser, 'view');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  const phone = page.context();
  const origin = new URL(page.url()).origin;
  await page.close();
  step('paired over HTTPS, the tab closed');

  await s.restart();
  const asked = s.out.split(/asks to (?:pair|reconnect)/).length;
  const back = await phone.newPage();
  await back.goto(origin + '/');
  await back.getByRole('heading', { name: 'Projects' }).waitFor({ timeout: 15000 });
  await back.getByText('This device has view access here.').waitFor();
  check(s.out.split(/asks to (?:pair|reconnect)/).length === asked, 'the page asked the person again over HTTPS');
  step('a page opened after the restart came back by itself');
  console.log('ok: HTTPS');
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
