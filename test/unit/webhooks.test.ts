// The pure parts of webhooks (docs/webhooks.md): Standard Webhooks
// signatures against the specification's published test vector and its
// reference library, the retry schedule, Retry-After, endpoint URL rules, the
// AES-GCM sealing of secrets and the key checks, and `--events`.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../drizzle/schema";
import { CliError } from "../../src/cli/errors";
import { parseEventTypes } from "../../src/cli/webhooks";
import { DEV_WEBHOOK_KEY, decryptSecret, encryptSecret, keyProblem } from "../../src/webhooks/key";
import { MAX_ATTEMPTS, parseRetryAfter, retryDelay } from "../../src/webhooks/retry";
import { fromBase64, newSecret, sign, toBase64, webhookHeaders } from "../../src/webhooks/signature";
import { checkEndpointUrl } from "../../src/webhooks/urls";

// The test vector of the Standard Webhooks reference libraries
// (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts,
// "sign function works"; the same in its other languages' tests).
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("Standard Webhooks signatures", () => {
  it("sign() reproduces the specification's test vector byte for byte", async () => {
    const { secret, id, timestamp, payload, signature } = VECTOR;
    expect(await sign(secret, id, timestamp, payload)).toBe(signature);
    // The prefix is optional, as in the reference implementation.
    expect(await sign(secret.slice("whsec_".length), id, timestamp, payload)).toBe(signature);
  });

  it("any change of id, timestamp, body or secret changes the signature", async () => {
    const { secret, id, timestamp, payload, signature } = VECTOR;
    const other = [
      await sign(secret, `${id}x`, timestamp, payload),
      await sign(secret, id, timestamp + 1, payload),
      await sign(secret, id, timestamp, payload.replace("2432232314", "2432232315")),
      await sign(newSecret(), id, timestamp, payload),
    ];
    for (const s of other) expect(s).not.toBe(signature);
    expect(new Set(other).size).toBe(other.length);
  });

  it("webhookHeaders() gives exactly the four headers of the vector", async () => {
    const { secret, id, timestamp, payload, signature } = VECTOR;
    expect(await webhookHeaders([secret], id, timestamp, payload)).toStrictEqual({
      "Content-Type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": "1614265330",
      "webhook-signature": signature,
    });
  });

  it("two secrets give two signatures, space-separated, in the order given", async () => {
    const { secret, id, timestamp, payload, signature } = VECTOR;
    const other = newSecret();
    const otherSignature = await sign(other, id, timestamp, payload);
    expect(otherSignature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const headers = await webhookHeaders([other, secret], id, timestamp, payload);
    expect(headers["webhook-signature"]).toBe(`${otherSignature} ${signature}`);
  });

  it("the reference library (standardwebhooks) signs the vector as sign() does", async () => {
    const { secret, id, timestamp, payload, signature } = VECTOR;
    expect(new Webhook(secret).sign(id, new Date(timestamp * 1000), payload)).toBe(signature);
  });

  it("the reference library verifies fresh headers under either of two secrets, and refuses a third", async () => {
    const [current, previous] = [newSecret(), newSecret()];
    const body = JSON.stringify({ id: "evt_x", type: "lead.created", data: { name: "Zoë ✓" } });
    const headers = await webhookHeaders([current, previous], "evt_x", Math.floor(Date.now() / 1000), body);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow(/No matching signature/);
  });

  it("newSecret() is whsec_ + base64 of 32 random bytes", () => {
    const secrets = [newSecret(), newSecret()];
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(fromBase64(secret.slice("whsec_".length))).toHaveLength(32);
    }
    expect(secrets[0]).not.toBe(secrets[1]);
  });
});

describe("the retry schedule", () => {
  it.each([
    [1, 5],
    [2, 300],
    [3, 1800],
    [4, 7200],
    [5, 18000],
    [6, 36000],
    [7, 36000],
  ])("after failed attempt %i the next comes %i s later", (attempt, seconds) => {
    expect(retryDelay(attempt)).toBe(seconds);
  });

  it("8 attempts in all: none after the 8th", () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(retryDelay(8)).toBeNull();
    expect(retryDelay(8, 60)).toBeNull();
    expect(retryDelay(9)).toBeNull();
  });

  it.each([
    [1, 7200, 7200, "a longer Retry-After wins"],
    [3, 1801, 1801, "a longer Retry-After wins, by one second"],
    [1, 1, 5, "a shorter one does not"],
    [4, 0, 7200, "nor does zero"],
    [2, 300, 300, "an equal one changes nothing"],
    [1, 999_999, 43_200, "capped at 12 h"],
    [7, 43_201, 43_200, "capped at 12 h"],
    [6, 43_200, 43_200, "12 h exactly"],
  ])("attempt %i with Retry-After %i → %i s (%s)", (attempt, retryAfter, seconds) => {
    expect(retryDelay(attempt, retryAfter)).toBe(seconds);
  });
});

describe("Retry-After", () => {
  const now = Date.parse("2015-10-21T06:28:00Z");

  it.each([
    ["120", 120],
    [" 7200 ", 7200],
    ["0", 0],
    ["Wed, 21 Oct 2015 07:28:00 GMT", 3600],
    ["Wed, 21 Oct 2015 06:29:30 GMT", 90],
    ["Wed, 21 Oct 2015 05:00:00 GMT", 0],
  ])("%j → %i s", (value, seconds) => {
    expect(parseRetryAfter(value, now)).toBe(seconds);
  });

  it("an HTTP date not on a whole second waits until it has passed", () => {
    expect(parseRetryAfter("Wed, 21 Oct 2015 06:29:00 GMT", now + 500)).toBe(60);
  });

  it.each([null, "", "soon", "-5", "1.5", "12 s", "0x10"])("%j → none", (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe("endpoint URLs", () => {
  it.each([
    ["https://hooks.example.com/x", "https://hooks.example.com/x"],
    ["https://Hooks.Example.COM:8443/in?source=crm", "https://hooks.example.com:8443/in?source=crm"],
    ["https://example.com", "https://example.com/"],
    ["http://localhost:3000/hook", "http://localhost:3000/hook"],
    ["http://127.0.0.1:8787/x", "http://127.0.0.1:8787/x"],
    ["http://[::1]:9000/x", "http://[::1]:9000/x"],
  ])("%s is accepted as %s", (text, url) => {
    expect(checkEndpointUrl(text)).toStrictEqual({ url });
  });

  const HTTP_REFUSED = "http:// is accepted for localhost, 127.0.0.1 or [::1] only (local development); use https://";
  it.each([
    ["http://example.com/x", HTTP_REFUSED],
    ["http://localhost.example.com/x", HTTP_REFUSED],
    ["http://10.0.0.1/x", HTTP_REFUSED],
    ["ftp://example.com/x", "the URL must start with https:// (got ftp://)"],
    ["javascript:alert(1)", "the URL must start with https:// (got javascript://)"],
    ["https://user:pass@example.com/x", "the URL must not carry a user name or password"],
    ["https://user@example.com/x", "the URL must not carry a user name or password"],
    ["https://example.com/x#part", "the URL must not have a #fragment"],
    ["https://example.com/#", "the URL must not have a #fragment"],
    ["/relative/path", "not an absolute URL: /relative/path"],
    ["example.com/x", "not an absolute URL: example.com/x"],
    ["", "not an absolute URL: "],
  ])("%s is refused", (text, error) => {
    expect(checkEndpointUrl(text)).toStrictEqual({ error });
  });

  it("at most 2048 characters", () => {
    const base = "https://example.com/";
    const longest = base + "a".repeat(2048 - base.length);
    expect(checkEndpointUrl(longest)).toStrictEqual({ url: longest });
    expect(checkEndpointUrl(`${longest}a`)).toStrictEqual({ error: "the URL is longer than 2048 characters" });
  });
});

describe("the secrets' key", () => {
  const key = toBase64(crypto.getRandomValues(new Uint8Array(32)));
  const otherKey = toBase64(crypto.getRandomValues(new Uint8Array(32)));
  const secret = newSecret();

  it("encryptSecret/decryptSecret round-trip, with a fresh IV each time", async () => {
    const sealed = await encryptSecret(key, "ep_a", secret);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9+/]{16}\.[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain(secret.slice("whsec_".length));
    expect(await decryptSecret(key, "ep_a", sealed)).toBe(secret);
    const again = await encryptSecret(key, "ep_a", secret);
    expect(again).not.toBe(sealed);
    expect(await decryptSecret(key, "ep_a", again)).toBe(secret);
  });

  it("a ciphertext does not decrypt under another endpoint id, another key, or altered", async () => {
    const sealed = await encryptSecret(key, "ep_a", secret);
    await expect(decryptSecret(key, "ep_b", sealed)).rejects.toThrow();
    await expect(decryptSecret(otherKey, "ep_a", sealed)).rejects.toThrow();
    const [version, iv, body] = sealed.split(".");
    const flipped = toBase64(fromBase64(body!).map((byte, i) => (i === 0 ? byte ^ 1 : byte)));
    await expect(decryptSecret(key, "ep_a", `${version}.${iv}.${flipped}`)).rejects.toThrow();
    await expect(decryptSecret(key, "ep_a", secret)).rejects.toThrow("unknown secret ciphertext format");
    await expect(decryptSecret(key, "ep_a", `v2.${iv}.${body}`)).rejects.toThrow("unknown secret ciphertext format");
  });

  const NOT_SET = "WEBHOOK_SECRET_KEY is not set (wrangler secret put WEBHOOK_SECRET_KEY)";
  const PUBLISHED =
    "WEBHOOK_SECRET_KEY is the published local-development default; set your own with wrangler secret put WEBHOOK_SECRET_KEY";
  const MALFORMED = "WEBHOOK_SECRET_KEY must be the base64 of 32 random bytes (openssl rand -base64 32)";
  it.each([
    ["missing", {}, NOT_SET],
    ["empty", { WEBHOOK_SECRET_KEY: "" }, NOT_SET],
    ["the dev default without LOCAL_DEVELOPMENT", { WEBHOOK_SECRET_KEY: DEV_WEBHOOK_KEY }, PUBLISHED],
    [
      'the dev default with LOCAL_DEVELOPMENT="1"',
      { WEBHOOK_SECRET_KEY: DEV_WEBHOOK_KEY, LOCAL_DEVELOPMENT: "1" },
      PUBLISHED,
    ],
    [
      'the dev default with LOCAL_DEVELOPMENT="true"',
      { WEBHOOK_SECRET_KEY: DEV_WEBHOOK_KEY, LOCAL_DEVELOPMENT: "true" },
      undefined,
    ],
    ["16 bytes", { WEBHOOK_SECRET_KEY: toBase64(new Uint8Array(16).fill(7)) }, MALFORMED],
    ["33 bytes", { WEBHOOK_SECRET_KEY: toBase64(new Uint8Array(33).fill(7)) }, MALFORMED],
    ["not base64", { WEBHOOK_SECRET_KEY: "not base64 at all!" }, MALFORMED],
    ["a good key", { WEBHOOK_SECRET_KEY: toBase64(new Uint8Array(32).fill(7)) }, undefined],
    ["a good key, LOCAL_DEVELOPMENT unset", { WEBHOOK_SECRET_KEY: toBase64(new Uint8Array(32).fill(9)) }, undefined],
  ])("keyProblem: %s", (_name, env, problem) => {
    expect(keyProblem(env)).toBe(problem);
  });

  it("the dev default is the base64 of 32 bytes (usable where accepted)", async () => {
    expect(fromBase64(DEV_WEBHOOK_KEY)).toHaveLength(32);
    expect(await decryptSecret(DEV_WEBHOOK_KEY, "ep_d", await encryptSecret(DEV_WEBHOOK_KEY, "ep_d", secret))).toBe(
      secret,
    );
  });
});

describe("--events", () => {
  it("defaults to every type", () => {
    expect(parseEventTypes(undefined)).toStrictEqual([...EVENT_TYPES]);
    expect(parseEventTypes(undefined)).toHaveLength(11);
  });

  it.each([
    ["lead.created", ["lead.created"]],
    ["incident.cancelled,lead.created", ["lead.created", "incident.cancelled"]],
    [" incident.rescheduled , contact.created ", ["contact.created", "incident.rescheduled"]],
    ["lead.created,lead.created,contact.created,lead.created", ["lead.created", "contact.created"]],
    [[...EVENT_TYPES].reverse().join(","), [...EVENT_TYPES]],
  ])("%j → %j", (text, types) => {
    expect(parseEventTypes(text)).toStrictEqual(types);
  });

  it.each([
    ["lead.created,bogus", "unknown event type: bogus"],
    ["Lead.Created", "unknown event type: Lead.Created"],
    ["lead.*", "unknown event type: lead.*"],
    ["incident.updated,lead", "unknown event type: incident.updated, lead"],
    ["", "--events needs at least one type"],
    [",", "--events needs at least one type"],
    [" , ,", "--events needs at least one type"],
  ])("%j is refused", (text, message) => {
    expect(() => parseEventTypes(text)).toThrow(CliError);
    expect(() => parseEventTypes(text)).toThrow(`${message} (known: ${EVENT_TYPES.join(", ")})`);
  });
});
