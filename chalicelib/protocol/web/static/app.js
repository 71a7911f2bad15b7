// The catalog browser: plain JavaScript over the service's public APIs (Glue JSON on POST /,
// Lake Formation on POST /<Operation>, Iceberg REST on /iceberg/v1, Paimon REST on /v1), called
// as the signed-in principal (or, in open mode, as the account chosen), so the page shows exactly
// what that principal's API calls would. Views are addressed by the URL's hash.
"use strict";

const BASE = new URL(".", location.href);  // the service's root, stage path included (/prod/)
const PAGE_SIZE = 100;
const state = { mode: null, account: "", region: "", session: null, actAs: "" };

// -- small DOM helpers -------------------------------------------------------------------------
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}
const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;
const fmtTime = (t) => (t === undefined || t === null ? "" : new Date(typeof t === "number" ? t * 1000 : t).toISOString().replace(".000Z", "Z"));
function table(headers, rows, caption) {
  return h("div", { class: "scroll" }, h("table", {},
    caption ? h("caption", { class: "muted" }, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.length ? rows : [h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, "None"))])));
}
const row = (...cells) => h("tr", {}, cells.map((c) => h("td", {}, c)));
function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter((p) => p[1] !== undefined && p[1] !== "").flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}
function errorBox(err) { return h("p", { class: "error", role: "alert" }, describe(err)); }
function describe(err) { return err && err.type ? `${err.type}: ${err.message}` : String(err && err.message || err); }

class ApiError extends Error {
  constructor(type, message, status) { super(message); this.type = type; this.status = status; }
}

// -- calling the service -----------------------------------------------------------------------
function openAuthorization(service) {
  // Open mode: the access key id names the caller (an account id, or user:<name> / role:<name>).
  const date = SigV4.amzDate(new Date()).slice(0, 8);
  return `AWS4-HMAC-SHA256 Credential=${state.actAs || state.account}/${date}/${state.region}/${service}/aws4_request, ` +
    "SignedHeaders=host;x-amz-date, Signature=0";
}

async function call(service, method, url, headers, body) {
  let sent = { ...headers };
  if (state.mode === "sigv4") sent = await SigV4.sign(state.session, service, method, url, headers, body);
  else sent.authorization = openAuthorization(service);
  const response = await fetch(url, { method, headers: sent, body: body || undefined, credentials: "omit" });
  const text = await response.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch (e) { data = { message: text }; }
  const itemsRead = response.headers.get("x-glue-items-read");
  if (!response.ok) {
    const type = response.headers.get("x-amzn-errortype") || data.__type || data.error?.type || `HTTP ${response.status}`;
    const message = data.Message || data.message || data.error?.message || text;
    if (response.status === 403 && state.mode === "sigv4" && /signature|token|Unrecognized/i.test(type)) showSignIn(`${type}: ${message}`);
    throw new ApiError(String(type).split(":")[0], message, response.status);
  }
  return { data, itemsRead: itemsRead === null ? null : Number(itemsRead) };
}
async function glue(operation, params) {
  const headers = { "content-type": "application/x-amz-json-1.1", "x-amz-target": `AWSGlue.${operation}` };
  return (await call("glue", "POST", BASE.href, headers, JSON.stringify(params || {})));
}
async function lf(operation, params) {
  return (await call("lakeformation", "POST", new URL(operation, BASE).href, { "content-type": "application/json" },
    JSON.stringify(params || {}))).data;
}
async function iceberg(path) {
  return (await call("glue", "GET", new URL("iceberg/v1/" + path, BASE).href, {}, "")).data;
}
async function paimon(path) {
  const url = new URL("v1/" + path, BASE).href;
  const token = state.mode === "sigv4" ? state.session.bearer : `${state.actAs || state.account}/${state.region}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(`HTTP ${response.status}`, data.message || JSON.stringify(data), response.status);
  return data;
}
async function everyPage(operation, params, listKey, limit = 1000) {
  const out = [];
  let token;
  do {
    const { data } = await glue(operation, { ...params, ...(token ? { NextToken: token } : {}) });
    out.push(...(data[listKey] || []));
    token = data.NextToken;
  } while (token && out.length < limit);
  return out;
}

// -- session: open mode or SigV4 sign-in ---------------------------------------------------------
const SESSION_KEY = "glue-catalog-session";
function showSignIn(message) {
  $("signin").hidden = false;
  $("view").hidden = true;
  $("signin-error").textContent = message || "";
  $("signin-region").value = $("signin-region").value || state.region;
  $("key-id").focus();
}
async function signIn(event) {
  event.preventDefault();
  const keyId = $("key-id").value.trim(), secret = $("secret").value, region = $("signin-region").value.trim();
  $("secret").value = "";  // the secret lives only in this function from here on
  try {
    const session = await SigV4.deriveSession(keyId, secret, region, ["glue", "lakeformation"]);
    state.session = session;
    state.region = region;
    await glue("GetDatabases", { MaxResults: 1 });  // does the key work?
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
    $("signin").hidden = true;
    $("view").hidden = false;
    $("signout").hidden = false;
    showWho();
    route();
  } catch (err) {
    state.session = null;
    $("signin-error").textContent = describe(err);
  }
}
function signOut() {
  sessionStorage.removeItem(SESSION_KEY);
  state.session = null;
  $("signout").hidden = true;
  $("view").replaceChildren();
  showWho();
  showSignIn("Signed out.");
}
function showWho() {
  const who = $("who");
  if (state.mode === "sigv4") {
    who.textContent = state.session ? `Signed in as ${state.session.keyId} · account ${state.account || "?"} · ${state.region}` : "Not signed in";
  } else {
    who.replaceChildren(`Open mode · account ${state.actAs || state.account} · ${state.region} · `,
      h("button", { type: "button", class: "link", onclick: changeAccount }, "act as…"));
  }
}
function changeAccount() {
  const answer = prompt("Act as (a 12-digit account id, or user:<name> / role:<name>):", state.actAs || state.account);
  if (answer !== null) { state.actAs = answer.trim(); showWho(); route(); }
}

// -- views -----------------------------------------------------------------------------------
function crumbs(...parts) {
  const items = [["Databases", "#/"], ...parts];
  $("crumbs").replaceChildren(h("ol", {}, items.map(([label, href], i) =>
    h("li", {}, i === items.length - 1 ? h("span", { "aria-current": "page" }, label) : h("a", { href }, label)))));
}
function render(...nodes) {
  $("view").replaceChildren(...nodes);
}
function noteAccount(catalogId) {
  if (catalogId && !state.account) { state.account = catalogId; showWho(); }
}

async function viewDatabases() {
  crumbs();
  const results = h("div", {});
  const search = h("form", { class: "inline", role: "search", onsubmit: (e) => { e.preventDefault(); runSearch(input.value, results); } },
    h("label", { for: "search-text" }, "Search tables", h("input", { id: "search-text", type: "search", class: "wide", placeholder: "name, column, parameter…" })),
    h("button", { type: "submit" }, "Search"));
  const input = search.querySelector("input");
  const list = h("div", {}, h("p", { class: "muted" }, "Loading databases…"));
  render(h("h2", {}, "Databases"), search, results, list);
  try {
    const dbs = await everyPage("GetDatabases", {}, "DatabaseList");
    if (dbs[0]) noteAccount(dbs[0].CatalogId);
    list.replaceChildren(table(["Database", "Description", "Location", "Created"], dbs.map((d) =>
      row(h("a", { href: `#/db/${enc(d.Name)}` }, d.Name), d.Description || "", d.LocationUri || "", fmtTime(d.CreateTime)))));
  } catch (err) { list.replaceChildren(errorBox(err)); }
}
async function runSearch(text, out) {
  out.replaceChildren(h("p", { class: "muted" }, "Searching…"));
  try {
    const { data } = await glue("SearchTables", { SearchText: text, MaxResults: 100 });
    out.replaceChildren(h("h3", {}, `Tables matching “${text}”`), table(["Table", "Database", "Type"], (data.TableList || []).map((t) =>
      row(h("a", { href: `#/t/${enc(t.DatabaseName)}/${enc(t.Name)}` }, t.Name), t.DatabaseName, formatOf(t)))));
  } catch (err) { out.replaceChildren(errorBox(err)); }
}

function formatOf(t) {
  const p = t.Parameters || {};
  const type = (p.table_type || "").toUpperCase();
  if (t.TableType === "VIRTUAL_VIEW") return "view";
  if (type === "ICEBERG") return "Iceberg";
  if (type === "PAIMON") return "Paimon";
  if (t.TableType === "GOVERNED") return "governed";
  const sd = t.StorageDescriptor || {};
  const io = `${sd.InputFormat || ""} ${(sd.SerdeInfo || {}).SerializationLibrary || ""} ${p.classification || ""}`.toLowerCase();
  for (const f of ["parquet", "orc", "avro", "json", "csv"]) if (io.includes(f)) return `Hive/${f}`;
  return p.classification ? `Hive/${p.classification}` : "Hive";
}

async function viewDatabase(db) {
  crumbs([db, `#/db/${enc(db)}`]);
  const list = h("div", {}, h("p", { class: "muted" }, "Loading tables…"));
  const about = h("div", {});
  const access = h("div", {});
  render(h("h2", {}, `Database ${db}`), about, h("h3", {}, "Tables"), list, h("h3", {}, "Access"), access);
  try {
    const { data } = await glue("GetDatabase", { Name: db });
    noteAccount(data.Database.CatalogId);
    about.replaceChildren(facts([["Description", data.Database.Description], ["Location", data.Database.LocationUri],
      ["Parameters", kv(data.Database.Parameters)]]));
    access.replaceChildren(accessPanel({ Database: { Name: db, CatalogId: data.Database.CatalogId } }, databaseArn(db, data.Database.CatalogId)));
    const tables = await everyPage("GetTables", { DatabaseName: db }, "TableList");
    list.replaceChildren(table(["Table", "Format", "Partition keys", "Updated"], tables.map((t) =>
      row(h("a", { href: `#/t/${enc(db)}/${enc(t.Name)}` }, t.Name), formatOf(t), (t.PartitionKeys || []).map((k) => k.Name).join(", "), fmtTime(t.UpdateTime)))));
  } catch (err) { list.replaceChildren(errorBox(err)); }
}
function kv(obj) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return "";
  return h("div", { class: "kv" }, entries.map(([k, v]) => h("span", { class: "badge mono" }, `${k}=${String(v).slice(0, 200)}`)));
}

const TABS = [["overview", "Overview"], ["partitions", "Partitions"], ["statistics", "Statistics"], ["versions", "Versions"],
  ["history", "Format history"], ["access", "Access & tags"]];

async function viewTable(db, name, tab, query) {
  crumbs([db, `#/db/${enc(db)}`], [name, `#/t/${enc(db)}/${enc(name)}`]);
  const body = h("div", { role: "tabpanel", id: "tabpanel", tabindex: "0" }, h("p", { class: "muted" }, "Loading…"));
  const tabs = h("div", { role: "tablist", "aria-label": "Table views", onkeydown: tabKeys },
    TABS.map(([id, label]) => h("button", { type: "button", role: "tab", id: `tab-${id}`, "aria-controls": "tabpanel",
      "aria-selected": String(id === tab), tabindex: id === tab ? "0" : "-1",
      onclick: () => { location.hash = `#/t/${enc(db)}/${enc(name)}/${id}`; } }, label)));
  render(h("h2", {}, `Table ${db}.${name}`), tabs, body);
  body.setAttribute("aria-labelledby", `tab-${tab}`);
  // The first page of partitions needs only the table's name: asked alongside GetTable, not after it.
  if (tab === "partitions") query.early = partitionsPage(db, name, query);
  let t;
  try { t = (await glue("GetTable", { DatabaseName: db, Name: name })).data.Table; noteAccount(t.CatalogId); }
  catch (err) { body.replaceChildren(errorBox(err)); return; }
  const views = { overview: tabOverview, partitions: tabPartitions, statistics: tabStatistics, versions: tabVersions,
    history: tabHistory, access: tabAccess };
  await (views[tab] || tabOverview)(t, body, query);
}
function tabKeys(event) {
  const tabs = [...event.currentTarget.querySelectorAll('[role="tab"]')];
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
  if (next === undefined) return;
  event.preventDefault();
  tabs[(next + tabs.length) % tabs.length].focus();
}
const columnsTable = (cols, caption) => table(["Name", "Type", "Comment"], (cols || []).map((c) => row(h("span", { class: "mono" }, c.Name), h("span", { class: "mono" }, c.Type || ""), c.Comment || "")), caption);

async function tabOverview(t, body) {
  const sd = t.StorageDescriptor || {};
  const indexes = h("div", {}, h("p", { class: "muted" }, "Loading partition indexes…"));
  body.replaceChildren(
    facts([["Format", formatOf(t)], ["Table type", t.TableType], ["Location", sd.Location], ["Input format", sd.InputFormat],
      ["Output format", sd.OutputFormat], ["SerDe", (sd.SerdeInfo || {}).SerializationLibrary], ["Owner", t.Owner],
      ["Created", fmtTime(t.CreateTime)], ["Updated", fmtTime(t.UpdateTime)], ["Version", t.VersionId],
      ["View text", t.ViewOriginalText ? h("code", {}, t.ViewOriginalText) : ""], ["Parameters", kv(t.Parameters)]]),
    h("h3", {}, "Columns"), columnsTable(sd.Columns),
    h("h3", {}, "Partition keys"), columnsTable(t.PartitionKeys),
    h("h3", {}, "Partition indexes"), indexes);
  try {
    const { data } = await glue("GetPartitionIndexes", { DatabaseName: t.DatabaseName, TableName: t.Name });
    indexes.replaceChildren(table(["Index", "Keys", "Status", "Backfill errors"], (data.PartitionIndexDescriptorList || []).map((d) =>
      row(h("span", { class: "mono" }, d.IndexName), (d.Keys || []).map((k) => `${k.Name} ${k.Type}`).join(", "),
        h("span", { class: `badge ${d.IndexStatus === "ACTIVE" ? "ok" : d.IndexStatus === "FAILED" ? "bad" : ""}` }, d.IndexStatus),
        (d.BackfillErrors || []).map((e) => e.Code).join(", ")))));
  } catch (err) { indexes.replaceChildren(errorBox(err)); }
}

function partitionsPage(db, name, query) {
  const expression = query.get("expression") || "";
  const tokens = (query.get("pages") || "").split(",").filter(Boolean);  // NextTokens of the pages before
  const params = { DatabaseName: db, TableName: name, MaxResults: PAGE_SIZE, ExcludeColumnSchema: true };
  if (expression) params.Expression = expression;
  if (tokens.length) params.NextToken = decodeURIComponent(tokens[tokens.length - 1]);
  const answer = glue("GetPartitions", params);
  answer.catch(() => {});  // reported where it is awaited
  return answer;
}

async function tabPartitions(t, body, query) {
  const expression = query.get("expression") || "";
  const tokens = (query.get("pages") || "").split(",").filter(Boolean);
  const form = h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); go(input.value, []); } },
    h("label", { for: "expression" }, "Expression",
      h("input", { id: "expression", class: "wide mono", value: expression, placeholder: "year = '2024' AND month > '06'", spellcheck: "false" })),
    h("button", { type: "submit" }, "Filter"));
  const input = form.querySelector("input");
  const out = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "Loading partitions…"));
  body.replaceChildren(form, out);
  function go(expr, pages) {
    const q = new URLSearchParams();
    if (expr) q.set("expression", expr);
    if (pages.length) q.set("pages", pages.join(","));
    location.hash = `#/t/${enc(t.DatabaseName)}/${enc(t.Name)}/partitions${q.toString() ? "?" + q : ""}`;
  }
  try {
    const { data, itemsRead } = await (query.early || partitionsPage(t.DatabaseName, t.Name, query));
    const keys = (t.PartitionKeys || []).map((k) => k.Name);
    const parts = data.Partitions || [];
    out.replaceChildren(
      h("p", { id: "partition-summary" }, `Page ${tokens.length + 1}: ${parts.length} partition${parts.length === 1 ? "" : "s"}`,
        h("span", { class: "muted" }, itemsRead === null ? "" : ` · DynamoDB items read: `), itemsRead === null ? "" : h("strong", { id: "items-read" }, String(itemsRead))),
      table([...keys, "Location", "Created"], parts.map((p) => row(...(p.Values || []).map((v) => h("span", { class: "mono" }, v)),
        (p.StorageDescriptor || {}).Location || "", fmtTime(p.CreationTime)))),
      h("div", { class: "pager" },
        h("button", { type: "button", disabled: !tokens.length, onclick: () => go(expression, tokens.slice(0, -1)) }, "Previous page"),
        h("button", { type: "button", id: "next-page", disabled: !data.NextToken, onclick: () => go(expression, [...tokens, enc(data.NextToken)]) }, "Next page")));
    out.dataset.loaded = "true";
  } catch (err) { out.replaceChildren(errorBox(err)); out.dataset.loaded = "error"; }
}

function bar(value, max, label) {
  const width = 120, filled = max > 0 && value > 0 ? Math.max(1, Math.round((width * value) / max)) : 0;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "bar"); svg.setAttribute("width", width); svg.setAttribute("height", 12);
  svg.setAttribute("role", "img"); svg.setAttribute("aria-label", label);
  for (const [w, fill] of [[width, "#e6ebf0"], [filled, "#1f5f8b"]]) {
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("width", w); rect.setAttribute("height", 12); rect.setAttribute("fill", fill); rect.setAttribute("rx", 2);
    svg.append(rect);
  }
  return h("span", {}, svg, ` ${value}`);
}
async function tabStatistics(t, body) {
  const columns = ((t.StorageDescriptor || {}).Columns || []).map((c) => c.Name).slice(0, 100);
  if (!columns.length) { body.replaceChildren(h("p", { class: "muted" }, "No columns.")); return; }
  try {
    const { data } = await glue("GetColumnStatisticsForTable", { DatabaseName: t.DatabaseName, TableName: t.Name, ColumnNames: columns });
    const stats = (data.ColumnStatisticsList || []).map((s) => {
      const d = s.StatisticsData || {};
      const inner = Object.values(d).find((v) => typeof v === "object") || {};
      return { name: s.ColumnName, type: d.Type, nulls: inner.NumberOfNulls ?? 0, distinct: inner.NumberOfDistinctValues ?? null,
        min: inner.MinimumValue ?? inner.MinimumLength ?? "", max: inner.MaximumValue ?? inner.MaximumLength ?? "", analyzed: s.AnalyzedTime };
    });
    const maxNulls = Math.max(0, ...stats.map((s) => s.nulls)), maxDistinct = Math.max(0, ...stats.map((s) => s.distinct || 0));
    body.replaceChildren(table(["Column", "Type", "Nulls", "Distinct values", "Min", "Max", "Analyzed"], stats.map((s) =>
      row(h("span", { class: "mono" }, s.name), s.type, bar(s.nulls, maxNulls, `${s.nulls} nulls`),
        s.distinct === null ? "" : bar(s.distinct, maxDistinct, `${s.distinct} distinct values`),
        typeof s.min === "object" ? JSON.stringify(s.min) : String(s.min), typeof s.max === "object" ? JSON.stringify(s.max) : String(s.max), fmtTime(s.analyzed))),
    "Column statistics (GetColumnStatisticsForTable)"),
    (data.Errors || []).length ? h("p", { class: "muted" }, `No statistics for: ${data.Errors.map((e) => e.ColumnName).join(", ")}`) : null);
  } catch (err) { body.replaceChildren(errorBox(err)); }
}

function diffColumns(a, b) {
  const before = new Map(a.map((c) => [c.Name, c])), after = new Map(b.map((c) => [c.Name, c]));
  const rows = [];
  for (const c of b) {
    const old = before.get(c.Name);
    if (!old) rows.push(["added", c.Name, "", c.Type]);
    else if (old.Type !== c.Type || (old.Comment || "") !== (c.Comment || "")) rows.push(["changed", c.Name, old.Type, c.Type]);
    else rows.push(["same", c.Name, old.Type, c.Type]);
  }
  for (const c of a) if (!after.has(c.Name)) rows.push(["removed", c.Name, c.Type, ""]);
  return rows;
}
async function tabVersions(t, body, query) {
  try {
    const versions = await everyPage("GetTableVersions", { DatabaseName: t.DatabaseName, TableName: t.Name }, "TableVersions", 500);
    versions.sort((x, y) => Number(x.VersionId) - Number(y.VersionId));
    const ids = versions.map((v) => v.VersionId);
    const from = query.get("from") || ids[Math.max(0, ids.length - 2)], to = query.get("to") || ids[ids.length - 1];
    const pick = (id, label, value) => h("label", { for: id }, label, h("select", { id }, ids.map((v) => h("option", { value: v, selected: v === value }, v))));
    const form = h("form", { class: "inline", onsubmit: (e) => { e.preventDefault();
      location.hash = `#/t/${enc(t.DatabaseName)}/${enc(t.Name)}/versions?from=${enc(form.querySelector("#from").value)}&to=${enc(form.querySelector("#to").value)}`; } },
      pick("from", "From version", from), pick("to", "To version", to), h("button", { type: "submit" }, "Compare"));
    const byId = new Map(versions.map((v) => [v.VersionId, v.Table]));
    const a = byId.get(from), b = byId.get(to);
    const schema = (x) => [...((x.StorageDescriptor || {}).Columns || []), ...(x.PartitionKeys || []).map((k) => ({ ...k, Name: `${k.Name} (partition key)` }))];
    const diff = a && b ? diffColumns(schema(a), schema(b)) : [];
    body.replaceChildren(
      table(["Version", "Updated", "Columns"], versions.slice().reverse().map((v) => row(v.VersionId, fmtTime(v.Table.UpdateTime), String(((v.Table.StorageDescriptor || {}).Columns || []).length))), "Versions (GetTableVersions)"),
      h("h3", {}, "Schema diff"), form,
      h("div", { id: "diff" }, table(["Change", "Column", `Type in ${from}`, `Type in ${to}`], diff.map(([kind, name, x, y]) =>
        h("tr", { class: kind }, h("td", {}, kind), h("td", { class: "mono" }, name), h("td", { class: "mono" }, x || ""), h("td", { class: "mono" }, y || ""))))));
  } catch (err) { body.replaceChildren(errorBox(err)); }
}

async function tabHistory(t, body) {
  const kind = formatOf(t);
  const db = t.DatabaseName, name = t.Name;
  try {
    if (kind === "Iceberg") {
      const account = t.CatalogId || state.account;
      const loaded = await iceberg(`catalogs/${enc(account)}/namespaces/${enc(db)}/tables/${enc(name)}`);
      const m = loaded.metadata || {};
      body.replaceChildren(facts([["Metadata location", loaded["metadata-location"]], ["Format version", String(m["format-version"] ?? "")],
        ["Current snapshot", String(m["current-snapshot-id"] ?? "none")]]),
        h("h3", {}, "Snapshots"), table(["Snapshot", "Parent", "Time", "Operation", "Manifest list"], (m.snapshots || []).map((s) =>
          row(String(s["snapshot-id"]), String(s["parent-snapshot-id"] ?? ""), fmtTime(new Date(s["timestamp-ms"])), (s.summary || {}).operation || "", s["manifest-list"] || ""))),
        h("h3", {}, "Metadata history"), table(["Time", "Metadata file"], (m["metadata-log"] || []).map((e) => row(fmtTime(new Date(e["timestamp-ms"])), e["metadata-file"]))));
    } else if (kind === "Paimon") {
      const config = await paimon("config?warehouse=browser");
      const p = `${enc(config.defaults.prefix)}/databases/${enc(db)}/tables/${enc(name)}`;
      const [loaded, snapshots, tags, branches] = await Promise.all([paimon(p), paimon(`${p}/snapshots`).catch((e) => ({ error: e })),
        paimon(`${p}/tags`).catch((e) => ({ error: e })), paimon(`${p}/branches`).catch((e) => ({ error: e }))]);
      const list = (x, key) => (x.error ? [] : x[key] || []);
      body.replaceChildren(facts([["Schema id", String(loaded.schemaId ?? "")], ["Path", loaded.path]]),
        h("h3", {}, "Schema"), table(["Id", "Name", "Type"], ((loaded.schema || {}).fields || []).map((f) => row(String(f.id), f.name, typeof f.type === "string" ? f.type : JSON.stringify(f.type)))),
        h("h3", {}, "Snapshots"), snapshots.error ? errorBox(snapshots.error) : table(["Id", "Schema", "Kind", "Time", "Records"], list(snapshots, "snapshots").map((s) =>
          row(String(s.id), String(s.schemaId ?? ""), s.commitKind || "", fmtTime(new Date(s.timeMillis)), String(s.totalRecordCount ?? "")))),
        h("h3", {}, "Tags"), tags.error ? errorBox(tags.error) : table(["Tag"], list(tags, "tags").map((x) => row(typeof x === "string" ? x : x.tagName || JSON.stringify(x)))),
        h("h3", {}, "Branches"), branches.error ? errorBox(branches.error) : table(["Branch"], list(branches, "branches").map((x) => row(typeof x === "string" ? x : x.branchName || JSON.stringify(x)))));
    } else if (kind === "governed") {
      const at = h("input", { id: "as-of", type: "datetime-local", step: "1" });
      const objects = h("div", {});
      const show = async () => {
        const params = { DatabaseName: db, TableName: name };
        if (at.value) params.QueryAsOfTime = Math.floor(new Date(at.value + "Z").getTime() / 1000);
        try {
          const answer = await lf("GetTableObjects", params);
          objects.replaceChildren(table(["Partition", "Object", "Size", "ETag"], (answer.Objects || []).flatMap((p) => (p.Objects || []).map((o) =>
            row((p.PartitionValues || []).join("/"), o.Uri, String(o.Size ?? ""), o.ETag || "")))));
        } catch (err) { objects.replaceChildren(errorBox(err)); }
      };
      const tx = await lf("ListTransactions", { StatusFilter: "ALL", MaxResults: 50 }).catch((e) => ({ error: e }));
      body.replaceChildren(h("h3", {}, "Transactions"), tx.error ? errorBox(tx.error) : table(["Transaction", "Status", "Started", "Ended"], (tx.Transactions || []).map((x) =>
        row(x.TransactionId, x.TransactionStatus, fmtTime(x.TransactionStartTime), fmtTime(x.TransactionEndTime)))),
        h("h3", {}, "Table objects"), h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); show(); } },
          h("label", { for: "as-of" }, "As of (UTC, empty: now)", at), h("button", { type: "submit" }, "Show")), objects);
      await show();
    } else {
      body.replaceChildren(h("p", { class: "muted" }, `A ${kind} table keeps its history as table versions (see Versions).`));
    }
  } catch (err) { body.replaceChildren(errorBox(err)); }
}

function accessPanel(resource, arn, tagsTitle = "Tags") {
  const out = h("div", {}, h("p", { class: "muted" }, "Loading permissions…"));
  (async () => {
    const parts = [];
    try {
      const answer = await lf("ListPermissions", { Resource: resource, MaxResults: 100 });
      parts.push(table(["Principal", "Permissions", "Grantable"], (answer.PrincipalResourcePermissions || []).map((p) =>
        row(h("span", { class: "mono" }, (p.Principal || {}).DataLakePrincipalIdentifier || ""), (p.Permissions || []).join(", "), (p.PermissionsWithGrantOption || []).join(", "))),
        "Lake Formation permissions (ListPermissions)"),
        h("p", { class: "muted" }, "ListPermissions answers what the caller may see: a data lake administrator sees every grant."));
    } catch (err) { parts.push(h("p", {}, "Permissions: "), errorBox(err)); }
    if (arn) {
      try {
        const { data } = await glue("GetTags", { ResourceArn: arn });
        parts.push(h("h3", {}, tagsTitle), table(["Key", "Value"], Object.entries(data.Tags || {}).map(([k, v]) => row(k, v))));
      } catch (err) { parts.push(h("h3", {}, tagsTitle), errorBox(err)); }
    }
    out.replaceChildren(...parts);
  })();
  return out;
}
function databaseArn(db, account) {
  return `arn:aws:glue:${state.region}:${account || state.account}:database/${db}`;
}
async function tabAccess(t, body) {
  // Glue tags databases and connections, not tables: a table shows its database's tags.
  const account = t.CatalogId || state.account;
  body.replaceChildren(accessPanel({ Table: { DatabaseName: t.DatabaseName, Name: t.Name, CatalogId: account } },
    databaseArn(t.DatabaseName, account), `Tags of database ${t.DatabaseName} (tables take no tags)`));
}

// -- routing ---------------------------------------------------------------------------------
async function route() {
  if (state.mode === "sigv4" && !state.session) { showSignIn(); return; }
  const [path, search] = location.hash.replace(/^#/, "").split("?");
  const query = new URLSearchParams(search || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const started = performance.now();
  $("view").dataset.ready = "false";
  if (parts[0] === "db" && parts[1]) await viewDatabase(parts[1]);
  else if (parts[0] === "t" && parts[2]) await viewTable(parts[1], parts[2], parts[3] || "overview", query);
  else await viewDatabases();
  $("view").dataset.ready = "true";
  $("view").dataset.ms = String(Math.round(performance.now() - started));
  const heading = $("view").querySelector("h2");
  if (heading && document.activeElement === document.body) heading.setAttribute("tabindex", "-1");
}

async function start() {
  $("signin-form").addEventListener("submit", signIn);
  $("signout").addEventListener("click", signOut);
  window.addEventListener("hashchange", route);
  try {
    const answer = await (await fetch(new URL("health", BASE), { credentials: "omit" })).json();
    state.mode = answer.auth; state.region = answer.region; state.account = answer.account || "";
    $("health").replaceChildren("Service ", h("span", { class: `badge ${answer.status === "ok" ? "ok" : "bad"}` }, answer.status),
      " · store ", h("span", { class: `badge ${answer.store === "ok" ? "ok" : "bad"}` }, answer.store));
  } catch (err) { state.mode = "open"; $("health").textContent = `health: ${describe(err)}`; }
  if (state.mode === "sigv4") {
    const kept = sessionStorage.getItem(SESSION_KEY);
    if (kept) { state.session = JSON.parse(kept); state.region = state.session.region; $("signout").hidden = false; }
  }
  showWho();
  route();
}
document.addEventListener("DOMContentLoaded", start);
