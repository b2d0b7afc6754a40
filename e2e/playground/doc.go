// Package playground holds the playground's browser tests: `dlroute
// playground`, the binary of this checkout, on a loopback port, its page
// driven in headless Chromium (chromedp) as a person drives it, and the
// corpus answered by the page. They are the e2e tier's (e2e/RATIONALE.md:
// "Why is the e2e tier its own module?"): chromedp is a requirement of
// this module, not of dlroute's.
package playground
