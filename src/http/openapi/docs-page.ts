/**
 * A self-contained documentation page for /openapi.json: no CDN, no external fonts, works offline.
 * It renders tags, operations, parameters, request bodies and responses with their schemas.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>DTE API reference</title>
<style>
body{margin:0;font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2330;display:flex}
nav{width:260px;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f4f6f9;border-right:1px solid #dde2ea;padding:16px}
nav a{display:block;color:#1d2330;text-decoration:none;padding:2px 0;font-size:13px}nav h3{font-size:12px;text-transform:uppercase;color:#68738a;margin:14px 0 4px}
main{flex:1;padding:24px 40px;max-width:1000px}
.op{border:1px solid #dde2ea;border-radius:8px;margin:14px 0;overflow:hidden}.op summary{cursor:pointer;padding:10px 14px;display:flex;gap:12px;align-items:center}
.m{font:700 12px monospace;padding:3px 8px;border-radius:4px;color:#fff;min-width:52px;text-align:center}
.get{background:#2f7bd9}.post{background:#2e9e5b}.put{background:#c98a12}.patch{background:#8a5cc9}.delete{background:#d2463c}
.path{font-family:monospace;font-size:14px}.body{padding:4px 16px 14px;border-top:1px solid #eef1f5}
pre{background:#0f1623;color:#d8e1f0;padding:10px;border-radius:6px;overflow:auto;font-size:12px}
table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #eef1f5;padding:4px 6px;text-align:left;vertical-align:top}
code{background:#eef1f5;padding:1px 4px;border-radius:3px}.desc{white-space:pre-wrap}
</style></head><body><nav id="nav">Loading…</nav><main id="main">Loading <code>/openapi.json</code>…</main>
<script>
const esc=s=>String(s??"").replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
let doc;
const deref=s=>{let n=0;while(s&&s.$ref&&n++<20){s=doc.components.schemas[s.$ref.split("/").pop()]}return s||{}};
function example(s,depth){s=deref(s);if(depth>6)return null;if(s.example!==undefined)return s.example;
 if(s.anyOf||s.oneOf)return example((s.anyOf||s.oneOf)[0],depth+1);
 if(s.enum)return s.enum[0];if(s.const!==undefined)return s.const;
 const t=Array.isArray(s.type)?s.type.find(x=>x!=="null"):s.type;
 if(t==="object"||s.properties){const o={};for(const[k,v]of Object.entries(s.properties||{}))o[k]=example(v,depth+1);return o}
 if(t==="array")return[example(s.items||{},depth+1)];if(t==="integer"||t==="number")return s.minimum??0;if(t==="boolean")return true;
 if(s.format==="binary")return"<file>";return s.format==="date"?"2026-11-22":"string"}
function fields(s,prefix,rows,depth){s=deref(s);if(depth>5)return rows;
 for(const[k,v0]of Object.entries(s.properties||{})){const v=deref(v0);const req=(s.required||[]).includes(k);
  const t=v.enum?"enum: "+v.enum.join(" | "):(Array.isArray(v.type)?v.type.join("|"):v.type||(v.anyOf?"one of":""));
  const lim=[v.minLength!=null&&"min length "+v.minLength,v.maxLength!=null&&"max length "+v.maxLength,v.minimum!=null&&"≥ "+v.minimum,v.maximum!=null&&"≤ "+v.maximum,v.pattern&&"pattern "+v.pattern,v.format&&v.format].filter(Boolean).join(", ");
  rows.push("<tr><td><code>"+esc(prefix+k)+"</code>"+(req?" *":"")+"</td><td>"+esc(t)+"</td><td>"+esc(lim)+"</td><td class=desc>"+esc(v.description||"")+"</td></tr>");
  if(v.properties)fields(v,prefix+k+".",rows,depth+1);if(v.type==="array"&&v.items)fields(v.items,prefix+k+"[].",rows,depth+1)}
 return rows}
function schemaBlock(s){const rows=fields(s,"",[],0);return(rows.length?"<table><tr><th>field</th><th>type</th><th>limits</th><th>description</th></tr>"+rows.join("")+"</table>":"")+"<pre>"+esc(JSON.stringify(example(s,0),null,2))+"</pre>"}
fetch("/openapi.json").then(r=>r.json()).then(d=>{doc=d;const byTag={};
 for(const[p,item]of Object.entries(d.paths))for(const[m,op]of Object.entries(item)){const t=(op.tags||["Other"])[0];(byTag[t]=byTag[t]||[]).push({p,m,op})}
 let nav="<b>"+esc(d.info.title)+" "+esc(d.info.version)+"</b>",main="<h1>"+esc(d.info.title)+" <small>"+esc(d.info.version)+"</small></h1><div class=desc>"+esc(d.info.description)+"</div>";
 for(const tag of d.tags.map(t=>t.name).concat(Object.keys(byTag).filter(t=>!d.tags.some(x=>x.name===t)))){const ops=byTag[tag];if(!ops)continue;
  const id="tag-"+tag.replace(/\\W+/g,"-");nav+="<h3><a href='#"+id+"'>"+esc(tag)+"</a></h3>";main+="<h2 id='"+id+"'>"+esc(tag)+"</h2>";
  for(const{p,m,op}of ops){nav+="<a href='#"+id+"'>"+m.toUpperCase()+" "+esc(p)+"</a>";
   let b="<p class=desc>"+esc(op.description||"")+"</p>";
   if(op.security&&op.security.length)b+="<p>Requires <code>X-Api-Key</code>.</p>";
   if(op.parameters&&op.parameters.length){b+="<h4>Parameters</h4><table>"+op.parameters.map(x=>"<tr><td><code>"+esc(x.name)+"</code></td><td>"+esc(x.in)+(x.required?" *":"")+"</td><td class=desc>"+esc((x.description||"")+" "+(x.schema&&x.schema.enum?x.schema.enum.join(" | "):""))+"</td></tr>").join("")+"</table>"}
   if(op.requestBody){for(const[ct,c]of Object.entries(op.requestBody.content||{}))b+="<h4>Request body <code>"+esc(ct)+"</code></h4>"+schemaBlock(c.schema)}
   b+="<h4>Responses</h4>";for(const[st,r]of Object.entries(op.responses||{})){b+="<p><b>"+esc(st)+"</b> "+esc(r.description)+"</p>";for(const c of Object.values(r.content||{}))b+=schemaBlock(c.schema)}
   main+="<details class=op><summary><span class='m "+m+"'>"+m.toUpperCase()+"</span><span class=path>"+esc(p)+"</span><span>"+esc(op.summary||"")+"</span></summary><div class=body>"+b+"</div></details>"}}
 document.getElementById("nav").innerHTML=nav;document.getElementById("main").innerHTML=main});
</script></body></html>`;
