function (full, maxRefs, maxName) {
  const S = globalThis.__hermesd || (globalThis.__hermesd = { ids: new WeakMap(), els: new Map(), next: 0 });
  const INTERACTIVE = new Set(["button", "link", "textbox", "searchbox", "checkbox", "radio",
    "combobox", "listbox", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab",
    "slider", "spinbutton", "switch", "treeitem"]);
  const NAMED_BY_CONTENT = new Set(["button", "link", "heading", "option", "menuitem",
    "menuitemcheckbox", "menuitemradio", "tab", "treeitem", "switch", "checkbox", "radio", "cell",
    "columnheader", "rowheader"]);
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "svg"]);
  const clean = (s) => s.replace(/\s+/g, " ").trim();
  const clip = (s) => (s.length > maxName ? s.slice(0, maxName) + "…" : s);
  const quote = (s) => JSON.stringify(clip(s));

  function role(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.trim().split(/\s+/)[0];
    switch (el.localName) {
      case "a": case "area": return el.hasAttribute("href") ? "link" : "";
      case "button": return "button";
      case "input": {
        const t = (el.getAttribute("type") || "").toLowerCase();
        if (t === "hidden") return "";
        if (t === "button" || t === "submit" || t === "reset" || t === "image") return "button";
        if (t === "checkbox") return "checkbox";
        if (t === "radio") return "radio";
        if (t === "range") return "slider";
        if (t === "number") return "spinbutton";
        if (t === "search") return "searchbox";
        if (t === "file" || t === "color") return "button";
        return "textbox";
      }
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "option": return "option";
      case "summary": return "button";
      case "img": return el.getAttribute("alt") ? "img" : "";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      default: return el.isContentEditable && el.parentElement && !el.parentElement.isContentEditable ? "textbox" : "";
    }
  }

  function labelled(el) {
    const ids = el.getAttribute("aria-labelledby");
    if (!ids) return "";
    return clean(ids.split(/\s+/).map((id) => {
      const target = document.getElementById(id);
      return target ? target.textContent : "";
    }).join(" "));
  }

  function name(el, r) {
    const byIds = labelled(el);
    if (byIds) return byIds;
    const aria = el.getAttribute("aria-label");
    if (aria && aria.trim()) return clean(aria);
    const tag = el.localName;
    if (tag === "input" || tag === "textarea" || tag === "select") {
      const t = (el.getAttribute("type") || "").toLowerCase();
      if (t === "button" || t === "submit" || t === "reset") {
        return clean(el.value || (t === "reset" ? "Reset" : t === "submit" ? "Submit" : ""));
      }
      if (t === "image") return clean(el.getAttribute("alt") || el.value || "Submit");
      const labels = el.labels;
      if (labels && labels.length) {
        return clean(Array.from(labels, (l) => l.textContent).join(" "));
      }
      return clean(el.getAttribute("placeholder") || el.getAttribute("title") || "");
    }
    if (tag === "img") return clean(el.getAttribute("alt") || "");
    if (NAMED_BY_CONTENT.has(r)) {
      const text = clean(el.textContent || "");
      if (text) return text;
      const img = el.querySelector("img[alt]");
      if (img) return clean(img.getAttribute("alt"));
    }
    return clean(el.getAttribute("title") || "");
  }

  function value(el, r) {
    if (r === "textbox" || r === "searchbox" || r === "spinbutton" || r === "slider") {
      if (el.isContentEditable && !("value" in el)) return "";
      const v = String(el.value == null ? "" : el.value);
      return (el.getAttribute("type") || "").toLowerCase() === "password" && v ? "•".repeat(Math.min(v.length, 8)) : v;
    }
    if (r === "combobox" && el.localName === "select") {
      const o = el.selectedOptions && el.selectedOptions[0];
      return o ? clean(o.textContent) : "";
    }
    return "";
  }

  function props(el, r) {
    let out = "";
    if (r === "heading") {
      const aria = el.getAttribute("aria-level");
      const level = aria ? parseInt(aria, 10) : /^h[1-6]$/.test(el.localName) ? +el.localName[1] : 2;
      out += ` [level=${level}]`;
    }
    const ariaChecked = el.getAttribute("aria-checked");
    if ((r === "checkbox" || r === "radio" || r === "switch") && (el.checked || ariaChecked === "true")) out += " [checked]";
    else if (ariaChecked === "mixed" || el.indeterminate) out += " [checked=mixed]";
    if (el.getAttribute("aria-pressed") === "true") out += " [pressed]";
    if (el.getAttribute("aria-expanded") === "true" || (el.localName === "details" && el.open)) out += " [expanded]";
    if ((r === "option" && el.selected) || el.getAttribute("aria-selected") === "true") out += " [selected]";
    if (el.disabled || el.getAttribute("aria-disabled") === "true") out += " [disabled]";
    if (el.required || el.getAttribute("aria-required") === "true") out += " [required]";
    return out;
  }

  function ref(el) {
    let n = S.ids.get(el);
    if (n === undefined) {
      if (S.els.size >= maxRefs) { S.ids = new WeakMap(); S.els = new Map(); S.next = 0; }
      n = ++S.next;
      S.ids.set(el, n);
      S.els.set(n, new WeakRef(el));
    }
    return n;
  }

  const visible = new Map();
  function shows(el) {
    let v = visible.get(el);
    if (v === undefined) {
      v = el.checkVisibility({ visibilityProperty: true });
      visible.set(el, v);
    }
    return v;
  }

  let text = "";
  let elements = 0;
  const indent = (depth) => "  ".repeat(depth);
  // Depth-first, in document order: [node, depth, whether its text is already a shown name].
  const stack = document.body ? [[document.body, 0, false]] : [];
  while (stack.length) {
    const [node, depth, named] = stack.pop();
    if (node.nodeType === 3) {
      if (!full || named) continue;
      const t = clean(node.data);
      if (t && node.parentElement && shows(node.parentElement)) text += `${indent(depth)}- text ${quote(t)}\n`;
      continue;
    }
    if (node.nodeType !== 1 || SKIP.has(node.nodeName) || node.hidden || node.getAttribute("aria-hidden") === "true") continue;
    const r = role(node);
    let childDepth = depth;
    let childNamed = named;
    const interactive = INTERACTIVE.has(r);
    const candidate = interactive || r === "heading" || r === "img" || (full && r && r !== "generic" && r !== "none" && r !== "presentation");
    if (candidate && shows(node)) {
      const n = name(node, r);
      if (interactive || r === "heading" || n) {
        let line = `${indent(depth)}- ${r}`;
        if (n) line += ` ${quote(n)}`;
        const v = value(node, r);
        if (v) line += `: ${quote(v)}`;
        if (interactive) { line += ` [ref=e${ref(node)}]`; elements++; }
        text += line + props(node, r) + "\n";
        childDepth = depth + 1;
        if (n && NAMED_BY_CONTENT.has(r)) childNamed = true;
      }
    }
    if (r === "combobox" || node.localName === "textarea") continue;
    const kids = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], childDepth, childNamed]);
  }
  return [text, elements];
}
