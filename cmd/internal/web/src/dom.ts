// A few helpers to build the page without a framework.
type Attrs = Record<string, string | number | boolean | undefined>;
type Child = Node | string | null | undefined | false;

// h makes an element with attributes (on* as listeners) and children.
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null, ...kids: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const k of kids.flat()) {
    if (k !== null && k !== undefined && k !== false) el.append(k);
  }
  return el;
}

export const byId = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

// svg makes an SVG element.
export function svg(tag: string, attrs: Attrs): SVGElement {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  return el;
}
