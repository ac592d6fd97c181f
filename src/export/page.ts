import { nodeCrypto } from "../crypto.js";

/**
 * The fixed parts of an exported page: its style, its one script and the content security
 * policy that allows exactly these two (by their SHA-256), the images the page holds itself
 * (`data:`), and nothing else: no other script, no style attribute, no image from anywhere, no
 * font, frame or connection, no form target, no base URL. The page
 * holds no value in either, so their hashes never change with the session.
 */

export const style = `
:root{color-scheme:light dark;--fg:#1d2125;--muted:#5f6b76;--bg:#fff;--panel:#f5f7f9;--line:#d8dee4;
--accent:#2f6feb;--deny:#b42318;--deny-bg:#fdecea;--err:#9a6700;--err-bg:#fff5d6;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9aa7b4;--bg:#0f1419;--panel:#161c23;
--line:#2d3640;--accent:#6ea1ff;--deny:#ff8f86;--deny-bg:#3a1614;--err:#e3b341;--err-bg:#33290e;--ok:#56d364}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:64rem;padding:1.5rem;font:15px/1.5 system-ui,sans-serif;color:var(--fg);
background:var(--bg);display:flex;flex-direction:column}
header.session{order:1}#summary{order:2}.controls{order:3}main{order:4}
h1{font-size:1.4rem;margin:0 0 .5rem}h2{font-size:1.1rem;margin:0 0 .4rem}
h3,h4{font-size:1rem;margin:0 0 .4rem}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{margin:.3rem 0;padding:.6rem .8rem;background:var(--panel);border:1px solid var(--line);
border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
#summary{border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem;margin:1rem 0;background:var(--panel)}
.entry{margin:.8rem 0;padding:.7rem 1rem;border-left:4px solid var(--line);overflow-wrap:anywhere}
.text{white-space:pre-wrap}
.prompt{border-color:var(--accent);background:var(--panel)}
.answer{border-color:var(--ok)}
.call{margin-left:1.5rem}
.call.denied{border-color:var(--deny);background:var(--deny-bg)}
.call.error,.call.missing{border-color:var(--err);background:var(--err-bg)}
.mark{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;font-weight:600;
text-transform:uppercase;letter-spacing:.03em}
.mark.denied{color:#fff;background:var(--deny)}.mark.error,.mark.missing{color:#000;background:var(--err)}
.num,.by,.skill,.usage,.note,.changed{color:var(--muted);font-weight:normal;font-size:.9rem}
.retry,.usage-only,.unreadable{color:var(--muted)}
.compaction{border-color:var(--accent);border-left-style:double}
.thinking{margin:.8rem 0 -.4rem;padding:0 1rem;color:var(--muted)}
summary{cursor:pointer;color:var(--muted)}
.controls{position:sticky;top:0;z-index:1;display:flex;gap:.5rem;align-items:center;padding:.5rem 0;
background:var(--bg)}
.controls input{flex:1;padding:.35rem .6rem;font:inherit;color:inherit;background:var(--panel);
border:1px solid var(--line);border-radius:6px}
.controls button{padding:.35rem .7rem;font:inherit;color:inherit;background:var(--panel);
border:1px solid var(--line);border-radius:6px;cursor:pointer}
[hidden]{display:none!important}
.md-dim{color:var(--muted)}
.diff .file{color:var(--muted)}.diff .hunk{color:var(--accent)}.diff .del{color:var(--deny)}.diff .add{color:var(--ok)}
figure.image{margin:.4rem 0}figure.image img{max-width:100%;height:auto;border:1px solid var(--line)}
`;

/**
 * Adds a search box that shows only the entries holding the words typed (opening the folded
 * parts that hold them), and buttons that unfold or fold every folded part. Without it the page
 * reads the same, every part folding on its own.
 */
export const script = `
(() => {
  const main = document.querySelector("main");
  if (!main) return;
  const entries = Array.from(main.children);
  const folds = () => Array.from(main.querySelectorAll("details"));
  const bar = document.createElement("div");
  bar.className = "controls";
  const search = document.createElement("input");
  search.type = "search";
  search.placeholder = "Search this session";
  search.setAttribute("aria-label", "Search this session");
  const count = document.createElement("span");
  count.className = "note";
  const button = (label, open) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", () => { for (const d of folds()) d.open = open; });
    return b;
  };
  search.addEventListener("input", () => {
    const words = search.value.trim().toLowerCase();
    let shown = 0;
    for (const entry of entries) {
      const hit = words === "" || entry.textContent.toLowerCase().includes(words);
      entry.hidden = !hit;
      if (!hit) continue;
      shown++;
      if (words === "") continue;
      for (const d of entry.querySelectorAll("details"))
        if (d.textContent.toLowerCase().includes(words)) d.open = true;
    }
    count.textContent = words === "" ? "" : shown + " of " + entries.length + " entries";
  });
  bar.append(search, count, button("Unfold all", true), button("Fold all", false));
  document.body.insertBefore(bar, main);
})();
`;

const sha256 = (text: string) =>
  `'sha256-${nodeCrypto().createHash("sha256").update(text).digest("base64")}'`;

export const contentSecurityPolicy = [
  "default-src 'none'",
  `script-src ${sha256(script)}`,
  `style-src ${sha256(style)}`,
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");
