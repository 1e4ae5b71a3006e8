import { equal, throws } from "node:assert/strict";
import {
  endpointParts,
  normalEndpoint,
  shownEndpoint,
  tryNormalEndpoint,
} from "../../../lib/provevi/telemetry/endpoint.ts";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";

const normal: [string, string][] = [
  // The seed's rules: lowercase scheme and host, default port, no trailing /, no driver, no database user.
  ["https://OTEL.example.com:443/", "https://otel.example.com:443"],
  ["HTTPS://Otel.Example.COM/v1/traces/", "https://otel.example.com:443/v1/traces"],
  ["http://otel.example.com/v1/traces", "http://otel.example.com:80/v1/traces"],
  ["https://otel.example.com:4318/v1/traces", "https://otel.example.com:4318/v1/traces"],
  ["https://logfire-us.pydantic.dev", "https://logfire-us.pydantic.dev:443"],
  ["postgresql://db.example.com/mlflow", "postgresql://db.example.com:5432/mlflow"],
  ["postgresql+psycopg://u:pw@db.example.com:5432/mlflow", "postgresql://db.example.com:5432/mlflow"],
  ["postgres://db.example.com/mlflow", "postgresql://db.example.com:5432/mlflow"],
  ["mysql+pymysql://u:p@db.example.com/mlflow?charset=utf8mb4", "mysql://db.example.com:3306/mlflow"],
  ["mssql+pyodbc://u:p@db.example.com:1433/mlflow", "mssql://db.example.com:1433/mlflow"],
  ["sqlite:////srv/mlflow.db", "sqlite:////srv/mlflow.db"],
  ["sqlite+pysqlite:////srv/mlflow.db", "sqlite:////srv/mlflow.db"],
  ["sqlite:////srv/mlflow/", "sqlite:////srv/mlflow/"],
  // Settings that name no place: ignored, except sslmode.
  [
    "postgresql://db.example.com/mlflow?sslmode=require",
    "postgresql://db.example.com:5432/mlflow?sslmode=require",
  ],
  [
    "postgresql://db.example.com/mlflow?application_name=x&connect_timeout=5&sslmode=require",
    "postgresql://db.example.com:5432/mlflow?sslmode=require",
  ],
  ["postgresql://db.example.com/mlflow?connect_timeout=10", "postgresql://db.example.com:5432/mlflow"],
  // Addresses.
  ["https://[::1]:4318/v1/traces", "https://[::1]:4318/v1/traces"],
  ["https://[FE80::1]/", "https://[fe80::1]:443"],
  ["https://127.0.0.1:4318", "https://127.0.0.1:4318"],
];
for (const [url, expected] of normal) {
  Deno.test(`normalEndpoint() puts ${url} in one form`, () => equal(normalEndpoint(url), expected));
}

const refused: [string, string][] = [
  // The seed's list.
  ["https://evil.example\\@otel.example.com/", "a backslash"],
  ["https://otel.example.com/v1 traces", "a space"],
  ["https://otel.example.com/\tx", "a control character"],
  ["https://otel.example.com/\nx", "a control character"],
  ["https://otel.exa\u0000mple.com/", "a control character"],
  ["postgresql://db.example.com/mlflow#@evil.example", "a #"],
  ["https://otel.example.com/#frag", "a #"],
  ["https://faß.de/", "not ASCII"],
  ["https://otel\u3002example.com/", "not ASCII"],
  ["https://otel．example.com/", "not ASCII"],
  ["https://user:password@otel.example.com/", "user or a password"],
  ["https://evil.example@otel.example.com/v1/traces", "user or a password"],
  ["https://otel.example.com@evil.example/", "user or a password"],
  ["https://otel.example.com%2eevil.example/", "% in its host"],
  ["https://otel%2Eexample.com/", "% in its host"],
  ["https://[fe80::1%25eth0]/", "% in its host"],
  ["postgresql://h1.example.com,h2.example.com/mlflow", "list of hosts"],
  ["postgresql://h1:5432,h2:5432/mlflow", "list of hosts"],
  ["https://otel.example.com:0/", "port 0"],
  ["https://otel.example.com:00/", "port 0"],
  ["https://otel.example.com:/", "empty port"],
  ["https://otel.example.com:0443/", "leading 0"],
  ["https://otel.example.com:65536/", "above 65535"],
  ["https://otel.example.com:4318x/", "port"],
  ["https://otel.example.com:+443/", "port"],
  ["https://otel.example.com/%2F", "% in its path"],
  ["https://otel.example.com/v1%2ftraces", "% in its path"],
  ["https://otel.example.com/x/%2e%2e/y", "% in its path"],
  ["https://otel.example.com/x/../y", ". or .. segment"],
  ["https://otel.example.com/./y", ". or .. segment"],
  ["https://otel.example.com//v1/traces", "// in its path"],
  ["https://otel.example.com/v1?x=1", "has a query"],
  ["https://otel.example.com/v1?", "has a query"],
  ["postgresql://db.example.com/mlflow?host=evil.example", 'setting "host"'],
  ["postgresql://db.example.com/host=evil.example", "= in its path"],
  ["postgresql://db.example.com/dbname=x%20host=y", "% in its path"],
  ["postgresql://db.example.com/mlflow?hostaddr=10.0.0.1", 'setting "hostaddr"'],
  ["postgresql://db.example.com/mlflow?service=x", 'setting "service"'],
  ["postgresql://db.example.com/mlflow?sslmode=require&sslmode=disable", "twice"],
  ["postgresql://db.example.com/mlflow?", "empty query"],
  ["mysql://db.example.com/mlflow?unix_socket=/tmp/x", 'setting "unix_socket"'],
  ["mssql://db.example.com/mlflow", "no port"],
  ["mssql+pyodbc://dsn_name", "no port"],
  ["mssql://db.example.com:1433", "no database"],
  ["https+x://otel.example.com/", "driver"],
  ["http+unix://otel.example.com/", "driver"],
  ["sqlite:///relative.db", "relative path"],
  ["sqlite:///:memory:", "relative path"],
  ["sqlite://host/srv/x.db", "with a host"],
  ["sqlite:////srv/x.db?mode=ro", "query"],
  ["sqlite:////srv/../etc/x.db", ". or .."],
  // What an attacker tries next.
  ["https://otel.example.com./v1/traces", "empty part"],
  ["https://.otel.example.com/", "empty part"],
  ["https://0x7f.1/", "a number"],
  ["https://0177.0.0.1/", "a number"],
  ["https://2130706433/", "a number"],
  ["https://127.1/", "a number"],
  ["https://256.0.0.1/", "a number"],
  ["https://[::1/", "no closing ]"],
  ["https://[::1]x/", "text after"],
  ["https://[v1.fe80::1]/", "IPv6"],
  ["postgresql://u:p@x@evil.example/mlflow", "more than one @"],
  ["postgresql://u:p/x@evil.example/mlflow", "an @ outside the user part"],
  ["postgresql://u:p?x@evil.example/mlflow", "@"],
  ["postgresql://db.example.com/mlflow@evil.example", "@"],
  ["postgresql:///mlflow", "no host"],
  ["https:///x", "no host"],
  ["https:otel.example.com", "scheme and //"],
  ["//otel.example.com/", "scheme and //"],
  ["ftp://otel.example.com/", "the scheme"],
  ["file:///etc/passwd", "the scheme"],
  ["javascript://x/", "the scheme"],
  ["https://otel.example.com/v1/traces;x=%", "% in its path"],
  ['https://otel.example.com/v1/"x', "character in its path"],
  ["https://otel_example.com:443\r\n/", "control character"],
];
for (const [url, why] of refused) {
  Deno.test(`normalEndpoint() refuses ${JSON.stringify(url)} (${why})`, () => {
    throws(() => normalEndpoint(url), (e: unknown) => e instanceof ProveviError && e.message.includes(why));
    equal(tryNormalEndpoint(url), null);
  });
}

Deno.test("normalEndpoint() refuses a URL that WHATWG URL reads as another host", () => {
  // Each of these is a URL that `new URL()` accepts and reads as a host other than the one a reader sees.
  for (
    const url of ["https://evil.example\\@otel.example.com/", "https://otel.example.com\\@evil.example/"]
  ) {
    const whatwg = new URL(url).hostname;
    equal(whatwg === "otel.example.com" || whatwg === "evil.example", true);
    equal(tryNormalEndpoint(url), null);
  }
  equal(new URL("https://0x7f.1/").hostname, "127.0.0.1");
  equal(tryNormalEndpoint("https://0x7f.1/"), null);
  equal(new URL("https://otel.example.com:0443/").href, "https://otel.example.com/");
  equal(tryNormalEndpoint("https://otel.example.com:0443/"), null);
});

Deno.test("normalEndpoint() agrees with WHATWG URL on the host of what it accepts", () => {
  for (const [url] of normal) {
    const parts = endpointParts(url);
    if (parts.scheme !== "http" && parts.scheme !== "https") continue;
    equal(new URL(url).hostname, parts.host);
  }
});

Deno.test("normalEndpoint() refuses a URL without repeating its password, query values or fragment", () => {
  for (
    const url of [
      "https://ada:hunter2@otel.example.com/",
      "postgresql://db.example.com/x?password=hunter2",
      "https://otel.example.com/?key=hunter2",
      "https://otel.example.com/#hunter2",
      "ada:hunter2@otel.example.com",
      "https://ada:hunter2@a@otel.example.com/",
    ]
  ) {
    throws(
      () => normalEndpoint(url),
      (e: unknown) => e instanceof ProveviError && !e.message.includes("hunter2"),
      url,
    );
  }
  equal(
    shownEndpoint("postgresql://u:pw@db.example.com/x?sslmode=require&password=pw"),
    "postgresql://…@db.example.com/x?sslmode=…&password=…",
  );
});

Deno.test("endpointParts() says a database URL named a user", () => {
  equal(endpointParts("postgresql://u:pw@db.example.com/mlflow").hadUser, true);
  equal(endpointParts("postgresql://db.example.com/mlflow").hadUser, false);
});

Deno.test("normalEndpoint() treats a non-text as misuse", () => {
  throws(() => normalEndpoint(42 as unknown as string), TypeError);
});
