import assert from "node:assert/strict";
import { crossSite, localHosts, refusedHost } from "../../../lib/provevi/guard/local_request.ts";

const hosts = localHosts(4318);
const request = (headers: Record<string, string>) => new Request("http://127.0.0.1:4318/runs", { headers });

Deno.test("localHosts() names the service's loopback hosts at its port, and a further name once", () => {
  assert.deepEqual(hosts, ["127.0.0.1:4318", "localhost:4318", "[::1]:4318"]);
  assert.deepEqual(localHosts(1, ["127.0.0.1", "::1", "box.local"]), [
    "127.0.0.1:1",
    "localhost:1",
    "[::1]:1",
    "box.local:1",
  ]);
});

Deno.test("refusedHost() accepts only the service's own Host, whatever its case, and refuses a missing one", () => {
  assert.equal(refusedHost(request({ host: "127.0.0.1:4318" }), hosts), null);
  assert.equal(refusedHost(request({ host: "LOCALHOST:4318" }), hosts), null);
  assert.equal(refusedHost(request({ host: "evil.example:4318" }), hosts), "evil.example:4318");
  assert.equal(refusedHost(request({ host: "127.0.0.1:4319" }), hosts), "127.0.0.1:4319");
  assert.equal(refusedHost(request({ host: "127.0.0.1" }), hosts), "127.0.0.1");
  assert.equal(refusedHost(request({}), hosts), "");
});

Deno.test("crossSite() refuses another origin (another port is one) and a cross-site fetch, and lets a program through", () => {
  assert.equal(crossSite(request({}), hosts), null);
  assert.equal(crossSite(request({ origin: "http://127.0.0.1:4318" }), hosts), null);
  assert.equal(crossSite(request({ "sec-fetch-site": "same-origin" }), hosts), null);
  assert.equal(crossSite(request({ "sec-fetch-site": "none" }), hosts), null);
  for (
    const headers of <Record<string, string>[]> [
      { origin: "https://evil.example" },
      { origin: "http://127.0.0.1:5000" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "http://127.0.0.1:4318", "sec-fetch-site": "same-site" },
    ]
  ) assert.notEqual(crossSite(request(headers), hosts), null, JSON.stringify(headers));
});

Deno.test("refusedHost() looks at the address too: a request in absolute form names another host there", () => {
  const absolute = new Request("http://evil.example/runs", { headers: { host: "127.0.0.1:4318" } });
  assert.equal(refusedHost(absolute, hosts), "evil.example:80");
  const ipv6 = new Request("http://[::1]:4318/runs", { headers: { host: "[::1]:4318" } });
  assert.equal(refusedHost(ipv6, hosts), null);
  const eighty = new Request("http://127.0.0.1/", { headers: { host: "127.0.0.1:80" } });
  assert.equal(refusedHost(eighty, localHosts(80)), null);
});
