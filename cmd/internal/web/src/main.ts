// The dashboard: sign in with an API key, then a live tree of the key's
// scope followed through one WatchNode stream, and a panel per node.
import { forgetKey, isAbort, isAuthError, message, signIn, storedKey, storeKey, type Session } from "./api";
import { panel, type Panel } from "./detail";
import { byId } from "./dom";
import { draw, Tree } from "./tree";

interface App {
  s: Session;
  tree: Tree;
  selected?: bigint;
  panel?: Panel;
  stop: AbortController;
}

let app: App | undefined;

const live = (text: string) => (byId("live").textContent = text);

async function start(key: string): Promise<void> {
  const err = byId("signin-error");
  err.textContent = "";
  let s: Session;
  try {
    s = await signIn(key);
  } catch (e) {
    forgetKey();
    err.textContent = message(e);
    byId("signin").hidden = false;
    return;
  }
  storeKey(key);
  byId("signin").hidden = true;
  byId("app").hidden = false;
  byId("signout").hidden = false;
  byId("who").textContent = s.tenant ? `tenant ${s.tenant}` : "admin";
  app = { s, tree: new Tree(s.scope), stop: new AbortController() };
  const a = app;
  await load(a, a.s.scope);
  select(a, a.s.scope, false);
  void follow(a);
  void beat(a);
}

// load reads node id and its children into the tree.
async function load(a: App, id: bigint): Promise<void> {
  const res = await a.s.api.getNode({ nodeId: id, includeChildren: true });
  if (res.node) a.tree.put(res.node);
  for (const c of res.children) a.tree.put(c);
  redraw(a);
}

function redraw(a: App): void {
  draw(a.tree, byId("tree"), a.selected);
}

// follow keeps the tree current from one WatchNode stream with usage,
// watching again (and reading the tree again) when it breaks.
async function follow(a: App): Promise<void> {
  while (!a.stop.signal.aborted) {
    try {
      live("live");
      for await (const m of a.s.api.watchNode({ nodeId: a.s.scope, subtree: true, usage: true }, { signal: a.stop.signal })) {
        const n = a.tree.apply(m);
        if (!n) continue;
        redraw(a);
        if (n.id === a.selected) a.panel?.refresh();
      }
    } catch (e) {
      if (isAbort(e) || a.stop.signal.aborted) return;
      if (isAuthError(e)) return signOut("The session ended; sign in again.");
      live("reconnecting…");
    }
    await new Promise((r) => setTimeout(r, 1000));
    for (const id of [...a.tree.nodes.values()].filter((n) => n.open).map((n) => n.id)) {
      await load(a, id).catch(() => undefined);
    }
  }
}

// beat renews the session every third of its TTL.
async function beat(a: App): Promise<void> {
  while (!a.stop.signal.aborted) {
    await new Promise((r) => setTimeout(r, a.s.ttlMs / 3));
    if (a.stop.signal.aborted) return;
    try {
      await a.s.api.heartbeat({});
    } catch (e) {
      if (isAuthError(e)) return signOut("The session ended; sign in again.");
    }
  }
}

function select(a: App, id: bigint, focus: boolean): void {
  if (a.selected !== id || !a.panel) {
    a.selected = id;
    a.panel = panel(a.s.api, a.tree, id);
    byId("detail").replaceChildren(a.panel.el);
  }
  redraw(a);
  if (focus) byId("tree").querySelector<HTMLElement>(`li[data-id="${id}"] > .row`)?.focus();
}

function signOut(why: string): void {
  app?.stop.abort();
  app = undefined;
  forgetKey();
  byId("app").hidden = true;
  byId("signout").hidden = true;
  byId("who").textContent = "";
  live("");
  byId("signin").hidden = false;
  byId("signin-error").textContent = why;
}

// onKey moves through the tree: ↑↓ rows, → open, ← close or go up, Enter
// details, x explain.
async function onKey(ev: KeyboardEvent): Promise<void> {
  const a = app;
  const row = (ev.target as HTMLElement).closest("li[data-id]");
  if (!a || !row) return;
  const id = BigInt(row.getAttribute("data-id")!);
  const n = a.tree.nodes.get(id)!;
  const rows = a.tree.visible();
  const at = rows.indexOf(id);
  const move = (to: bigint | undefined) => to !== undefined && select(a, to, true);
  switch (ev.key) {
    case "ArrowDown":
      move(rows[at + 1]);
      break;
    case "ArrowUp":
      move(rows[at - 1]);
      break;
    case "ArrowRight":
      n.open = true;
      await load(a, id);
      select(a, id, true);
      break;
    case "ArrowLeft":
      if (n.open && id !== a.tree.root) {
        n.open = false;
        select(a, id, true);
      } else if (id !== a.tree.root) move(n.parent);
      break;
    case "Enter":
      select(a, id, true);
      break;
    case "x":
      select(a, id, true);
      await a.panel?.explain();
      break;
    default:
      return;
  }
  ev.preventDefault();
}

function onClick(ev: MouseEvent): void {
  const a = app;
  const row = (ev.target as HTMLElement).closest("li[data-id]");
  if (!a || !row) return;
  ev.stopPropagation();
  const id = BigInt(row.getAttribute("data-id")!);
  const n = a.tree.nodes.get(id)!;
  if (a.selected === id && id !== a.tree.root) {
    n.open = !n.open;
    if (n.open) void load(a, id);
  }
  select(a, id, true);
}

byId("signin").addEventListener("submit", (ev) => {
  ev.preventDefault();
  void start(byId<HTMLInputElement>("key").value.trim());
});
byId("signout").addEventListener("click", () => signOut(""));
byId("tree").addEventListener("keydown", (ev) => void onKey(ev));
byId("tree").addEventListener("click", onClick);
const saved = storedKey();
if (saved) void start(saved);
