// SigV4 in the browser (WebCrypto HMAC-SHA256), for the catalog browser's calls to the service.
// The secret access key is used once, at sign-in, to derive the day's signing keys (kSigning for
// date/region/service) and a Paimon bearer token; only those are kept (sessionStorage), never
// the secret. A signing key is good for one UTC day, one region and one service.
"use strict";

const SigV4 = (() => {
  const enc = new TextEncoder();
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
  const unhex = (text) => new Uint8Array(text.match(/../g).map((h) => parseInt(h, 16)));

  async function hmac(key, data) {
    const k = await crypto.subtle.importKey("raw", typeof key === "string" ? enc.encode(key) : key,
      { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await crypto.subtle.sign("HMAC", k, typeof data === "string" ? enc.encode(data) : data));
  }

  async function sha256(data) {
    return hex(await crypto.subtle.digest("SHA-256", typeof data === "string" ? enc.encode(data) : data));
  }

  function amzDate(now) {
    return now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  }

  // RFC 3986 encoding, as SigV4's canonical query string wants it.
  function uriEncode(text) {
    return encodeURIComponent(text).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
  }

  async function signingKey(secret, date, region, service) {
    const kDate = await hmac("AWS4" + secret, date);
    const kRegion = await hmac(kDate, region);
    const kService = await hmac(kRegion, service);
    return hex(await hmac(kService, "aws4_request"));
  }

  // The bearer token service sigv4.make_token makes: gc1.<key>.<region>.<expires>.<mac>.
  async function bearerToken(keyId, secret, region, expires) {
    const key = await hmac("AWS4" + secret, "paimon-bearer-token");
    const mac = hex(await hmac(key, `gc1\n${keyId}\n${region}\n${expires}`));
    return `gc1.${keyId}.${region}.${expires}.${mac}`;
  }

  // What sign-in keeps: no secret, only what was derived from it for today.
  async function deriveSession(keyId, secret, region, services, now = new Date()) {
    const date = amzDate(now).slice(0, 8);
    const keys = {};
    for (const service of services) keys[service] = await signingKey(secret, date, region, service);
    const expires = Math.floor(now.getTime() / 1000) + 12 * 3600;
    return { keyId, region, date, keys, bearer: await bearerToken(keyId, secret, region, expires) };
  }

  // Headers for one request: url an absolute URL of this origin, headers the x-amz-* and other
  // headers to sign (lowercase names). Returns every header to send.
  async function sign(session, service, method, url, headers, body) {
    const now = new Date();
    const stamp = amzDate(now);
    if (stamp.slice(0, 8) !== session.date) throw new Error("The sign-in was for another day: sign in again.");
    const u = new URL(url);
    const all = { ...headers, host: u.host, "x-amz-date": stamp };
    const names = Object.keys(all).map((n) => n.toLowerCase()).sort();
    const canonicalHeaders = names.map((n) => `${n}:${String(all[n]).trim().replace(/\s+/g, " ")}\n`).join("");
    const pairs = [...u.searchParams.entries()].map(([k, v]) => [uriEncode(k), uriEncode(v)]);
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const query = pairs.map(([k, v]) => `${k}=${v}`).join("&");
    const path = u.pathname.split("/").map((s) => uriEncode(decodeURIComponent(s))).join("/");
    const canonical = [method, path, query, canonicalHeaders, names.join(";"), await sha256(body || "")].join("\n");
    const scope = `${session.date}/${session.region}/${service}/aws4_request`;
    const toSign = ["AWS4-HMAC-SHA256", stamp, scope, await sha256(canonical)].join("\n");
    const key = session.keys[service];
    if (!key) throw new Error(`No signing key for ${service}: sign in again.`);
    const signature = hex(await hmac(unhex(key), toSign));
    const out = { ...headers, "x-amz-date": stamp };
    out.authorization = `AWS4-HMAC-SHA256 Credential=${session.keyId}/${scope}, ` +
      `SignedHeaders=${names.join(";")}, Signature=${signature}`;
    return out;
  }

  return { deriveSession, sign, amzDate };
})();
