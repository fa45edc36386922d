// A stand-in browser for login tests, run as $BROWSER: it fetches the
// authorization URL it is given and follows the redirects, as a browser
// would, to mcpkit's loopback redirect page, and fails unless that page
// says the authorization is complete. With --forbid FILE it only writes
// the URL to FILE and fails: for runs that must not open a browser.
// Usage: node browser.mjs [--forbid FILE] URL
import { writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args[0] === '--forbid') {
  writeFileSync(args[1], args.slice(2).join(' '));
  process.exit(1);
}
if (args.length !== 1) {
  console.error(`browser: want one URL, got ${args.length}`);
  process.exit(2);
}
try {
  const res = await fetch(args[0], { signal: AbortSignal.timeout(10000) });
  const body = await res.text();
  if (res.status !== 200 || !body.includes('You can close this tab')) {
    console.error(`browser: ${res.status} at ${res.url}: ${body.slice(0, 500)}`);
    process.exit(1);
  }
} catch (e) {
  console.error(`browser: ${e}`);
  process.exit(1);
}
