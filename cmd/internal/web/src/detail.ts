// The panel of the selected node: its use, a chart of the last minutes, the
// explanation of anything waiting or refused, and edits.
import { create } from "@bufbuild/protobuf";
import { DurationSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Api } from "./api";
import { message } from "./api";
import { h, svg } from "./dom";
import { CapKind, DefaultsSchema, EstimateBasis, NodeState, RateSchema, type ExplainResponse, type NodeInfo } from "./gen/governor/v1/governor_pb";
import { bars, historyMs, stateWord, type Tree } from "./tree";

const colors = ["#2f6fdb", "#c28100", "#1a7f37", "#8e44ad", "#c8322d", "#0f766e"];

// chart draws each series of a node's samples over the last minutes.
export function chart(t: Tree, id: bigint): Element {
  const samples = t.history.get(id) ?? [];
  const box = svg("svg", { class: "chart", viewBox: "0 0 300 90", preserveAspectRatio: "none", role: "img", "aria-label": "use over the last 5 minutes" });
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.used)))].sort();
  const now = Date.now();
  names.forEach((name, i) => {
    const top = Math.max(1, ...samples.map((s) => s.used[name] ?? 0));
    const pts = samples.map((s) => `${(300 - ((now - s.t) / historyMs) * 300).toFixed(1)},${(86 - ((s.used[name] ?? 0) / top) * 82).toFixed(1)}`);
    if (pts.length === 1) pts.push(`300,${pts[0].split(",")[1]}`);
    box.append(svg("polyline", { points: pts.join(" "), stroke: colors[i % colors.length] }));
  });
  const legend = h("div", { class: "legend" }, names.length ? names.map((n, i) => h("span", { style: `color:${colors[i % colors.length]}` }, "■ " + n + " ")) : "nothing used yet");
  return h("div", null, box, legend);
}

const clock = (ts: Timestamp | undefined): string => (ts ? new Date(Number(ts.seconds) * 1000 + ts.nanos / 1e6).toISOString().slice(11, 23) + " UTC" : "");
const basisWords: Record<number, string> = {
  [EstimateBasis.MAX_HOLD]: "max hold",
  [EstimateBasis.DEADLINE]: "deadline",
  [EstimateBasis.SESSION_EXPIRY]: "session expiry",
  [EstimateBasis.RATE_REFILL]: "rate refill",
};
const kindWords: Record<number, string> = { [CapKind.QUOTA]: "quota", [CapKind.RATE]: "rate cap", [CapKind.LIMIT]: "limit" };

// explanation lists what an Explain answer says, one item a line.
export function explanation(x: ExplainResponse): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (x.caps.length === 0 && !x.waiting) return [h("li", { class: "none" }, `${x.name}: nothing binds; it can go ahead now`)];
  for (const c of x.caps) {
    const kind = kindWords[c.kind] ?? "cap";
    if (c.shared) {
      out.push(h("li", { class: "cap shared", "data-kind": kind }, `a shared ${kind} above your scope binds`));
      continue;
    }
    let text = `${kind} on "${c.nodeName}" #${c.nodeId}: `;
    if (c.kind === CapKind.QUOTA) text += `${c.used} of ${c.limit} used`;
    else if (c.kind === CapKind.RATE) text += c.never ? `limit ${c.limit}, never admits the amount at once` : `${c.used} of ${c.limit} used, admits it again at ${clock(c.refill)}`;
    else text += `${c.used} of ${c.limit} slots held`;
    const holders = c.holders.map((l) => h("li", { class: "holder" }, `lease ${l.leaseId} on "${l.nodeName}" #${l.nodeId}` + (l.endsBy ? ` must end by ${clock(l.endsBy)} (${basisWords[l.basis]})` : ", nothing bounds its end")));
    if (c.moreHolders > 0n) holders.push(h("li", { class: "holder" }, `and ${c.moreHolders} more`));
    out.push(h("li", { class: "cap", "data-kind": kind, "data-node": String(c.nodeId) }, text, holders.length ? h("ul", null, holders) : null));
  }
  const w = x.waiting;
  if (w) {
    const rot = w.rotation > 0n ? `number ${w.rotation} of ${w.tenants} in the fair rotation` : "out of the fair rotation for now";
    out.push(h("li", { class: "wait" }, `${w.waiters} queued here; the first is number ${w.place} in its tenant's queue${w.parked ? ", parked behind a full limit" : ""}; its tenant (weight ${w.weight}) is ${rot}`));
  }
  const e = x.estimate;
  const eta = e?.now ? "now" : e?.at ? `by ${clock(e.at)}, resting on ${e.basis.map((b) => basisWords[b.kind]).join(", ")}` : `unknown: ${e?.unknown ?? ""}`;
  out.push(h("li", { class: "eta" }, "estimate: " + eta));
  return out;
}

// parsePeriod reads 500ms, 30s, 5m or 2h.
function parsePeriod(s: string): { seconds: bigint; nanos: number } | undefined {
  const m = /^(\d+)(ms|s|m|h)$/.exec(s.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2] as "ms" | "s" | "m" | "h"];
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
}

// whole reads a field that must be a whole number; empty is undefined.
function whole(field: string, s: string): bigint | undefined {
  if (s.trim() === "") return undefined;
  if (!/^-?\d+$/.test(s.trim())) throw new Error(`${field}: "${s}" is not a whole number; leave it empty to remove the cap`);
  return BigInt(s.trim());
}

export interface Panel {
  el: HTMLElement;
  refresh(): void; // draw the node's use again
  explain(names?: string[]): Promise<void>;
}

// panel builds the details of node id. Edits go through api; their answers
// (the API's own validation messages) are shown under the forms.
export function panel(api: Api, t: Tree, id: bigint): Panel {
  const node = () => t.nodes.get(id);
  const head = h("h2", null);
  const use = h("div", null);
  const graph = h("div", null);
  const names = h("select", { id: "explain-name", "aria-label": "resource or class to explain" });
  // carried lists the resources and classes of the node, for the explain
  // choice, keeping the one chosen.
  const carried = () => {
    const info = node()?.info;
    const all = [...new Set([...Object.keys(info?.resources ?? {}), ...Object.keys(info?.classes ?? {})])].sort();
    if (all.join(" ") !== [...names.options].map((o) => o.value).join(" ")) {
      const current = names.value;
      names.replaceChildren(...all.map((n) => h("option", { value: n, selected: n === current }, n)));
    }
    return all;
  };
  const refresh = () => {
    const n = node();
    head.textContent = `${n?.name ?? ""} #${id} · ${n ? stateWord(n.state) : ""}`;
    use.replaceChildren(bars(n?.info));
    graph.replaceChildren(chart(t, id));
    carried();
  };
  const ok = h("p", { id: "edit-ok", class: "ok", role: "status" });
  const bad = h("p", { id: "edit-error", class: "error", role: "alert" });
  // run makes one edit and shows what it did, or the API's answer.
  const run = async (f: () => Promise<string>) => {
    ok.textContent = bad.textContent = "";
    try {
      ok.textContent = await f();
    } catch (e) {
      bad.textContent = message(e);
    }
  };
  const field = (name: string, label: string, ph = "") => h("input", { name, "aria-label": label, placeholder: ph || label, spellcheck: "false" });
  const form = (formId: string, title: string, inputs: HTMLElement[], submit: (v: Record<string, string>) => Promise<string>) => {
    const f = h("form", { id: formId, "aria-label": title }, h("strong", null, title), inputs, h("button", { type: "submit" }, "Save"));
    f.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const v = Object.fromEntries(new FormData(f).entries()) as Record<string, string>;
      void run(() => submit(v));
    });
    return f;
  };
  const quota = form("edit-quota", "Quota", [field("resource", "resource"), field("value", "quota", "units, empty removes")], async (v) => {
    await api.setQuota({ nodeId: id, resource: v.resource, value: whole("quota", v.value) });
    return `quota on ${v.resource} saved`;
  });
  const limit = form("edit-limit", "Limit", [field("class", "class"), field("value", "limit", "slots, empty removes")], async (v) => {
    await api.setLimit({ nodeId: id, class: v.class, value: whole("limit", v.value) });
    return `limit on ${v.class} saved`;
  });
  const rate = form("edit-rate", "Rate", [field("resource", "resource"), field("limit", "rate limit", "units, empty removes"), field("period", "period", "per, e.g. 1m")], async (v) => {
    const lim = whole("rate limit", v.limit);
    const period = parsePeriod(v.period || "");
    if (lim !== undefined && !period) throw new Error(`period: "${v.period}" is not a period such as 500ms, 30s, 5m or 2h`);
    const r = lim === undefined ? undefined : create(RateSchema, { limit: lim, period: create(DurationSchema, period) });
    await api.setRate({ nodeId: id, resource: v.resource, rate: r });
    return `rate on ${v.resource} saved`;
  });
  const kind = h("select", { name: "kind", "aria-label": "default kind" }, h("option", { value: "quota" }, "quota"), h("option", { value: "limit" }, "limit"));
  const defaults = form("edit-defaults", "Default for new children", [kind, field("key", "resource or class"), field("value", "default", "value, empty removes")], async (v) => {
    const d = create(DefaultsSchema, node()?.info?.defaults ?? {});
    const m = v.kind === "limit" ? d.limits : d.quotas;
    const val = whole("default", v.value);
    if (val === undefined) delete m[v.key];
    else m[v.key] = val;
    await api.setDefaults({ nodeId: id, defaults: d });
    return `default ${v.kind} on ${v.key} saved`;
  });
  const confirm = h("div", { id: "confirm", role: "alertdialog", "aria-label": "confirm cancel", hidden: true });
  const cancel = h("button", { id: "cancel", type: "button" }, "Cancel this node…");
  cancel.addEventListener("click", () => {
    const yes = h("button", { id: "confirm-yes", type: "button" }, "Yes, cancel it");
    const no = h("button", { id: "confirm-no", type: "button" }, "No");
    confirm.replaceChildren(h("p", null, `Cancel ${node()?.name ?? "#" + id} and everything under it? Its leases end and its later calls are refused.`), yes, " ", no);
    confirm.hidden = false;
    no.addEventListener("click", () => ((confirm.hidden = true), cancel.focus()));
    yes.addEventListener("click", () => {
      confirm.hidden = true;
      void run(async () => {
        await api.cancelNode({ nodeId: id, reason: "cancelled in the dashboard" });
        return `${node()?.name ?? id} cancelled`;
      });
    });
    no.focus();
  });
  const out = h("ul", { id: "explain-out", "aria-live": "polite" });
  const go = h("button", { id: "explain-go", type: "button" }, "Explain");
  // explain asks about the names given, or every resource and class of
  // the node.
  const explain = async (asked?: string[]) => {
    const all = carried();
    out.replaceChildren();
    for (const n of asked ?? all) {
      try {
        out.append(...explanation(await api.explain({ nodeId: id, name: n })));
      } catch (e) {
        out.append(h("li", { class: "error" }, `${n}: ${message(e)}`));
      }
    }
    if (out.childElementCount === 0) out.append(h("li", { class: "none" }, "It carries no resource or class: nothing binds."));
  };
  go.addEventListener("click", () => void explain(names.value ? [names.value] : undefined));
  const el = h("div", { "data-node": String(id) }, head, use,
    h("h3", null, "Use, last 5 minutes"), graph,
    h("h3", null, "Why is it waiting or refused?"), h("div", null, names, " ", go), out,
    h("h3", null, "Edit"), quota, limit, rate, defaults, cancel, confirm, ok, bad);
  refresh();
  return { el, refresh, explain };
}

export const isActive = (info: NodeInfo | undefined): boolean => info?.state === NodeState.ACTIVE;
