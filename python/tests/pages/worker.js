// A service worker that does nothing: tests/test_explore.py registers it to show that an
// example's service workers are gone before the next example starts.
self.addEventListener("install", () => self.skipWaiting());
