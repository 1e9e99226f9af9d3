// The tree as the dashboard holds it: nodes read with GetNode, kept current
// by one WatchNode stream with usage, and drawn as rows with usage bars.
import { NodeState, type NodeInfo, type WatchNodeResponse } from "./gen/governor/v1/governor_pb";
import { h } from "./dom";

export interface TNode {
  id: bigint;
  parent: bigint;
  name: string;
  state: NodeState;
  info?: NodeInfo;
  kids: Set<bigint>;
  open: boolean;
}

// Sample is one reading of a node's use, for its chart.
export interface Sample {
  t: number;
  used: Record<string, number>;
}

// historyMs is how far back a node's chart reaches.
export const historyMs = 5 * 60 * 1000;

export class Tree {
  nodes = new Map<bigint, TNode>();
  history = new Map<bigint, Sample[]>();
  constructor(public root: bigint) {}

  // put records what GetNode or a usage message said of a node.
  put(info: NodeInfo): TNode {
    const n = this.ensure(info.id, info.parentId, info.name, info.state);
    n.info = info;
    this.sample(n);
    return n;
  }

  private ensure(id: bigint, parent: bigint, name: string, state: NodeState): TNode {
    let n = this.nodes.get(id);
    if (!n) {
      n = { id, parent, name, state, kids: new Set(), open: id === this.root };
      this.nodes.set(id, n);
    }
    n.name = name;
    n.state = state;
    if (id !== this.root) this.nodes.get(parent)?.kids.add(id);
    return n;
  }

  // apply takes one message of the watch: a change of state, or of use.
  // It returns the node, or undefined when it lies under no node held.
  apply(m: WatchNodeResponse): TNode | undefined {
    if (m.usage) return this.put(m.usage);
    if (m.nodeId !== this.root && !this.nodes.has(m.parentId)) return undefined;
    const n = this.ensure(m.nodeId, m.parentId, m.name, m.state);
    if (n.info) n.info.state = m.state;
    return n;
  }

  private sample(n: TNode): void {
    const used: Record<string, number> = {};
    for (const [r, u] of Object.entries(n.info?.resources ?? {})) used[r] = Number(u.used);
    for (const [c, u] of Object.entries(n.info?.classes ?? {})) used["[" + c + "]"] = Number(u.held);
    const now = Date.now();
    const list = (this.history.get(n.id) ?? []).filter((s) => now - s.t <= historyMs);
    list.push({ t: now, used });
    this.history.set(n.id, list);
  }

  // visible lists the ids of the rows drawn, in order.
  visible(): bigint[] {
    const out: bigint[] = [];
    const walk = (id: bigint) => {
      const n = this.nodes.get(id);
      if (!n) return;
      out.push(id);
      if (n.open) for (const k of sortedKids(this, n)) walk(k);
    };
    walk(this.root);
    return out;
  }
}

function sortedKids(t: Tree, n: TNode): bigint[] {
  return [...n.kids].filter((k) => t.nodes.has(k)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const stateWords: Record<number, string> = {
  [NodeState.ACTIVE]: "active",
  [NodeState.DONE]: "done",
  [NodeState.CANCELLED]: "cancelled",
  [NodeState.DEADLINE_EXCEEDED]: "past deadline",
};

export const stateWord = (s: NodeState): string => stateWords[s] ?? "unknown";

// bar draws one cap: a label, a track filled to used/limit, and the numbers.
function bar(cap: string, label: string, used: number, limit: number | undefined, text: string): HTMLElement {
  const share = limit === undefined ? 0 : limit <= 0 ? 1 : Math.min(used / limit, 1);
  const level = limit === undefined ? "" : share >= 1 ? " full" : share >= 0.8 ? " warn" : "";
  return h("div", { class: "bar" + level, "data-cap": cap, title: `${label}: ${text}` },
    h("span", { class: "label" }, label),
    h("span", { class: "track", role: "meter", "aria-label": label, "aria-valuemin": 0, "aria-valuemax": limit ?? used, "aria-valuenow": used },
      h("span", { class: "fill", style: `width:${(share * 100).toFixed(1)}%` })),
    h("span", { class: "num" }, text));
}

// bars draws every resource, rate cap and class of a node.
export function bars(info: NodeInfo | undefined): HTMLElement {
  const out = h("div", { class: "bars" });
  if (!info) return out;
  for (const r of Object.keys(info.resources).sort()) {
    const u = info.resources[r];
    const cap = u.cap === undefined ? undefined : Number(u.cap);
    out.append(bar("quota:" + r, r, Number(u.used), cap, cap === undefined ? `${u.used} used` : `${u.used} / ${cap}`));
  }
  for (const r of Object.keys(info.rates).sort()) {
    const u = info.rates[r];
    const limit = Number(u.rate?.limit ?? 0n);
    const left = Number(u.remaining);
    out.append(bar("rate:" + r, r + " rate", limit - left, limit, `${left} of ${limit} left`));
  }
  for (const c of Object.keys(info.classes).sort()) {
    const u = info.classes[c];
    const limit = u.limit === undefined ? undefined : Number(u.limit);
    let text = limit === undefined ? `${u.held} held` : `${u.held} / ${limit} held`;
    if (u.waiting > 0n) text += `, ${u.waiting} wait`;
    out.append(bar("limit:" + c, "[" + c + "]", Number(u.held), limit, text));
  }
  return out;
}

// draw renders the tree into ul, marking the selected row.
export function draw(t: Tree, ul: HTMLElement, selected: bigint | undefined): void {
  const focused = (document.activeElement as HTMLElement | null)?.closest?.("li[data-id]")?.getAttribute("data-id");
  const item = (id: bigint, level: number): HTMLElement | null => {
    const n = t.nodes.get(id);
    if (!n) return null;
    const ended = n.state !== NodeState.ACTIVE;
    const kids = n.open ? sortedKids(t, n).map((k) => item(k, level + 1)) : [];
    const hasKids = n.kids.size > 0 || Number(n.info?.childrenCount ?? 0n) > 0;
    const li = h("li", { role: "treeitem", "data-id": String(id), "aria-level": level, "aria-expanded": hasKids ? String(n.open) : undefined, "aria-selected": String(id === selected), class: ended ? "ended" : undefined },
      h("div", { class: "row" + (id === selected ? " selected" : ""), tabindex: -1 },
        h("span", { class: "name" }, (hasKids ? (n.open ? "▾ " : "▸ ") : "  ") + (n.info?.depth === 0 ? "(root)" : n.name), " ", h("small", null, "#" + id)),
        h("span", { class: "state" }, stateWord(n.state)),
        bars(n.info)),
      kids.length ? h("ul", { role: "group" }, kids) : null);
    return li;
  };
  const root = item(t.root, 1);
  ul.replaceChildren(...(root ? [root] : []));
  const want = focused ?? (selected !== undefined ? String(selected) : undefined);
  const row = want ? ul.querySelector<HTMLElement>(`li[data-id="${want}"] > .row`) : null;
  if (row) row.tabIndex = 0;
  else ul.querySelector<HTMLElement>(".row")?.setAttribute("tabindex", "0");
  if (focused && row) row.focus({ preventScroll: true });
}
